package io.lockhygiene.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Proves the bed is real, with plain pgjdbc: behind transaction pooling a session advisory lock outlives
 * the client that took it and is inherited by whoever lands on that backend; through session pooling
 * (DISCARD ALL on release) or direct (the backend exits) it does not.
 */
@ExtendWith(TestBedExtension.class)
class ControlBedTest {

    @Test
    void transactionPoolingLeaksASessionLockPastClose(TestBed bed) throws Exception {
        long key = 910_001L;
        int takenOn;
        try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            takenOn = intOf(s, "SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(" + key + ")) t");
        }
        try {
            List<Integer> holders = bed.admin().holdersOf(key);
            assertEquals(List.of(takenOn), holders,
                    "the lock must still be held by the backend it was taken on after its client closed");

            // A later client: pg_try_advisory_lock is true exactly on the inheriting backend (locks stack).
            boolean sawInheritingBackend = false;
            for (int i = 0; i < 20; i++) {
                try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + key + "), pg_backend_pid()")) {
                    rs.next();
                    boolean got = rs.getBoolean(1);
                    int pid = rs.getInt(2);
                    assertEquals(pid == takenOn, got, "try-lock result on backend " + pid);
                    sawInheritingBackend |= got;
                }
            }
            assertTrue(sawInheritingBackend, "some later client should have landed on the inheriting backend");
            assertEquals(List.of(takenOn), bed.admin().holdersOf(key), "the stacked locks stay on that backend");
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }

    @Test
    void sessionPoolingReleasesTheLockWhenTheClientCloses(TestBed bed) throws Exception {
        assertNoLeakPastClose(bed, Route.SESSION_POOL, 910_002L);
    }

    @Test
    void directConnectionReleasesTheLockWhenTheClientCloses(TestBed bed) throws Exception {
        assertNoLeakPastClose(bed, Route.DIRECT, 910_003L);
    }

    private static void assertNoLeakPastClose(TestBed bed, Route route, long key) throws Exception {
        try (Connection c = bed.connect(route); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            assertFalse(bed.admin().holdersOf(key).isEmpty(), "the lock is held while the client is connected");
        }
        try {
            // Release happens when PgBouncer resets the server (or the backend exits): moments after close.
            assertEquals(List.of(), bed.admin().awaitReleased(key, 10_000), route.label() + " must not leak past close");
            try (Connection c = bed.connect(route); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + key + ")")) {
                rs.next();
                assertTrue(rs.getBoolean(1));
            }
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }

    private static int intOf(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
