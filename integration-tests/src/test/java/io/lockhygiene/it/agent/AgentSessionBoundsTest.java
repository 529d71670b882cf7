package io.lockhygiene.it.agent;

import static io.lockhygiene.it.agent.AgentRuns.AGENT;
import static io.lockhygiene.it.agent.AgentRuns.command;
import static io.lockhygiene.it.agent.AgentRuns.java;
import static io.lockhygiene.it.agent.AgentRuns.run;
import static io.lockhygiene.it.agent.AgentRuns.serviceClassPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Issue 43 through the agent: an unchanged service's SET lock_timeout / statement_timeout bound its emulated wait. */
@ExtendWith(TestBedExtension.class)
class AgentSessionBoundsTest {
    private final TestBed bed = TestBed.shared();

    /** The SETs these tests send through the poolers in autocommit stay on pooled servers: put them back. */
    @org.junit.jupiter.api.AfterEach
    void resetPooledServers() throws Exception {
        bed.admin().resetTransactionPoolServers(Route.TRANSACTION_POOL);
        bed.admin().resetTransactionPoolServers(Route.PREPARED_TRANSACTION_POOL);
    }

    private AgentRuns.Run service(String agentOptions, Route route, long key, String setup) throws Exception {
        List<String> cmd = command(java(), AGENT, agentOptions);
        cmd.addAll(List.of("-cp", serviceClassPath(false), BoundedLockMain.class.getName(), bed.url(route),
                bed.endpoints().user(), bed.endpoints().password(), Long.toString(key), setup));
        return run(cmd);
    }

    @Test
    void aServicesOwnBoundsEndItsEmulatedWaitAsOnPostgres() throws Exception {
        long key = 945_001;
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + key + ")");
            for (String[] c : new String[][] {{"SET lock_timeout = '300ms'", "55P03"},
                    {"SET statement_timeout = '300ms'", "57014"}}) {
                AgentRuns.Run reference = service(null, Route.DIRECT, key, c[0]);
                assertTrue(reference.result().contains("state=" + c[1]), reference.output());
                AgentRuns.Run ours = service("mode=emulate", Route.TRANSACTION_POOL, key, c[0]);
                assertTrue(ours.result().contains("state=" + c[1]), ours.output());
                int millis = ours.number("millis");
                assertTrue(millis >= 290 && millis < reference.number("millis") + 250,
                        "ended when PostgreSQL's did: " + ours.result() + " / " + reference.result());
                String words = c[1].equals("55P03") ? "lock timeout" : "statement timeout";
                assertTrue(ours.result().contains("canceling statement due to " + words), ours.result());
            }
            o.execute("SELECT pg_advisory_unlock_all()");
        }
        assertEquals(List.of(), bed.admin().holdersOf(key));
    }
}
