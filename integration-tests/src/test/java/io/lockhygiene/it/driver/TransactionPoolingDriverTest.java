package io.lockhygiene.it.driver;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each mode through the transaction-mode PgBouncer, each with a plain-pgjdbc control that shows the
 * bug the LockHygiene run must not show. Keys are unique per test so tests cannot see each other.
 */
@ExtendWith(TestBedExtension.class)
class TransactionPoolingDriverTest {
    private final TestBed bed = TestBed.shared();
    private long key;

    private long key(long k) {
        key = k;
        return k;
    }

    @AfterEach
    void cleanUp() throws SQLException {
        bed.admin().terminateHoldersOf(key);
    }

    /** The transaction pooler the tests go through (a subclass runs them through another). */
    Route route() {
        return Route.TRANSACTION_POOL;
    }

    /** LockHygiene with {@code params}; detect unless they name a mode (these tests are about detect's reports). */
    private Connection lh(String... params) throws SQLException {
        if (java.util.Arrays.stream(params).noneMatch(p -> p.startsWith("lockhygiene.mode="))) {
            String[] withMode = java.util.Arrays.copyOf(params, params.length + 1);
            withMode[params.length] = "lockhygiene.mode=detect";
            return bed.connectLockHygiene(route(), withMode);
        }
        return bed.connectLockHygiene(route(), params);
    }


    @Test
    void controlPlainPgjdbcLeavesAnAutocommitLockBehind() throws Exception {
        long k = key(920_001);
        try (Connection c = bed.connect(route()); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + k + ")");
        }
        assertEquals(1, bed.admin().holdersOf(k).size(), "plain pgjdbc: the lock outlives its client");
    }

    @Test
    void detectReleasesAnAutocommitLockOnTheBackendThatHoldsItAndReportsWhere() throws Exception {
        long k = key(920_002);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh(); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"), "the application still gets PostgreSQL's answer");
            assertEquals(List.of(), bed.admin().holdersOf(k), "released at the end of its autocommit statement");
            assertTrue(c.getAutoCommit(), "autocommit is restored");
            List<LockHygieneEvent> leaks = events.of(EventType.LEAK_RELEASED);
            assertEquals(1, leaks.size(), events.types().toString());
            assertEquals(Long.toString(k), leaks.get(0).key());
            assertEquals("ExclusiveLock", leaks.get(0).lockMode());
            assertTrue(leaks.get(0).sql().contains("pg_try_advisory_lock(" + k + ")"));
            assertNotNull(leaks.get(0).takenAt(), "the stack where the lock was taken");
            assertTrue(stackMentions(leaks.get(0).takenAt(), TransactionPoolingDriverTest.class.getName()), "the stack reaches this test");
            assertEquals(1, events.of(EventType.SESSION_LOCK_CALL).size());
        }
    }

    @Test
    void detectInsideATransactionReleasesAtCommitInTheSameRoundTrip() throws Exception {
        long k = key(920_003);
        long leaksBefore = LockHygiene.counters().getLeaksReleased();
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.mode=detect"); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(7742, hashtext('report-daily')), pg_advisory_lock(" + k + ")");
            assertEquals(1, bed.admin().holdersOf(k).size(), "held while the transaction runs");
            c.commit();
            assertEquals(List.of(), bed.admin().holdersOf(k));
            assertEquals(List.of(), twoKeyHolders(7742), "the seed's two-int-key lock is released too");
            assertEquals(2, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
        }
        assertTrue(LockHygiene.counters().getLeaksReleased() >= leaksBefore + 2);
    }

    /**
     * A text whose last statement ends the transaction ({@code SELECT 1; COMMIT}) carries the check in its end's
     * round trip, as commit() does; one whose COMMIT is not its last statement cannot, and says so (CHECK_FAILED,
     * the missed-check WARN): the lock stays on the pooled server. R2DBC's {@code R2dbcModesTest} runs the same
     * steps. Control: plain pgjdbc leaves the lock after the first text too.
     */
    @Test
    void aTextThatEndsItsTransactionCarriesTheCheckAndOneThatEndsItInsideSaysItCouldNot() throws Exception {
        long k = key(920_013);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            s.execute("SELECT 1; COMMIT -- done");
            assertEquals(List.of(), bed.admin().holdersOf(k), "released in the round trip of the text's COMMIT");
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
            s.execute("SELECT pg_advisory_lock(" + k + "); COMMIT");
            assertEquals(List.of(), bed.admin().holdersOf(k), "released in the round trip of the text that took it");
            assertEquals(2, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
            c.setAutoCommit(true);
            s.execute("BEGIN; SELECT pg_advisory_lock(" + k + "); COMMIT"); // a transaction of its own, in autocommit
            assertEquals(List.of(), bed.admin().holdersOf(k), "released in the round trip of its COMMIT");
            assertEquals(3, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            try (EventRecorder all = EventRecorder.all()) {
                s.execute("SELECT 1; COMMIT; SELECT 2");
                List<LockHygieneEvent> missed = all.of(EventType.CHECK_FAILED);
                assertEquals(1, missed.size(), all.types().toString());
                assertTrue(missed.get(0).message().contains("could not follow"), missed.get(0).message());
            }
            assertEquals(1, bed.admin().holdersOf(k).size(), "left on the pooled server, as the warning says");
        }
        bed.admin().terminateHoldersOf(k);
        try (Connection p = bed.connect(route()); Statement s = p.createStatement()) {
            p.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            s.execute("SELECT 1; COMMIT");
            assertEquals(1, bed.admin().holdersOf(k).size(), "control: plain pgjdbc leaves it on the pooled server");
        }
    }

    @Test
    void rewriteTurnsSessionLocksIntoTransactionLocksKeepingLabelsAndExclusion() throws Exception {
        long k = key(920_004);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.mode=rewrite"); Statement s = c.createStatement();
             Connection other = bed.connect(route()); Statement o = other.createStatement()) {
            c.setAutoCommit(false);
            try (ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + k + ")")) {
                rs.next();
                assertTrue(rs.getBoolean("pg_try_advisory_lock"), "result label kept");
                assertEquals("bool", rs.getMetaData().getColumnTypeName(1));
            }
            assertFalse(bool(o, "SELECT pg_try_advisory_lock(" + k + ")"), "another client is excluded during the transaction");
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"), "unlock is a no-op returning true");
            try (ResultSet rs = s.executeQuery("SELECT pg_advisory_unlock_all()")) {
                rs.next();
                assertEquals("void", rs.getMetaData().getColumnTypeName(1));
                assertEquals("pg_advisory_unlock_all", rs.getMetaData().getColumnLabel(1));
            }
            assertEquals(1, bed.admin().holdersOf(k).size(), "still held: transaction-scoped now");
            c.commit();
            assertEquals(List.of(), bed.admin().holdersOf(k), "gone with the transaction");
            assertFalse(events.of(EventType.REWRITTEN).isEmpty());
            assertEquals(List.of(), events.of(EventType.LEAK_RELEASED), "nothing leaked");
        }
    }

    @Test
    void rewriteInAutocommitBehavesAsDetectAndSaysExclusionIsLost() throws Exception {
        long k = key(920_005);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.mode=rewrite"); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"));
            assertEquals(List.of(), bed.admin().holdersOf(k));
            List<LockHygieneEvent> calls = events.of(EventType.SESSION_LOCK_CALL);
            assertEquals(1, calls.size());
            assertTrue(calls.get(0).message().contains("mutual exclusion is lost"), calls.get(0).message());
            assertTrue(calls.get(0).message().contains("emulate"));
        }
    }

    @Test
    void strictRejectsBeforeSendingAndNamesTheFix() throws Exception {
        long k = key(920_006);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.mode=strict"); Statement s = c.createStatement()) {
            SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT pg_advisory_lock(" + k + ")"));
            assertEquals("0A000", e.getSQLState());
            assertTrue(e.getMessage().contains("pg_advisory_lock") && e.getMessage().contains("pg_advisory_xact_lock"), e.getMessage());
            SQLException p = assertThrows(SQLException.class, () -> c.prepareStatement("SELECT pg_try_advisory_lock(?)"));
            assertEquals("0A000", p.getSQLState());
            assertThrows(SQLException.class, () -> s.addBatch("SELECT pg_advisory_lock_shared(" + k + ")"));
            assertEquals(List.of(), bed.admin().holdersOf(k), "nothing was sent");
            assertEquals(2, events.of(EventType.REJECTED).size());
            // xact forms and plain SQL still run
            c.setAutoCommit(false);
            assertTrue(bool(s, "SELECT pg_try_advisory_xact_lock(" + k + ")"));
            c.commit();
            assertTrue(bool(s, "SELECT true"));
        }
    }

    @Test
    void bindParameterKeysAsLiquibaseSessionLockSendsThem() throws Exception {
        long k = key(920_007);
        try (Connection plain = bed.connect(route());
             PreparedStatement ps = plain.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            ps.setLong(1, k);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertTrue(rs.getBoolean(1));
            }
        }
        assertEquals(1, bed.admin().holdersOf(k).size(), "control: plain pgjdbc leaves it");
        bed.admin().terminateHoldersOf(k);

        try (EventRecorder events = EventRecorder.all();
             Connection c = lh(); PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_lock(?)")) {
            for (int i = 0; i < 3; i++) { // a prepared statement runs many times
                ps.setLong(1, k);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertTrue(rs.getBoolean(1));
                    assertTrue(rs.getStatement() == ps, "ResultSet.getStatement() is the application's statement");
                }
                assertEquals(List.of(), bed.admin().holdersOf(k));
            }
            assertTrue(events.of(EventType.LEAK_RELEASED).stream().anyMatch(e -> Long.toString(k).equals(e.key())));
        }
    }

    /**
     * leakCheck=always wraps every autocommit statement in a transaction of ours so that its COMMIT carries the check,
     * but never one that cannot run in a transaction block (VACUUM, CREATE INDEX CONCURRENTLY, a migration's
     * non-transactional step): those run as they are, as with plain pgjdbc (the reference, first).
     */
    @Test
    void leakCheckAlwaysLeavesStatementsThatCannotRunInATransactionBlockAsTheyAre() throws Exception {
        List<String> steps = List.of("CREATE TABLE IF NOT EXISTS lh_always_vacuum (id int)",
                "VACUUM lh_always_vacuum", "CREATE INDEX CONCURRENTLY IF NOT EXISTS lh_always_vacuum_id ON lh_always_vacuum (id)",
                "DROP INDEX CONCURRENTLY IF EXISTS lh_always_vacuum_id");
        try (Connection p = bed.connect(route()); Statement s = p.createStatement()) {
            for (String step : steps) {
                s.execute(step); // the reference: each runs in autocommit
            }
        }
        try (Connection c = lh("lockhygiene.leakCheck=always"); Statement s = c.createStatement()) {
            for (String step : steps) {
                s.execute(step);
            }
        }
    }

    @Test
    void batchesAreGuardedToo() throws Exception {
        long k = key(920_008);
        try (Connection c = bed.connect(route()); Statement s = c.createStatement()) {
            s.addBatch("SELECT pg_advisory_lock(" + k + ")");
            s.addBatch("SELECT 1");
            try {
                s.executeBatch();
            } catch (SQLException resultsReturningBatchIsRefusedByPgjdbc) {
                // as below
            }
        }
        assertEquals(1, bed.admin().holdersOf(k).size(), "control: plain pgjdbc's batch leaves the lock on a pooled server");
        bed.admin().terminateHoldersOf(k);
        try (Connection c = lh(); Statement s = c.createStatement()) {
            s.addBatch("SELECT pg_advisory_lock(" + k + ")");
            s.addBatch("SELECT 1");
            try {
                s.executeBatch();
            } catch (SQLException resultsReturningBatchIsRefusedByPgjdbc) {
                // pgjdbc refuses SELECTs in batches ("A result was returned when none was expected")
            }
            assertEquals(List.of(), bed.admin().holdersOf(k), "the batch's lock does not leak");
        }
    }

    @Test
    void leakCheckAlwaysCatchesLocksTakenInsideDoBlocksThatNoScannerCanSee() throws Exception {
        long k = key(920_009);
        String doBlock = "DO $$ BEGIN PERFORM pg_advisory_lock(" + k + "); END $$";
        try (Connection c = lh(); Statement s = c.createStatement()) {
            s.execute(doBlock);
        }
        assertEquals(1, bed.admin().holdersOf(k).size(), "control: tracked cannot see into a DO block");
        bed.admin().terminateHoldersOf(k);
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.leakCheck=always"); Statement s = c.createStatement()) {
            s.execute(doBlock);
            assertEquals(List.of(), bed.admin().holdersOf(k));
            assertEquals(1, events.of(EventType.INHERITED_RELEASED).size(), events.types().toString());
        }
    }

    @Test
    void inheritedLocksLeftByAnotherClientAreFoundAndReleased() throws Exception {
        long k = key(920_010);
        try (Connection c = bed.connect(route()); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + k + ")");
        }
        assertEquals(1, bed.admin().holdersOf(k).size());
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             Connection c = lh("lockhygiene.leakCheck=always"); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            for (int i = 0; i < 50 && !bed.admin().holdersOf(k).isEmpty(); i++) {
                s.execute("SELECT 1"); // each transaction lands on some pooled server
                c.commit();
            }
            assertEquals(List.of(), bed.admin().holdersOf(k));
            assertEquals(1, events.of(EventType.INHERITED_RELEASED).size());
        }
    }

    private List<Integer> twoKeyHolders(int first) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2"
                     + " AND classid = " + first)) {
            rs.next();
            return rs.getInt(1) == 0 ? List.of() : List.of(rs.getInt(1));
        }
    }

    private static boolean stackMentions(Throwable t, String className) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(className)) {
                return true;
            }
        }
        return false;
    }
}
