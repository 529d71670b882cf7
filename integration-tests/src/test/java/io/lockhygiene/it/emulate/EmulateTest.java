package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.it.demo.WorkersScenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** lockhygiene.mode=emulate through the transaction-mode PgBouncer (3 servers), with plain-pgjdbc controls. */
@ExtendWith(TestBedExtension.class)
class EmulateTest {
    private final TestBed bed = TestBed.shared();

    private Connection emulate(String... extra) throws SQLException {
        String[] params = new String[extra.length + 1];
        params[0] = "lockhygiene.mode=emulate";
        System.arraycopy(extra, 0, params, 1, extra.length);
        return bed.connectLockHygiene(Route.TRANSACTION_POOL, params);
    }

    @Test
    void workersWithTryLocksNeverOverlapWithMoreWorkersThanServers() throws Exception {
        WorkersScenario.Config config = new WorkersScenario.Config(8, 40, 10, 3);
        WorkersScenario.Result plain = WorkersScenario.run(config, 960_001, () -> bed.connect(Route.TRANSACTION_POOL),
                bed.admin());
        WorkersScenario.Result emulated = WorkersScenario.run(config, 960_002, this::emulate, bed.admin());
        System.out.println("[emulate] try-locks, 8 workers, 3 servers: plain " + plain + "\n[emulate]                                  emulate " + emulated);
        assertTrue(plain.overlappingRuns() > 0, "control: plain pgjdbc runs the job twice " + plain);
        assertEquals(0, emulated.overlappingRuns(), emulated.toString());
        assertEquals(0, emulated.locksLeftHeld());
        assertEquals(0, emulated.failedUnlocks());
        assertEquals(0, emulated.errors(), emulated.firstError());
        assertTrue(emulated.runs() > 0);
    }

    @Test
    void workersWithBlockingLocksAllRunOnceEachWithoutStarvingThePool() throws Exception {
        WorkersScenario.Config config = new WorkersScenario.Config(8, 6, 10, 2, true);
        WorkersScenario.Result emulated = WorkersScenario.run(config, 960_003, this::emulate, bed.admin());
        System.out.println("[emulate] blocking locks, 8 workers, 3 servers: " + emulated);
        assertEquals(48, emulated.runs(), "every try waits for its turn and runs");
        assertEquals(0, emulated.overlappingRuns());
        assertEquals(0, emulated.locksLeftHeld());
        assertEquals(0, emulated.failedUnlocks());
        assertEquals(0, emulated.errors(), emulated.firstError());
    }

    @Test
    void givesPostgresqlsOwnAnswersForStackingSharedTryAndUnlocks() throws Exception {
        String[] calls = {
                "SELECT pg_advisory_lock(961001)",
                "SELECT pg_try_advisory_lock(961001)",
                "SELECT pg_advisory_unlock(961001)",
                "SELECT pg_advisory_unlock(961001)",
                "SELECT pg_advisory_unlock(961001)",
                "SELECT pg_advisory_lock_shared(961002)",
                "SELECT pg_try_advisory_lock_shared(961002)",
                "SELECT pg_advisory_unlock(961002)",
                "SELECT pg_advisory_unlock_shared(961002)",
                "SELECT pg_try_advisory_lock(961003, 7)",
                "SELECT pg_advisory_unlock_all()",
                "SELECT pg_advisory_unlock(961003, 7)",
        };
        List<String> direct = answers(bed.connect(Route.DIRECT), calls);
        List<String> emulated = answers(emulate(), calls);
        assertEquals(direct, emulated);
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks());
    }

    private static List<String> answers(Connection c, String[] calls) throws SQLException {
        List<String> out = new ArrayList<>();
        try (c; Statement s = c.createStatement()) {
            for (String sql : calls) {
                try (ResultSet rs = s.executeQuery(sql)) {
                    rs.next();
                    out.add(sql + " -> " + rs.getMetaData().getColumnTypeName(1) + " " + rs.getString(1) + " "
                            + rs.getMetaData().getColumnLabel(1) + (rs.getStatement() == s ? "" : " (foreign statement)"));
                }
            }
        }
        return out;
    }

    @Test
    void exclusionHoldsAcrossTheApplicationsOwnTransactionsAndBindParameterKeys() throws Exception {
        long k = 961_010;
        try (Connection a = emulate(); Connection b = emulate();
             PreparedStatement tryA = a.prepareStatement("SELECT pg_try_advisory_lock(?)");
             PreparedStatement tryB = b.prepareStatement("SELECT pg_try_advisory_lock(?)");
             Statement sa = a.createStatement()) {
            tryA.setLong(1, k);
            tryB.setLong(1, k);
            assertTrue(answer(tryA));
            for (int i = 0; i < 10; i++) { // a's own work in its own transactions, on any server
                a.setAutoCommit(false);
                sa.execute("SELECT count(*) FROM pg_class");
                a.commit();
                a.setAutoCommit(true);
                assertFalse(answer(tryB), "b is excluded while a holds the lock");
            }
            assertEquals(1, bed.admin().holdersOf(k).size());
            try (ResultSet rs = sa.executeQuery("SELECT pg_advisory_unlock(" + k + ")")) {
                rs.next();
                assertTrue(rs.getBoolean(1), "a's unlock runs where a's lock is");
            }
            assertTrue(answer(tryB));
        }
        assertEquals(List.of(), bed.admin().holdersOf(k), "closing releases");
    }


    private static boolean answer(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    @Test
    void aBlockingCallHonoursLockTimeoutWithLockNotAvailable() throws Exception {
        long k = 961_020;
        try (Connection owner = bed.connect(Route.DIRECT); Statement o = owner.createStatement();
             Connection c = emulate("lockhygiene.lockTimeout=300ms"); Statement s = c.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + k + ")");
            SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT pg_advisory_lock(" + k + ")"));
            assertEquals("55P03", e.getSQLState());
            assertTrue(e.getMessage().contains("lockhygiene.lockTimeout"), e.getMessage());
            o.execute("SELECT pg_advisory_unlock(" + k + ")");
            s.execute("SELECT pg_advisory_lock(" + k + ")"); // and it works once free
            assertEquals(1, bed.admin().holdersOf(k).size());
        }
        assertEquals(List.of(), bed.admin().holdersOf(k));
    }

    /**
     * A session lock taken by a statement that also writes (here: in its WHERE, as often as the plan calls
     * it): emulate cannot answer it exactly, so it refuses it before anything is sent, says why and what to
     * do, and nothing happens (no row, no lock). Plain pgjdbc behind the pooler would take a lock that leaks.
     */
    /**
     * A batch whose statement takes a transaction-level lock the lock table cannot follow (it also writes) runs it
     * on the application's own server, inside the application's transaction: the transaction's later advisory calls
     * run there too, so the same session asking for its own lock again gets PostgreSQL's answer, true (the control:
     * direct PostgreSQL). Before the per-connection core noted a batch's call as run on the server (a single
     * statement's always was), the later call went to the lock table, whose holder asked the server for a key the
     * application's own backend held: false.
     */
    @Test
    void aBatchsTransactionLevelCallKeepsTheTransactionsLaterCallsOnItsServer() throws Exception {
        long k = 961_040;
        try (Connection direct = bed.connect(Route.DIRECT); Statement s = direct.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS emulate_batch_writes (k bigint)");
        }
        List<String> answers = new ArrayList<>();
        for (Connection c : List.of(bed.connect(Route.DIRECT), emulate())) {
            try (c; Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.addBatch("INSERT INTO emulate_batch_writes SELECT " + k + " WHERE pg_try_advisory_xact_lock(" + k + ")");
                assertEquals(1, s.executeBatch()[0], "the batch's statement took the lock and wrote its row");
                try (ResultSet rs = s.executeQuery("SELECT pg_try_advisory_xact_lock(" + k + ")")) {
                    rs.next();
                    answers.add(rs.getString(1));
                }
                c.rollback();
            }
            assertEquals(List.of(), bed.admin().holdersOf(k), "the transaction's lock ended with it");
        }
        assertEquals(List.of("t", "t"), answers, "direct PostgreSQL, then LockHygiene's emulate through the pooler");
    }

    @Test
    void aLockTakenByAStatementThatAlsoWritesIsRefusedAndSaysWhy() throws Exception {
        long k = 961_030;
        try (EventRecorder events = EventRecorder.all(); Connection c = emulate(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS emulate_writes (k bigint)");
            s.execute("DELETE FROM emulate_writes");
            SQLException e = assertThrows(SQLException.class,
                    () -> s.execute("INSERT INTO emulate_writes SELECT " + k + " WHERE pg_try_advisory_lock(" + k + ")"));
            assertEquals("0A000", e.getSQLState());
            assertTrue(e.getMessage().contains("not a SELECT") && e.getMessage().contains("Fix:"), e.getMessage());
            assertEquals(1, events.of(EventType.REFUSED).size());
            assertEquals(List.of(), bed.admin().holdersOf(k), "nothing was sent: no lock");
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM emulate_writes")) {
                rs.next();
                assertEquals(0, rs.getInt(1), "and no row");
            }
        }
    }

    @Test
    void theHolderSurvivesIdleInTransactionSessionTimeout() throws Exception {
        long k = 961_040;
        String user = bed.endpoints().user();
        try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
            a.execute("ALTER ROLE " + user + " SET idle_in_transaction_session_timeout = '300ms'");
            // new servers pick the setting up: make PgBouncer open fresh ones
            a.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
            // the holder through the pooler keeps a transaction open while it holds a lock (a holder on the
            // server itself, holderUrl=auto, keeps none at all)
            try (Connection c = emulate("lockhygiene.holderUrl=pooler"); Statement s = c.createStatement();
                 Connection other = bed.connect(Route.TRANSACTION_POOL); Statement o = other.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + k + ")");
                Thread.sleep(1_200);
                try (ResultSet rs = o.executeQuery("SELECT pg_try_advisory_lock(" + k + ")")) {
                    rs.next();
                    assertFalse(rs.getBoolean(1), "still held after 4x the idle-in-transaction timeout");
                }
                try (ResultSet rs = s.executeQuery("SELECT pg_advisory_unlock(" + k + ")")) {
                    rs.next();
                    assertTrue(rs.getBoolean(1));
                }
            }
        } finally {
            try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
                a.execute("ALTER ROLE " + user + " RESET idle_in_transaction_session_timeout");
                a.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
                        + " AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
            }
        }
    }

    @Test
    void aKilledProcessLosesItsLocksPromptly() throws Exception {
        long k = 961_050;
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process child = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                HoldLockMain.class.getName(), bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"),
                bed.endpoints().user(), bed.endpoints().password(), Long.toString(k))
                .redirectErrorStream(true).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = out.readLine()) != null && !line.contains("HELD")) {
                // the child's log lines
            }
            assertEquals(1, bed.admin().holdersOf(k).size(), "the child holds the lock");
            long killedAt = System.nanoTime();
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no close
            child.waitFor(10, TimeUnit.SECONDS);
            long acquiredAfter = -1;
            try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
                for (int i = 0; i < 600; i++) {
                    try (ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + k + ")")) {
                        rs.next();
                        if (rs.getBoolean(1)) {
                            acquiredAfter = (System.nanoTime() - killedAt) / 1_000_000;
                            s.execute("SELECT pg_advisory_unlock(" + k + ")");
                            break;
                        }
                    }
                    Thread.sleep(50);
                }
            }
            System.out.println("[emulate] kill -9 of a holder: another client acquired the key after " + acquiredAfter + " ms");
            assertTrue(acquiredAfter >= 0, "the lock must go with the process, not linger for server_lifetime");
        } finally {
            child.destroyForcibly();
            bed.admin().terminateHoldersOf(k);
        }
    }
}
