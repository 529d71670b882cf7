package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
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
import io.lockhygiene.it.bed.Eventually;
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
            Eventually.until("the release reported", Duration.ofSeconds(2),
                    () -> !events.of(EventType.LEAK_RELEASED).isEmpty());
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size(), "and reported: " + events.types());
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
