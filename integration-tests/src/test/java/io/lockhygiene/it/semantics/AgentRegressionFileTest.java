package io.lockhygiene.it.semantics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 12: PostgreSQL's advisory_lock.sql through the agent. An unchanged program (plain
 * {@code jdbc:postgresql:} URL, no LockHygiene on its class path) runs the file through the
 * transaction-mode PgBouncer with {@code -javaagent:lockhygiene-agent.jar=mode=emulate}; every statement's
 * answer must equal direct PostgreSQL's.
 */
@ExtendWith(TestBedExtension.class)
class AgentRegressionFileTest {
    private static final Path AGENT = Paths.get(System.getProperty("testbed.agentJar", "../agent/target/lockhygiene-agent.jar"));
    private final TestBed bed = TestBed.shared();

    private static String withoutLockHygiene() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !(e.contains("driver" + File.separator + "target") || e.contains("lockhygiene-driver")))
                .collect(Collectors.joining(File.pathSeparator));
    }

    @ParameterizedTest(name = "{0} through {1}")
    @MethodSource("io.lockhygiene.it.semantics.AdvisoryRegressionFileTest#stylesAndPoolers")
    void theAgentAnswersAsPostgreSqlDoes(AdvisoryRegressionFileTest.Style style, Route pooler) throws Exception {
        List<String> reference;
        try (Connection direct = bed.connect(Route.DIRECT)) {
            reference = AdvisoryRegressionFileTest.run(direct, style);
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-javaagent:" + AGENT.toAbsolutePath() + "=mode=emulate",
                "-cp", withoutLockHygiene(), RegressionFileMain.class.getName(), bed.url(pooler),
                bed.endpoints().user(), bed.endpoints().password(), style.name()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out);
        assertTrue(out.contains("GUARDED io.lockhygiene"), "the agent guards the unchanged program's connection:\n" + out);
        List<String> ours = out.lines().filter(l -> l.startsWith("LINE ")).map(l -> l.substring(5))
                .collect(Collectors.toList());
        assertEquals(reference.size(), ours.size(), out);
        for (int i = 0; i < reference.size(); i++) {
            assertEquals(reference.get(i), ours.get(i), "statement " + (i + 1) + " (" + style + ") through the agent");
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "nothing left held");
    }
}
