package io.lockhygiene.it.driver;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.events.EventType;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Under session pooling or direct, session locks are legitimate: every mode lets them through and
 * they keep their meaning; a lock still held when the connection is closed is reported and released.
 */
@ExtendWith(TestBedExtension.class)
class SessionAndDirectDriverTest {
    private final TestBed bed = TestBed.shared();


    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
            "DIRECT,       detect,  930001",
            "DIRECT,       rewrite, 930002",
            "DIRECT,       strict,  930003",
            "SESSION_POOL, detect,  930004",
            "SESSION_POOL, rewrite, 930005",
            "SESSION_POOL, strict,  930006",
    })
    void sessionLocksPassAndKeepTheirMeaning(Route route, String mode, long k) throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = bed.connectLockHygiene(route, "lockhygiene.mode=" + mode,
                     route == Route.SESSION_POOL ? "lockhygiene.poolMode=session" : "lockhygiene.poolMode=auto");
             Statement s = c.createStatement();
             Connection other = bed.connect(route);
             Statement o = other.createStatement()) {
            c.setAutoCommit(false);
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"));
            c.commit();
            c.setAutoCommit(true);
            assertEquals(1, bed.admin().holdersOf(k).size(), "a session lock survives COMMIT, as PostgreSQL says");
            assertFalse(bool(o, "SELECT pg_try_advisory_lock(" + k + ")"), "and excludes others");
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"), "unlock runs where the lock is");
            assertEquals(List.of(), bed.admin().holdersOf(k));
            assertEquals(List.of(), events.types(), "nothing to report");
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"DIRECT, 930011", "SESSION_POOL, 930012"})
    void aLockStillHeldAtCloseIsReportedAndReleased(Route route, long k) throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k))) {
            try (Connection c = bed.connectLockHygiene(route, "lockhygiene.poolMode=session");
                 Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + k + ")");
            }
            assertEquals(List.of(), bed.admin().awaitReleased(k, 5_000));
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
            assertTrue(events.of(EventType.LEAK_RELEASED).get(0).message().contains("returned"));
        }
    }

    @ParameterizedTest(name = "auto pool mode over {0}")
    @CsvSource({"DIRECT, false", "TRANSACTION_POOL, true", "SESSION_POOL, true"})
    void autoRecognisesAPoolerFromTheClient(Route route, boolean pooler) throws Exception {
        long k = 930_020 + route.ordinal();
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = bed.connectLockHygiene(route, "lockhygiene.mode=detect"); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            assertEquals(pooler ? 0 : 1, bed.admin().holdersOf(k).size());
            assertEquals(pooler, !events.of(EventType.SESSION_LOCK_CALL).isEmpty());
        } finally {
            bed.admin().terminateHoldersOf(k);
        }
    }
}
