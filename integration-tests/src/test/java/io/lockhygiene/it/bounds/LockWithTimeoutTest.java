package io.lockhygiene.it.bounds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * "Lock with timeout" as libraries implement it (fencepost and others): {@code SET lock_timeout}, then
 * {@code pg_advisory_lock}, then {@code RESET lock_timeout}; on unlock {@code pg_advisory_unlock} then
 * {@code pg_advisory_unlock_all()}. Several workers on one key with a short timeout, each on a connection of its
 * own: every call either gets the lock or fails with 55P03 within the bound, none waits longer, no two jobs
 * overlap, every unlock is true and nothing stays held. Direct PostgreSQL is the reference; plain pgjdbc through
 * the transaction pooler is the control (its lock, its RESET and its unlock run on whichever servers it gets).
 */
@ExtendWith(TestBedExtension.class)
class LockWithTimeoutTest {
    private static final int WORKERS = 4;
    private static final int TRIES = 8;
    private static final int TIMEOUT_MS = 200;
    private static final long KEY = 946_001;

    private final TestBed bed = TestBed.shared();

    /** The SETs these tests send through the poolers in autocommit stay on pooled servers: put them back. */
    @org.junit.jupiter.api.AfterEach
    void resetPooledServers() throws Exception {
        bed.admin().resetTransactionPoolServers(Route.TRANSACTION_POOL);
        bed.admin().resetTransactionPoolServers(Route.PREPARED_TRANSACTION_POOL);
    }

    record Outcome(int jobs, int timeouts, int overlaps, int failedUnlocks, long longestTimeoutMillis,
                   List<String> otherErrors, int workersDone, List<Integer> left) {
    }

    interface Connect {
        Connection open() throws SQLException;
    }

    /** The library's lock: true when held, false when the wait ended by lock_timeout (55P03). */
    private static boolean lockWithTimeout(Statement s, long key, int millis) throws SQLException {
        s.execute("SET lock_timeout = '" + millis + "ms'");
        try {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            return true;
        } catch (SQLException e) {
            if ("55P03".equals(e.getSQLState())) {
                return false;
            }
            throw e;
        } finally {
            s.execute("RESET lock_timeout");
        }
    }

    /** The library's unlock: the key, then everything the session may still hold. */
    private static boolean unlock(Statement s, long key) throws SQLException {
        boolean released;
        try (ResultSet rs = s.executeQuery("SELECT pg_advisory_unlock(" + key + ")")) {
            rs.next();
            released = rs.getBoolean(1);
        }
        s.execute("SELECT pg_advisory_unlock_all()");
        return released;
    }

    private Outcome workers(Connect connect) throws Exception {
        AtomicInteger jobs = new AtomicInteger();
        AtomicInteger timeouts = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger inJob = new AtomicInteger();
        AtomicLong longest = new AtomicLong();
        AtomicInteger done = new AtomicInteger();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WORKERS; w++) {
            Thread t = new Thread(() -> {
                try (Connection c = connect.open(); Statement s = c.createStatement()) {
                    s.setQueryTimeout(30); // nothing waits forever, whatever goes wrong
                    start.await();
                    for (int i = 0; i < TRIES; i++) {
                        long t0 = System.nanoTime();
                        boolean got = lockWithTimeout(s, KEY, TIMEOUT_MS);
                        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                        if (!got) {
                            timeouts.incrementAndGet();
                            longest.accumulateAndGet(millis, Math::max);
                            continue;
                        }
                        if (inJob.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        jobs.incrementAndGet();
                        Thread.sleep(100); // the job's work: longer than the bound over two waiters
                        inJob.decrementAndGet();
                        if (!unlock(s, KEY)) {
                            failedUnlocks.incrementAndGet();
                        }
                    }
                    done.incrementAndGet();
                } catch (Exception e) {
                    errors.add(e.toString());
                }
            }, "lock-with-timeout-" + w);
            threads.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(120));
            assertTrue(!t.isAlive(), t.getName() + " ended");
        }
        List<Integer> left = bed.admin().awaitReleased(KEY, 5_000);
        try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
            for (Integer pid : left) {
                a.execute("SELECT pg_terminate_backend(" + pid + ")"); // the control's leftovers go
            }
        }
        return new Outcome(jobs.get(), timeouts.get(), overlaps.get(), failedUnlocks.get(), longest.get(),
                new ArrayList<>(errors), done.get(), left);
    }

    private void assertExclusiveAndBounded(Outcome o, String what) {
        System.out.println("lock with timeout, " + what + ": " + o);
        assertEquals(List.of(), o.otherErrors(), what + ": no error but the timeouts " + o);
        assertEquals(WORKERS, o.workersDone(), what + ": every worker ran all its tries " + o);
        assertEquals(WORKERS * TRIES, o.jobs() + o.timeouts(), what + ": every call got the lock or 55P03 " + o);
        assertTrue(o.jobs() >= WORKERS, what + ": jobs ran " + o);
        assertEquals(0, o.overlaps(), what + ": no two jobs at once " + o);
        assertEquals(0, o.failedUnlocks(), what + ": every unlock released the lock " + o);
        assertTrue(o.longestTimeoutMillis() < TIMEOUT_MS + 400, what + ": no wait much longer than its bound " + o);
        assertEquals(List.of(), o.left(), what + ": nothing left held " + o);
    }

    @Test
    void directPostgresIsTheReference() throws Exception {
        assertExclusiveAndBounded(workers(() -> bed.connect(Route.DIRECT)), "direct");
    }

    @Test
    void emulateThroughTheTransactionPoolerKeepsEveryPromise() throws Exception {
        assertExclusiveAndBounded(workers(() -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate")), "emulate, PgBouncer (system)");
        assertExclusiveAndBounded(workers(() -> bed.connectLockHygiene(Route.PREPARED_TRANSACTION_POOL,
                "lockhygiene.mode=emulate")), "emulate, PgBouncer (current)");
    }

    @Test
    void controlPlainPgjdbcThroughThePoolerBreaksIt() throws Exception {
        Outcome o = workers(() -> bed.connect(Route.TRANSACTION_POOL));
        System.out.println("lock with timeout, plain pgjdbc through the pooler: " + o);
        assertTrue(o.overlaps() > 0 || o.failedUnlocks() > 0 || !o.left().isEmpty() || !o.otherErrors().isEmpty(),
                "plain pgjdbc through the transaction pooler shows the bug: " + o);
    }
}
