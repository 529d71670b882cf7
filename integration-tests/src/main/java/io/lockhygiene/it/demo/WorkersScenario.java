package io.lockhygiene.it.demo;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.it.bed.BedAdmin;

/**
 * The brief's workers: each guards one job with a session advisory lock taken in autocommit
 * ({@code pg_try_advisory_lock}), runs the job in its own statements, then {@code pg_advisory_unlock}.
 * A run "overlaps" when another worker's run was in progress at the same time: the job ran twice.
 * Reused by the demo and by scenario tests.
 */
public final class WorkersScenario {

    /**
     * How hard to push: the brief used 8 workers x 60 tries. {@code blocking}: workers wait with
     * {@code pg_advisory_lock} instead of trying with {@code pg_try_advisory_lock}.
     */
    public record Config(int workers, int tries, int jobMillis, int pauseMillis, boolean blocking) {
        public Config(int workers, int tries, int jobMillis, int pauseMillis) {
            this(workers, tries, jobMillis, pauseMillis, false);
        }

        public static Config standard() {
            return new Config(8, 60, 20, 5);
        }
    }

    /** Opens the connection a worker uses for its whole life. */
    @FunctionalInterface
    public interface ConnectionSource {
        Connection open() throws SQLException;
    }

    public record Result(int runs, int overlappingRuns, int skippedTries, int failedUnlocks, int errors,
                         int locksLeftHeld, long wallMillis, String firstError) {
    }

    private WorkersScenario() {
    }

    public static Result run(Config config, long key, ConnectionSource source, BedAdmin admin)
            throws SQLException, InterruptedException {
        List<long[]> runs = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger skipped = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        List<String> errorTexts = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < config.workers(); w++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    worker(config, key, source, runs, skipped, failedUnlocks, errors, errorTexts);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "worker-" + w);
            threads.add(t);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long wall = (System.nanoTime() - t0) / 1_000_000;
        // Every worker has closed its connection: whatever is still held now was left behind. Give
        // PgBouncer's session-mode reset and exiting backends a moment before looking.
        List<Integer> left = admin.awaitReleased(key, 1_000);
        admin.terminateHoldersOf(key);
        return new Result(runs.size(), countOverlapping(runs), skipped.get(), failedUnlocks.get(), errors.get(),
                left.size(), wall, errorTexts.isEmpty() ? null : errorTexts.get(0));
    }

    private static void worker(Config config, long key, ConnectionSource source, List<long[]> runs,
                               AtomicInteger skipped, AtomicInteger failedUnlocks, AtomicInteger errors,
                               List<String> errorTexts) throws InterruptedException {
        try (Connection c = source.open(); Statement s = c.createStatement()) {
            for (int i = 0; i < config.tries(); i++) {
                try {
                    boolean got;
                    if (config.blocking()) {
                        s.execute("SELECT pg_advisory_lock(" + key + ")");
                        got = true;
                    } else {
                        got = bool(s, "SELECT pg_try_advisory_lock(" + key + ")");
                    }
                    if (!got) {
                        skipped.incrementAndGet();
                    } else {
                        long begin = System.nanoTime();
                        s.execute("SELECT count(*) FROM pg_class"); // the job's own statements
                        Thread.sleep(config.jobMillis());
                        s.execute("SELECT now()");
                        long end = System.nanoTime();
                        runs.add(new long[] {begin, end});
                        if (!bool(s, "SELECT pg_advisory_unlock(" + key + ")")) {
                            failedUnlocks.incrementAndGet(); // ran on a backend that does not hold it
                        }
                    }
                } catch (SQLException e) {
                    errors.incrementAndGet();
                    errorTexts.add(e.getMessage());
                }
                Thread.sleep(config.pauseMillis());
            }
        } catch (SQLException e) {
            errors.incrementAndGet();
            errorTexts.add(e.getMessage());
        }
    }


    /** Runs whose [begin, end] intersects at least one other run's. */
    public static int countOverlapping(List<long[]> runs) {
        List<long[]> sorted = new ArrayList<>(runs);
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        boolean[] overlaps = new boolean[sorted.size()];
        for (int i = 0; i < sorted.size(); i++) {
            for (int j = i + 1; j < sorted.size() && sorted.get(j)[0] < sorted.get(i)[1]; j++) {
                overlaps[i] = true;
                overlaps[j] = true;
            }
        }
        int n = 0;
        for (boolean b : overlaps) {
            n += b ? 1 : 0;
        }
        return n;
    }
}
