package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.demo.BorrowsScenario;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.events.EventType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * emulate's one lock holder per process: held locks never pin more than one server, so more held locks
 * than the transaction pooler has servers (3 in the bed) starve nothing; and a pooled thread keeps its
 * lock across borrows. Each scenario has a plain-pgjdbc control that shows the bug.
 */
@ExtendWith(TestBedExtension.class)
class SharedHolderTest {
    private static final int STATEMENT_TIMEOUT_SECONDS = 30;
    private final TestBed bed = TestBed.shared();

    /** What the own-key workers did. */
    record Outcome(int jobsDone, int errors, int failedUnlocks, int locksLeft, String firstError) {
    }

    /**
     * The scenario: N workers, each guarding its own job key on its own connection through the
     * transaction pooler: {@code pg_advisory_lock(k)}, five short statements, {@code pg_advisory_unlock(k)},
     * ten times.
     */
    private Outcome ownKeyWorkers(int workers, long base, int timeoutSeconds, WorkersScenarioSource source)
            throws Exception {
        AtomicInteger done = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        List<String> errorTexts = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            long key = base + w;
            Thread t = new Thread(() -> {
                try (Connection c = source.open(); Statement s = c.createStatement()) {
                    s.setQueryTimeout(timeoutSeconds);
                    start.await();
                    for (int i = 0; i < 10; i++) {
                        s.execute("SELECT pg_advisory_lock(" + key + ")");
                        for (int j = 0; j < 5; j++) {
                            s.execute("SELECT " + j);
                        }
                        if (!bool(s, "SELECT pg_advisory_unlock(" + key + ")")) {
                            failedUnlocks.incrementAndGet();
                        }
                        done.incrementAndGet();
                    }
                } catch (SQLException e) {
                    errors.incrementAndGet();
                    errorTexts.add(e.getSQLState() + " " + e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "own-key-worker-" + w);
            threads.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(150));
            assertTrue(!t.isAlive(), "a worker is still running after 150 s: the pool starved");
        }
        int left = 0;
        for (int w = 0; w < workers; w++) {
            left += bed.admin().awaitReleased(base + w, 500).size();
            bed.admin().terminateHoldersOf(base + w);
        }
        return new Outcome(done.get(), errors.get(), failedUnlocks.get(), left,
                errorTexts.isEmpty() ? null : errorTexts.get(0));
    }

    @FunctionalInterface
    interface WorkersScenarioSource {
        Connection open() throws SQLException;
    }

    @ParameterizedTest(name = "{0} workers")
    @ValueSource(ints = {8, 32, 64})
    void ownKeyWorkersThroughTheTransactionPoolerAllFinish(int workers) throws Exception {
        Outcome emulated = ownKeyWorkers(workers, 970_000L + workers * 100L, STATEMENT_TIMEOUT_SECONDS,
                () -> bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
        System.out.println("[shared holder] own-key workers, " + workers + " over 3 pooled servers: " + emulated);
        assertEquals(workers * 10, emulated.jobsDone(), String.valueOf(emulated.firstError()));
        assertEquals(0, emulated.errors(), emulated.firstError());
        assertEquals(0, emulated.failedUnlocks());
        assertEquals(0, emulated.locksLeft());
    }

    @Test
    void controlPlainPgjdbcOwnKeyWorkersLoseTheirLocks() throws Exception {
        Outcome plain = ownKeyWorkers(8, 975_000L, 3, () -> bed.connect(Route.TRANSACTION_POOL));
        System.out.println("[shared holder] control: plain pgjdbc own-key workers: " + plain);
        assertTrue(plain.failedUnlocks() + plain.locksLeft() > 0,
                "control: unlocks land on other servers, locks stay behind " + plain);
    }

    @Test
    void moreHeldLocksThanPooledServersStarveNothing() throws Exception {
        int n = 8;
        List<Connection> cs = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
                cs.add(c);
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_lock(" + (976_000 + i) + ")");
                }
            }
            assertEquals(n, bed.admin().heldAdvisoryLocks().stream().filter(l -> l.key() >= 976_000 && l.key() < 976_100)
                    .count(), "all held, by one backend");
            assertEquals(1, bed.admin().heldAdvisoryLocks().stream().filter(l -> l.key() >= 976_000 && l.key() < 976_100)
                    .map(l -> l.pid()).distinct().count(), "one holder backend for the process");
            for (Connection c : cs) {
                try (Statement s = c.createStatement()) {
                    s.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
                    s.execute("SELECT count(*) FROM pg_class"); // would wait for a server with one holder per lock
                }
            }
        } finally {
            for (Connection c : cs) {
                c.close();
            }
        }
        for (int i = 0; i < n; i++) {
            assertEquals(List.of(), bed.admin().awaitReleased(976_000 + i, 2_000), "released at close");
        }
    }

    private HikariDataSource hikari(int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bed.url(Route.DIRECT));
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    @Test
    void pooledThreadsKeepTheirLocksAcrossBorrows() throws Exception {
        long key = 977_001;
        BorrowsScenario.Result plain;
        try (HikariDataSource pool = hikari(4)) {
            plain = BorrowsScenario.run(pool, key, 8, 30);
        }
        int plainLeft = bed.admin().awaitReleased(key, 1_000).size();
        bed.admin().terminateHoldersOf(key);
        BorrowsScenario.Result guarded;
        Properties emulate = new Properties();
        emulate.setProperty("lockhygiene.mode", "emulate");
        try (HikariDataSource pool = hikari(4)) {
            guarded = BorrowsScenario.run(new LockHygieneDataSource(pool, emulate), key + 1, 8, 30);
            assertEquals(List.of(), bed.admin().holdersOf(key + 1), "nothing held while the pool is still open");
        }
        System.out.println("[shared holder] Hikari (4) + lock/unlock on different borrows, 8 threads: plain " + plain
                + " (left " + plainLeft + ")\n[shared holder]                                              LockHygiene "
                + guarded);
        assertTrue(plain.overlapping() + plain.failedUnlocks() + plainLeft > 0, "control: the lock stays on one borrowed"
                + " connection, which another thread then uses " + plain);
        assertTrue(guarded.finished(), "a borrower is still running after 120 s");
        assertTrue(guarded.runs() > 0);
        assertEquals(0, guarded.overlapping(), guarded.toString());
        assertEquals(0, guarded.failedUnlocks(), guarded.toString());
        assertEquals(0, guarded.errors(), guarded.firstError());
    }

    @Test
    void aPooledThreadThatEndsWithoutUnlockingIsReleasedAndReported() throws Exception {
        long key = 977_101;
        Properties emulate = new Properties();
        emulate.setProperty("lockhygiene.mode", "emulate");
        try (HikariDataSource pool = hikari(2); EventRecorder events = EventRecorder.all()) {
            DataSource ds = new LockHygieneDataSource(pool, emulate);
            Thread t = new Thread(() -> {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_lock(" + key + ")");
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }, "forgetful-thread");
            t.start();
            t.join();
            assertEquals(1, bed.admin().holdersOf(key).size(), "the thread's lock outlives its borrow");
            assertEquals(List.of(), bed.admin().awaitReleased(key, 5_000), "released once the thread is gone");
            long until = System.currentTimeMillis() + 2_000;
            while (events.of(EventType.LEAK_RELEASED).isEmpty() && System.currentTimeMillis() < until) {
                Thread.sleep(50);
            }
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size(), "and reported: " + events.types());
        }
    }

    /**
     * True once a wait for {@code key} is seen where it lives: PostgreSQL's queue (an ungranted lock in
     * pg_locks: the reference, or a wait of the holder's) or the lock table's waits in this JVM; false if the
     * call ended first. Bounded by 10 s. An observed state, never a guess by sleeping.
     */
    private boolean awaitWaiting(long key, java.util.concurrent.Future<String> call) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try (Connection c = bed.connect(Route.DIRECT); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1"
                        + " AND ((classid::bigint << 32) | objid::bigint) = ?")) {
            ps.setLong(1, key);
            while (System.nanoTime() < until) {
                if (call.isDone()) {
                    return false;
                }
                for (io.lockhygiene.internal.holder.EmulatedWait w : io.lockhygiene.internal.holder.EmulatedWait.snapshot()) {
                    if (w.key().equals(io.lockhygiene.internal.locktable.AdvisoryKey.bigint(key))) {
                        return true;
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) {
                        return true;
                    }
                }
                Thread.sleep(5); // polling an observed state, bounded above
            }
        }
        return false;
    }

    /** Runs {@code sql} on {@code c} in a thread; the outcome ("ok" or the SQLState) arrives in the future. */
    private static java.util.concurrent.CompletableFuture<String> inThread(Connection c, String sql, int timeoutSeconds) {
        // a thread of its own each (the common pool may have one thread on a small machine)
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try (Statement s = c.createStatement()) {
                s.setQueryTimeout(timeoutSeconds);
                s.execute(sql);
                return "ok";
            } catch (SQLException e) {
                return e.getSQLState();
            }
        }, r -> new Thread(r, "local-wait").start());
    }

    /**
     * Two connections of one process, as PostgreSQL answers two sessions: a blocking call waits for the
     * other's unlock and then gets the key; two owners waiting for each other get 40P01 (one of them); a
     * query timeout ends a wait with 57014. Run the same against direct PostgreSQL (the reference).
     */
    private List<String> localWaits(WorkersScenarioSource source, long k) throws Exception {
        List<String> outcomes = new ArrayList<>();
        try (Connection a = source.open(); Connection b = source.open();
             Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            var waiting = inThread(b, "SELECT pg_advisory_lock(" + k + ")", 10);
            outcomes.add("waits: " + awaitWaiting(k, waiting));
            sa.execute("SELECT pg_advisory_unlock(" + k + ")");
            outcomes.add("then gets it: " + waiting.get(10, TimeUnit.SECONDS));
            outcomes.add("a tries: " + bool(sa, "SELECT pg_try_advisory_lock(" + k + ")"));
            sb.execute("SELECT pg_advisory_unlock(" + k + ")");
            sb.execute("SELECT pg_advisory_lock(" + (k + 1) + ")");
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            var aWaits = inThread(a, "SELECT pg_advisory_lock(" + (k + 1) + ")", 10);
            assertTrue(awaitWaiting(k + 1, aWaits), "a waits before b closes the cycle");
            var bWaits = inThread(b, "SELECT pg_advisory_lock(" + k + ")", 10);
            String first = java.util.concurrent.CompletableFuture.anyOf(aWaits, bWaits).get(10, TimeUnit.SECONDS).toString();
            outcomes.add("deadlock: " + first);
            // the victim's session keeps its locks (session level): release them so the other goes on
            if (aWaits.isDone()) {
                sa.execute("SELECT pg_advisory_unlock_all()");
            } else {
                sb.execute("SELECT pg_advisory_unlock_all()");
            }
            outcomes.add("the other then: " + java.util.concurrent.CompletableFuture.allOf(aWaits, bWaits)
                    .thenApply(v -> aWaits.join() + "/" + bWaits.join()).get(10, TimeUnit.SECONDS).replace("40P01", "")
                    .replace("/", ""));
            sa.execute("SELECT pg_advisory_unlock_all()");
            sb.execute("SELECT pg_advisory_unlock_all()");
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            outcomes.add("query timeout: " + inThread(b, "SELECT pg_advisory_lock(" + k + ")", 1).get(10, TimeUnit.SECONDS));
            sa.execute("SELECT pg_advisory_unlock_all()");
        }
        return outcomes;
    }

    @Test
    void localOwnersWaitDeadlockAndTimeOutAsSessionsDo() throws Exception {
        List<String> reference = localWaits(() -> bed.connect(Route.DIRECT), 978_001);
        List<String> emulated = localWaits(() -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate"), 978_011);
        System.out.println("[shared holder] local waits: PostgreSQL " + reference + "\n[shared holder]              emulate "
                + emulated);
        assertEquals(List.of("waits: true", "then gets it: ok", "a tries: false", "deadlock: 40P01", "the other then: ok",
                "query timeout: 57014"), reference, "the reference itself");
        assertEquals(reference, emulated);
        assertEquals(List.of(), bed.admin().awaitReleased(978_011, 2_000));
        assertEquals(List.of(), bed.admin().awaitReleased(978_012, 2_000));
    }

    @Test
    void lockTimeoutBoundsAWaitForAnotherProcess() throws Exception {
        long k = 978_101;
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                     "lockhygiene.lockTimeout=300ms"); Statement s = c.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + k + ")");
            SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class,
                    () -> s.execute("SELECT pg_advisory_lock(" + k + ")"));
            assertEquals("55P03", e.getSQLState(), "ended by lockhygiene.lockTimeout, not by the query timeout");
            assertEquals(0, bed.admin().idleInTransaction(), "waiting pinned nothing");
            o.execute("SELECT pg_advisory_unlock(" + k + ")");
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            s.execute("SELECT pg_advisory_unlock(" + k + ")");
        }
    }

    /**
     * A pool of the driver's own connections (jdbc:lockhygiene: URL) under the DataSource wrapper: a
     * connection returned to the pool lets go of its locks (it is the owner there) and keeps working on
     * its next borrow.
     */
    @Test
    void aReturnedConnectionOfTheDriverKeepsWorking() throws Exception {
        long k = 978_201;
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(1);
        Properties emulate = new Properties();
        emulate.setProperty("lockhygiene.mode", "emulate");
        try (HikariDataSource pool = new HikariDataSource(config)) {
            DataSource ds = new LockHygieneDataSource(pool, emulate);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + k + ")");
            }
            assertEquals(List.of(), bed.admin().awaitReleased(k, 2_000), "released at the return");
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"), "the next borrow works");
                assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"));
            }
        }
    }
}
