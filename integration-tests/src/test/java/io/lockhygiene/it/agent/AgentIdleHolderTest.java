package io.lockhygiene.it.agent;

import static io.lockhygiene.it.agent.AgentRuns.AGENT;
import static io.lockhygiene.it.agent.AgentRuns.command;
import static io.lockhygiene.it.agent.AgentRuns.java;
import static io.lockhygiene.it.agent.AgentRuns.serviceClassPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Issue 44 through the agent: an unchanged pooled service's holder closes its sessions while the service idles. */
@ExtendWith(TestBedExtension.class)
class AgentIdleHolderTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void anIdleServiceUnderTheAgentKeepsNoHolderSession() throws Exception {
        List<String> cmd = command(java(), AGENT, "mode=emulate,holderLinger=2s");
        cmd.addAll(List.of("-cp", serviceClassPath(false), IdleServiceMain.class.getName(),
                bed.url(Route.PREPARED_TRANSACTION_POOL), bed.endpoints().user(), bed.endpoints().password(), "948101"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        StringBuilder out = new StringBuilder();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
             OutputStream in = p.getOutputStream()) {
            String line;
            while ((line = r.readLine()) != null && !line.startsWith("IDLE")) {
                out.append(line).append('\n');
            }
            assertEquals("IDLE jobs=20", line, out.toString());
            assertTrue(bed.admin().sessionsNamed("lockhygiene lock holder") >= 1, "the holder's session lingers a while");
            Eventually.until("the service's holder closed its sessions", Duration.ofSeconds(10),
                    () -> bed.admin().sessionsNamed("lockhygiene lock holder") == 0);
            in.write("go\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            while ((line = r.readLine()) != null && !line.startsWith("RESULT")) {
                out.append(line).append('\n');
            }
            assertEquals("RESULT jobs=20", line, "the next burst runs as the first:\n" + out);
        } finally {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS) || !p.destroyForcibly().isAlive());
        }
    }
}
