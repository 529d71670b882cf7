package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.demo.WorkersScenario;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;
import static io.lockhygiene.bench.Workers.perSecond;

/** Section 4: emulate against hand-fixed code, acquisition latency, the holder's placement and key shapes. */
final class EmulateSection {

    static void emulate(TestBed bed, boolean full) throws Exception {
        int tries = full ? 100 : 40;
        WorkersScenario.Config config = new WorkersScenario.Config(8, tries, 10, 3);
        long key = 880_000;
        MD.append("## 4. Emulate versus hand-fixed code (8 workers, 3 servers, ").append(tries)
                .append(" tries each, 10 ms job)\n\n| variant | jobs run | overlapping | wall ms | jobs/s |\n|---|---|---|---|---|\n");
        WorkersScenario.Result em = WorkersScenario.run(config, ++key,
                () -> bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"), bed.admin());
        WorkersScenario.Result xact = xactWorkers(bed, config, ++key);
        for (Object[] row : new Object[][] {{"emulate (unchanged session-lock code)", em},
                {"pg_try_advisory_xact_lock in a transaction (hand-fixed)", xact}}) {
            WorkersScenario.Result r = (WorkersScenario.Result) row[1];
            MD.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %.1f |%n", row[0], r.runs(), r.overlappingRuns(),
                    r.wallMillis(), r.runs() * 1000.0 / r.wallMillis()));
        }
        MD.append("\n(Jobs run here depend on how often a try finds the key free before the workers' tries run out:"
                + " emulate answers a refused try without a round trip, so its workers use up their tries sooner. The"
                + " throughput comparison is the next table.)\n");
        // Throughput, same work both ways: 8 workers, every job under the lock.
        int jobs = full ? 40 : 15;
        MD.append("\n| throughput (8 workers, ").append(jobs).append(" jobs each, 3-server pool) | emulate jobs/s |"
                + " hand-fixed jobs/s | ratio |\n|---|---|---|---|\n");
        double[] oneKey = {jobsPerSecond(bed, jobs, 883_001, false, true), jobsPerSecond(bed, jobs, 883_002, false, false)};
        double[] ownKey = {jobsPerSecond(bed, jobs, 884_000, true, true), jobsPerSecond(bed, jobs, 885_000, true, false)};
        double ratio = oneKey[0] / oneKey[1];
        double ownRatio = ownKey[0] / ownKey[1];
        MD.append(String.format(Locale.ROOT, "| one key, blocking lock, job of 1 statement + 2 ms | %.1f | %.1f | %.2f |%n",
                oneKey[0], oneKey[1], ratio));
        MD.append(String.format(Locale.ROOT, "| own key per worker, lock + 5 statements + unlock | %.1f | %.1f | %.2f |%n",
                ownKey[0], ownKey[1], ownRatio));
        // The same autocommit shape with plain pgjdbc (wrong under the pooler; it tries instead of waiting,
        // since its own lock may be left on another server): what the shape itself costs against one
        // transaction per job.
        double shape = jobsPerSecond(bed, jobs, 886_000, true, true, false);
        MD.append(String.format(Locale.ROOT, "%nThe own-key shape with plain pgjdbc (session locks in autocommit, unsafe"
                + " under the pooler): %.1f jobs/s, %.2f of hand-fixed; emulate is %.2f of that.%n", shape,
                shape / ownKey[1], ownKey[0] / shape));
        JSON.put("emulate.ownKeyOfSameShape", ownKey[0] / shape);
        MD.append("\nHand-fixed: the same job inside a transaction with pg_advisory_xact_lock (goal: emulate at least 0.8).\n");
        JSON.put("emulate.oneKeyRatio", ratio);
        JSON.put("emulate.ownKeyRatio", ownRatio);
        int rounds = full ? 2000 : 500;
        long[] em1 = latency(bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"), rounds);
        long[] pooled = latency(bed.connect(Route.TRANSACTION_POOL), rounds);
        long[] direct = latency(bed.connect(Route.DIRECT), rounds);
        MD.append(String.format(Locale.ROOT, "%nUncontended acquisition (try + unlock), %d rounds, p50 / p99 µs: emulate through"
                + " the transaction pooler %d / %d; plain session lock through the same pooler %d / %d (ratio %.2f, goal at"
                + " most 2); plain session lock direct %d / %d.%n%n", rounds, em1[0], em1[1], pooled[0], pooled[1],
                em1[0] / (double) pooled[0], direct[0], direct[1]));
        WorkerPoolSection.workerPool(bed, full);
        placement(bed, full, jobs);
        keyShapes(bed, rounds);
        FenceSection.fence(bed, full);
        JSON.put("emulate.jobsPerSecond", em.runs() * 1000.0 / em.wallMillis());
        JSON.put("emulate.jobsRatio", ratio);
        JSON.put("emulate.p50us", em1[0]);
        JSON.put("emulate.p50ratioSamePooler", em1[0] / (double) pooled[0]);
    }

    /**
     * Jobs per second of 8 workers through the transaction pool, each job under an advisory lock: emulate
     * (unchanged session-lock code: lock, job, unlock in autocommit) or hand-fixed (the job in a transaction
     * that takes pg_advisory_xact_lock). {@code ownKey}: each worker its own key (no contention; five short
     * statements per job); else one key for all (blocking; a one-statement job and 2 ms).
     */
    private static double jobsPerSecond(TestBed bed, int jobs, long key, boolean ownKey, boolean emulate)
            throws Exception {
        return jobsPerSecond(bed, jobs, key, ownKey, emulate, emulate, "auto");
    }

    private static double jobsPerSecond(TestBed bed, int jobs, long key, boolean ownKey, boolean emulate,
                                        boolean guarded) throws Exception {
        return jobsPerSecond(bed, jobs, key, ownKey, emulate, guarded, "auto");
    }

    /**
     * @param guarded false: the session-lock code with plain pgjdbc (the shape's own cost)
     * @param holderUrl emulate: where the holder connects
     */
    private static double jobsPerSecond(TestBed bed, int jobs, long key, boolean ownKey, boolean emulate,
                                        boolean guarded, String holderUrl) throws Exception {
        return perSecond(8, (w, start, done) -> {
            long k = ownKey ? key + w : key;
            try (Connection c = guarded ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                    "lockhygiene.holderUrl=" + holderUrl) : bed.connect(Route.TRANSACTION_POOL);
                 Statement s = c.createStatement()) {
                c.setAutoCommit(emulate);
                start.await();
                for (int i = 0; i < jobs; i++) {
                    // the plain shape tries (a blocking call would wait for its own lock left on another server)
                    s.execute(!emulate ? "SELECT pg_advisory_xact_lock(" + k + ")"
                            : guarded ? "SELECT pg_advisory_lock(" + k + ")" : "SELECT pg_try_advisory_lock(" + k + ")");
                    if (ownKey) {
                        for (int j = 0; j < 5; j++) {
                            s.execute("SELECT " + j);
                        }
                    } else {
                        s.execute("SELECT count(*) FROM pg_class");
                        Thread.sleep(2);
                    }
                    if (emulate) {
                        s.execute("SELECT pg_advisory_unlock(" + k + ")");
                    } else {
                        c.commit();
                    }
                    done.incrementAndGet();
                }
            }
        });
    }

    /** The hand-fixed workers: the lock and the job in one transaction. */
    private static WorkersScenario.Result xactWorkers(TestBed bed, WorkersScenario.Config config, long key) throws Exception {
        List<long[]> runs = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int w = 0; w < config.workers(); w++) {
            Thread t = new Thread(() -> {
                try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
                    c.setAutoCommit(false);
                    for (int i = 0; i < config.tries(); i++) {
                        boolean got;
                        try (ResultSet rs = s.executeQuery("SELECT pg_try_advisory_xact_lock(" + key + ")")) {
                            rs.next();
                            got = rs.getBoolean(1);
                        }
                        if (got) {
                            long b = System.nanoTime();
                            s.execute("SELECT count(*) FROM pg_class");
                            Thread.sleep(config.jobMillis());
                            runs.add(new long[] {b, System.nanoTime()});
                        }
                        c.commit();
                        Thread.sleep(config.pauseMillis());
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        long wall = (System.nanoTime() - t0) / 1_000_000;
        int overlapping = WorkersScenario.countOverlapping(runs);
        return new WorkersScenario.Result(runs.size(), overlapping, 0, 0, 0, 0, wall, null);
    }

    private static long[] latency(Connection c, int rounds) throws SQLException {
        return latency(c, rounds, "881000");
    }

    /** p50 and p99 (µs) of try + unlock of one key written as {@code keyArgs}, uncontended. */
    private static long[] latency(Connection c, int rounds, String keyArgs) throws SQLException {
        long[] lat = new long[rounds];
        try (c; Statement s = c.createStatement()) {
            for (int i = 0; i < rounds; i++) {
                long t0 = System.nanoTime();
                s.execute("SELECT pg_try_advisory_lock(" + keyArgs + ")");
                s.execute("SELECT pg_advisory_unlock(" + keyArgs + ")");
                lat[i] = (System.nanoTime() - t0) / 1000;
            }
        }
        java.util.Arrays.sort(lat);
        return new long[] {lat[rounds / 2], lat[(int) (rounds * 0.99)]};
    }

    /**
     * Where the holder connects: the server itself (holderUrl=auto, the default behind a pooler) against the
     * application's transaction pooler (holderUrl=pooler): uncontended try + unlock, and throughput of one
     * contended key and of one key per worker, interleaved.
     */
    private static void placement(TestBed bed, boolean full, int jobs) throws Exception {
        int rounds = full ? 2000 : 500;
        MD.append("\n| holder placement | try + unlock p50 / p99 µs | one key, jobs/s | own key, jobs/s |\n|---|---|---|---|\n");
        String[][] placements = {{"on the server itself (holderUrl=auto)", "auto"}, {"through the pooler (holderUrl=pooler)", "pooler"}};
        for (String[] p : placements) {
            long[] lat = latency(bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                    "lockhygiene.holderUrl=" + p[1]), rounds);
            double one = jobsPerSecond(bed, jobs, 887_001, false, true, true, p[1]);
            double own = jobsPerSecond(bed, jobs, 887_100, true, true, true, p[1]);
            MD.append(String.format(Locale.ROOT, "| %s | %d / %d | %.1f | %.1f |%n", p[0], lat[0], lat[1], one, own));
            JSON.put("placement." + p[1] + ".p50us", lat[0]);
            JSON.put("placement." + p[1] + ".oneKeyJobsPerSecond", one);
            JSON.put("placement." + p[1] + ".ownKeyJobsPerSecond", own);
            io.lockhygiene.it.bed.Holders.reset(); // the next placement gets a holder of its own
        }
        MD.append('\n');
    }


    /** The cost of a key written as an expression against an integer key (its value asked once, then known). */
    private static void keyShapes(TestBed bed, int rounds) throws Exception {
        MD.append("| key shape, emulate, uncontended try + unlock | p50 µs | p99 µs |\n|---|---|---|\n");
        String[][] shapes = {{"integer literal", "881100"}, {"class id and hashtext('...') (value known after the first)",
                "7742, hashtext('report-daily')"}, {"hashtextextended('...', 0)", "hashtextextended('job-1', 0)"}};
        for (String[] sh : shapes) {
            long[] lat = latency(bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"), rounds, sh[1]);
            MD.append(String.format(Locale.ROOT, "| %s | %d | %d |%n", sh[0], lat[0], lat[1]));
            JSON.put("keyShape." + sh[0] + ".p50us", lat[0]);
        }
        MD.append('\n');
    }

    private EmulateSection() {
    }
}
