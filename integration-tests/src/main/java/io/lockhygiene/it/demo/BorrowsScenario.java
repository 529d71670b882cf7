package io.lockhygiene.it.demo;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

/**
 * The everyday Spring pattern: every call borrows a connection. Threads try the job's lock on one borrow,
 * do the job on others and unlock on another. A run "overlaps" when another thread was inside the job at
 * the same time (counted in this JVM). The job itself may use the same pool while the lock is held: with more
 * threads than connections, that is the workload that empties the pool. Used by tests with and without the
 * agent, and by the Spring Boot tests (through {@link Calls} over a JdbcTemplate).
 */
public final class BorrowsScenario {

    /** The three calls of one try, each on a borrow of its own. */
    public interface Calls {
        boolean tryLock(long key) throws Exception;

        /** The job, run while the lock is held. */
        void job() throws Exception;

        boolean unlock(long key) throws Exception;
    }

    /**
     * @param threadsDone threads that went through all their tries (a thread that died early ran less)
     * @param finished every thread ended within the bound
     */
    public record Result(int threads, int threadsDone, int runs, int overlapping, int failedUnlocks, int errors,
                         boolean finished, String firstError) {
        @Override
        public String toString() {
            return "runs " + runs + ", overlapping " + overlapping + ", failed unlocks " + failedUnlocks + ", errors "
                    + errors + ", threads done " + threadsDone + "/" + threads + (finished ? "" : ", NOT FINISHED")
                    + (firstError == null ? "" : " (first error: " + firstError + ")");
        }
    }

    private BorrowsScenario() {
    }

    /** Calls on {@code ds}, each borrowing; the job runs {@code jobSql} (on a borrow of its own). */
    public static Calls over(DataSource ds, String jobSql) {
        return new Calls() {
            @Override
            public boolean tryLock(long key) throws Exception {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    return bool(s, "SELECT pg_try_advisory_lock(" + key + ")");
                }
            }

            @Override
            public void job() throws Exception {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute(jobSql);
                }
            }

            @Override
            public boolean unlock(long key) throws Exception {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    return bool(s, "SELECT pg_advisory_unlock(" + key + ")");
                }
            }
        };
    }

    /** The original shape: a short catalog read and 2 ms in the job. */
    public static Result run(DataSource ds, long key, int threads, int tries) throws InterruptedException {
        Calls calls = over(ds, "SELECT count(*) FROM pg_class");
        return run(new Calls() {
            @Override
            public boolean tryLock(long k) throws Exception {
                return calls.tryLock(k);
            }

            @Override
            public void job() throws Exception {
                calls.job();
                Thread.sleep(2);
            }

            @Override
            public boolean unlock(long k) throws Exception {
                return calls.unlock(k);
            }
        }, key, threads, tries, 120);
    }

    /**
     * {@code threads} threads, started together, each {@code tries} times: try the lock, and when it is got,
     * run the job and unlock. Waits at most {@code boundSeconds} for all of them.
     */
    public static Result run(Calls calls, long key, int threads, int tries, long boundSeconds)
            throws InterruptedException {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger overlapping = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger threadsDone = new AtomicInteger();
        List<String> errorTexts = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(threads);
        List<Thread> started = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < tries; i++) {
                        try {
                            if (calls.tryLock(key)) {
                                if (inside.incrementAndGet() > 1) {
                                    overlapping.incrementAndGet();
                                }
                                try {
                                    calls.job();
                                    runs.incrementAndGet();
                                } finally {
                                    inside.decrementAndGet();
                                    if (!calls.unlock(key)) {
                                        failedUnlocks.incrementAndGet();
                                    }
                                }
                            }
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            throw e;
                        } catch (Exception e) {
                            errors.incrementAndGet();
                            errorTexts.add(String.valueOf(e));
                        }
                    }
                    threadsDone.incrementAndGet();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    ended.countDown();
                }
            }, "borrower-" + w);
            started.add(t);
            t.start();
        }
        start.countDown();
        boolean finished = ended.await(boundSeconds, TimeUnit.SECONDS);
        if (!finished) {
            for (Thread t : started) {
                t.interrupt();
            }
            ended.await(10, TimeUnit.SECONDS);
        }
        return new Result(threads, threadsDone.get(), runs.get(), overlapping.get(), failedUnlocks.get(), errors.get(),
                finished, errorTexts.isEmpty() ? null : errorTexts.get(0));
    }
}
