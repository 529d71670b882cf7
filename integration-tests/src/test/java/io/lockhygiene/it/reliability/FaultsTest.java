package io.lockhygiene.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TcpProxy;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.util.PSQLException;

/**
 * Real faults: a terminated backend, PgBouncer killed and restarted, PostgreSQL restarted, a network that
 * stops answering, and close/abort racing our checks. The application always sees pgjdbc's own exception,
 * nothing of ours leaks, and the next connection works.
 */
@ExtendWith(TestBedExtension.class)
class FaultsTest {
    private final TestBed bed = TestBed.shared();

    private static int pid(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** pgjdbc's own exception type, and not one LockHygiene made up. */
    private static void assertPgjdbcException(SQLException e) {
        assertTrue(e instanceof PSQLException, "not pgjdbc's: " + e);
        assertFalse(String.valueOf(e.getMessage()).startsWith("LockHygiene"), e.getMessage());
    }

    private static Set<String> ourThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("lockhygiene") && !n.contains("jmx") && !n.contains("testbed"))
                // JVM-wide, alive while any holder of any test holds locks; it ends by itself (HolderWatchdog)
                .filter(n -> !n.contains("holder-watchdog"))
                .collect(Collectors.toSet());
    }

    private void assertNextConnectionWorks(Route route, String... params) throws SQLException {
        try (Connection c = bed.connectLockHygiene(route, params); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(999999), pg_advisory_unlock(999999)")) {
            assertTrue(rs.next() && rs.getBoolean(1) && rs.getBoolean(2));
        }
    }

    @Test
    void backendTerminatedMidTransaction() throws Exception {
        long key = 996_001;
        SQLException plain = terminateMidTransaction(bed.connect(Route.TRANSACTION_POOL), key);
        SQLException guarded = terminateMidTransaction(bed.connectLockHygiene(Route.TRANSACTION_POOL), key + 1);
        assertPgjdbcException(guarded);
        assertEquals(plain.getClass(), guarded.getClass());
        assertEquals(plain.getSQLState(), guarded.getSQLState(), plain + " / " + guarded);
        assertEquals(List.of(), bed.admin().awaitReleased(key + 1, 5_000));
        assertNextConnectionWorks(Route.TRANSACTION_POOL);
    }

    private SQLException terminateMidTransaction(Connection c, long key) throws Exception {
        try (c; Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            int pid = pid(s);
            try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
                a.execute("SELECT pg_terminate_backend(" + pid + ")");
            }
            Thread.sleep(200);
            return assertThrows(SQLException.class, c::commit);
        }
    }

    /** A holder through the pooler loses its lock with the pooler, and says so (class 08). */
    @Test
    void pgbouncerKilledAndRestartedWhileAnEmulatedLockIsHeldByAHolderThroughIt() throws Exception {
        long key = 996_010;
        Set<String> threadsBefore = ourThreads();
        Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderUrl=pooler");
        Statement s = c.createStatement();
        s.execute("SELECT pg_advisory_lock(" + key + ")");
        assertEquals(1, bed.admin().holdersOf(key).size());
        bed.stopPgBouncer(Route.TRANSACTION_POOL);
        try {
            assertEquals(List.of(), bed.admin().awaitReleased(key, 10_000), "the lock went with its server");
            SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT pg_advisory_unlock(" + key + ")"));
            // LockHygiene's LOCK_LOST report once the watchdog noticed: a connection error (class 08)
            assertTrue(e.getSQLState() != null && e.getSQLState().startsWith("08"), e + " " + e.getSQLState());
            if (!(e instanceof PSQLException)) {
                assertTrue(e.getMessage().contains("lost its server connection"), e.getMessage());
            }
        } finally {
            bed.startPgBouncer(Route.TRANSACTION_POOL);
        }
        c.close(); // must not throw over a dead holder
        assertNextConnectionWorks(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        assertEquals(threadsBefore, ourThreads(), "no thread of ours left behind");
        assertEquals(0, bed.admin().idleInTransaction(), "no holder of ours left pinning a server");
    }

    /** A holder on the server itself (holderUrl=auto) keeps the lock while the pooler restarts. */
    @Test
    void pgbouncerKilledAndRestartedWhileAnEmulatedLockIsHeldByADirectHolder() throws Exception {
        long key = 996_011;
        Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        Statement s = c.createStatement();
        s.execute("SELECT pg_advisory_lock(" + key + ")");
        assertEquals(1, bed.admin().holdersOf(key).size());
        bed.stopPgBouncer(Route.TRANSACTION_POOL);
        try {
            assertEquals(1, bed.admin().holdersOf(key).size(), "the holder is not behind the pooler: the lock stays");
            assertTrue(io.lockhygiene.it.bed.Sql.bool(s, "SELECT pg_advisory_unlock(" + key + ")"),
                    "decided in the lock table, with no pooler needed");
            assertEquals(List.of(), bed.admin().awaitReleased(key, 10_000));
        } finally {
            bed.startPgBouncer(Route.TRANSACTION_POOL);
        }
        c.close();
        assertNextConnectionWorks(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
    }

    @Test
    void postgresRestarts() throws Exception {
        Connection direct = bed.connectLockHygiene(Route.DIRECT, "lockhygiene.leakCheck=always");
        Connection pooled = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        Statement ds = direct.createStatement();
        Statement ps = pooled.createStatement();
        ds.execute("SELECT pg_advisory_lock(996020)");
        ps.execute("SELECT pg_advisory_lock(996021)");
        bed.restartPostgres();
        assertPgjdbcException(assertThrows(SQLException.class, () -> ds.execute("SELECT 1")));
        // Through PgBouncer the first statement after a restart may fail or be retried on a new server; the
        // emulated lock went with the holder's session, which the holder notices within milliseconds and then
        // says on the owner's next statement (class 08, its own words): either is right, nothing else is.
        try {
            ps.execute("SELECT pg_advisory_unlock(996021)");
        } catch (SQLException e) {
            if (!(e instanceof PSQLException)) {
                assertEquals("08006", e.getSQLState(), e.toString());
                assertTrue(e.getMessage().contains("lock holder"), e.getMessage());
            }
        }
        direct.close();
        pooled.close();
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks());
        assertNextConnectionWorks(Route.DIRECT);
        assertNextConnectionWorks(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
    }

    @Test
    void theNetworkStopsAnswering() throws Exception {
        long key = 996_030;
        String url = bed.url(Route.TRANSACTION_POOL);
        int port = TcpProxy.portOf(url);
        try (TcpProxy proxy = new TcpProxy(port)) {
            String proxied = "jdbc:lockhygiene:postgresql://127.0.0.1:" + proxy.port() + "/lockhygiene?prepareThreshold=0&socketTimeout=2";
            Connection c = java.sql.DriverManager.getConnection(proxied, bed.credentials());
            Statement s = c.createStatement();
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            proxy.blackhole(true);
            SQLException e = assertThrows(SQLException.class, c::commit); // pgjdbc's socketTimeout fires
            assertPgjdbcException(e);
            c.close();
            proxy.blackhole(false);
            assertEquals(List.of(), bed.admin().awaitReleased(key, 15_000),
                    "PgBouncer drops the server of a client gone mid-transaction");
        }
        assertNextConnectionWorks(Route.TRANSACTION_POOL);
    }

    @Test
    void closeAndAbortRacingLeakChecksAndEmulation() throws Exception {
        ExecutorService executor = Executors.newCachedThreadPool();
        try {
            for (int round = 0; round < 20; round++) {
                String mode = round % 2 == 0 ? "detect" : "emulate";
                Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=" + mode);
                AtomicReference<Throwable> unexpected = new AtomicReference<>();
                long key = 996_100 + round;
                Thread worker = new Thread(() -> {
                    try (Statement s = c.createStatement()) {
                        for (int i = 0; i < 200; i++) {
                            c.setAutoCommit(i % 2 == 0);
                            s.execute("SELECT pg_try_advisory_lock(" + key + ")");
                            s.execute("SELECT pg_advisory_unlock(" + key + ")");
                            if (!c.getAutoCommit()) {
                                c.commit();
                            }
                        }
                    } catch (SQLException expectedOnceClosed) {
                        // pgjdbc's "connection has been closed" and the like
                    } catch (Throwable t) {
                        unexpected.set(t);
                    }
                });
                worker.start();
                Thread.sleep(ThreadLocalRandom.current().nextInt(5, 60));
                if (round % 4 < 2) {
                    c.close();
                } else {
                    c.abort(executor);
                }
                worker.join(30_000);
                assertFalse(worker.isAlive(), "no deadlock between the check and close/abort");
                if (unexpected.get() != null) {
                    throw new AssertionError("nothing but SQLExceptions, but " + unexpected.get(), unexpected.get());
                }
                assertEquals(List.of(), bed.admin().awaitReleased(key, 10_000));
            }
        } finally {
            executor.shutdownNow();
        }
        assertNextConnectionWorks(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
    }
}
