package io.lockhygiene.it.driver;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 14, item 7: an unlock that ran on another session than its lock returns false with PostgreSQL's
 * "you don't own a lock"; every mode reports it, with where this process took the key.
 */
@ExtendWith(TestBedExtension.class)
class UnlockElsewhereTest {
    private static final long KEY = 981_001;
    private final TestBed bed = TestBed.shared();

    @AfterEach
    void cleanUp() throws SQLException {
        bed.admin().terminateHoldersOf(KEY);
        bed.admin().terminateHoldersOf(KEY + 1);
    }


    @Test
    void controlPlainPgjdbcUnlockOnAnotherSessionFailsWithOnlyAWarning() throws Exception {
        try (Connection a = bed.connect(Route.DIRECT); Connection b = bed.connect(Route.DIRECT);
             Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            assertTrue(bool(sa, "SELECT pg_try_advisory_lock(" + KEY + ")"));
            assertFalse(bool(sb, "SELECT pg_advisory_unlock(" + KEY + ")"), "the unlock ran elsewhere");
            assertTrue(sb.getWarnings().getMessage().startsWith("you don't own a lock"));
        }
    }

    @Test
    void everyModeReportsItWithWhereTheKeyWasTaken() throws Exception {
        for (String mode : List.of("detect", "rewrite", "emulate")) {
            try (EventRecorder events = EventRecorder.all();
                 Connection a = bed.connectLockHygiene(Route.DIRECT, "lockhygiene.mode=" + mode);
                 Connection b = bed.connectLockHygiene(Route.DIRECT, "lockhygiene.mode=" + mode);
                 Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
                assertTrue(bool(sa, "SELECT pg_try_advisory_lock(" + KEY + ")"));
                assertFalse(bool(sb, "SELECT pg_advisory_unlock(" + KEY + ")"), mode + ": PostgreSQL's answer stands");
                assertTrue(sb.getWarnings().getMessage().startsWith("you don't own a lock"), "and its warning");
                List<LockHygieneEvent> reported = events.of(EventType.UNLOCK_NOT_HELD);
                assertEquals(1, reported.size(), mode + ": " + events.types());
                String message = reported.get(0).message();
                assertTrue(message.contains("This process took that key with pg_try_advisory_lock at "), message);
                assertTrue(java.util.Arrays.stream(reported.get(0).takenAt().getStackTrace()).anyMatch(
                        f -> f.getMethodName().equals("everyModeReportsItWithWhereTheKeyWasTaken")),
                        "the stack of the unlock's own call");
                assertTrue(bool(sa, "SELECT pg_advisory_unlock(" + KEY + ")"), "the right session can");
            }
        }
    }

    @Test
    void throughTheTransactionPoolerDetectSaysTheLockWasOnAnotherServer() throws Exception {
        try (EventRecorder events = EventRecorder.all();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=detect");
             Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + (KEY + 1) + ")"));
            // detect released the autocommit lock at its statement's end: the unlock finds nothing
            assertFalse(bool(s, "SELECT pg_advisory_unlock(" + (KEY + 1) + ")"));
            assertEquals(1, events.of(EventType.UNLOCK_NOT_HELD).size(), events.types().toString());
        }
    }
}
