package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.holder.HolderStats;
import io.lockhygiene.internal.holder.Holders;
import io.lockhygiene.it.bed.TcpProxy;
import io.lockhygiene.it.bed.TestBed;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;

/**
 * Section 4, the worker pool (issue 36): workers of a job queue, each locking its own job, through a
 * transaction-mode PgBouncer of four servers. Emulate runs the unchanged session-lock code
 * ({@code pg_advisory_lock(k)}, five {@code SELECT}s, {@code pg_advisory_unlock(k)} in autocommit); hand-fixed
 * is what a user could write instead with plain pgjdbc ({@code BEGIN; pg_advisory_xact_lock(k);} the same five;
 * {@code COMMIT}). Timed rounds, the two alternating, so that a slower minute of this shared machine falls
 * on both; then the profile of the holder's main session over emulate's rounds.
 */
final class WorkerPoolSection {
    private static final int[] WORKERS = {1, 8, 32};
    /** Emulate with one holder session (the default), then with four (lockhygiene.holderSessions=4). */
    private static final int EMULATE_ONE = 0;
    private static final int EMULATE_FOUR = 1;
    private static final int HAND_FIXED = 2;
    /** The session-lock code with plain pgjdbc in autocommit: unsafe under the pooler, what the shape itself costs. */
    private static final int SAME_SHAPE = 3;
    private static final int VARIANTS = 4;
    /** The network of the second table: each way, in front of PgBouncer and of the server. */
    private static final long NETWORK_DELAY_MICROS = 250;

    static void workerPool(TestBed bed, boolean full) throws Exception {
        int rounds = 3;
        long roundMillis = full ? 4000 : 2000;
        String direct = bed.url(io.lockhygiene.it.bed.Route.DIRECT);
        // a current PgBouncer first where there is one: PgBouncer 1.18 (Debian 12's) sends SET DateStyle before
        // every transaction of a pgjdbc client (it compares the client's "ISO" with the server's "ISO, MDY"),
        // a round trip more for each autocommit statement that hand-fixed code pays once per job
        String currentVersion = bed.currentPgBouncerVersion();
        boolean current = currentVersion != null;
        String pool = bed.workerPoolUrl(current);
        String system = bed.endpoints().pgbouncerVersion().replaceFirst("^PgBouncer ", "");
        String version = current ? currentVersion.replaceFirst("^PgBouncer ", "") : system;
        MD.append("## 4a. Worker pool: own key per worker, four-server transaction pool (").append(rounds)
                .append(" alternating rounds of ").append(roundMillis / 1000).append(" s per variant)\n\n");
        table(bed, "On this machine, PgBouncer " + version + " (loopback: every client shares its 2 cores with PgBouncer"
                + " and PostgreSQL)", pool, "auto", rounds, roundMillis, 890_000, "workerPool.loopback.");
        try (TcpProxy toPool = new TcpProxy(TcpProxy.portOf(pool), NETWORK_DELAY_MICROS);
             TcpProxy toServer = new TcpProxy(TcpProxy.portOf(direct), NETWORK_DELAY_MICROS)) {
            table(bed, "Across a network, PgBouncer " + version + ": " + NETWORK_DELAY_MICROS + " µs each way in front"
                    + " of PgBouncer and of the server (the holder connects there: holderUrl)",
                    toPool.via(pool), toServer.via(direct), rounds, roundMillis, 895_000,
                    "workerPool.network.");
        }
        if (current && !system.equals(version)) {
            String older = bed.workerPoolUrl(false);
            table(bed, "On this machine, the system's PgBouncer " + system + " (loopback;"
                    + " it sends SET DateStyle before each transaction of a pgjdbc client)", older, "auto", rounds,
                    roundMillis, 897_000, "workerPool.loopbackSystemPgBouncer.");
        }
        MD.append("Emulate 1 and 4: lockhygiene.holderSessions=1 (the default) and 4. Round trips, batch sizes and waits"
                + " are the holder's main sessions over emulate's rounds (`Holder.stats()`); a request is a thread that"
                + " needed a session (a take, or releases to wait for). Same shape: the unchanged session-lock code"
                + " with plain pgjdbc (unsafe under the pooler): what autocommit statements through the pooler cost"
                + " by themselves.\n\n");
    }

    /**
     * Issue 45: the unchanged own-key workers under the default settings (no lockhygiene.* setting: emulate)
     * against hand-fixed code, at 8 and 32 workers through the current PgBouncer, in one run: {@code rounds}
     * alternating rounds per worker count, each pair in turning order so neither variant always goes first.
     */
    static void defaultWorkers(TestBed bed, boolean full) throws Exception {
        int asked = Integer.getInteger("bench.rounds", 0);
        int rounds = asked > 0 ? asked : full ? 6 : 3;
        // warm-up rounds first, shown and not counted (as JMH's warm-up iterations): the JIT compiles pgjdbc's
        // and LockHygiene's paths over the first 8 s or so, and the variant that runs first would pay for both
        int warmup = Integer.getInteger("bench.warmup", 2);
        long roundMillis = full ? 4000 : 2000;
        String pool = bed.workerPoolUrl(bed.currentPgBouncerVersion() != null);
        String version = bed.currentPgBouncerVersion() != null ? bed.currentPgBouncerVersion() : bed.endpoints().pgbouncerVersion();
        String defaults = "jdbc:lockhygiene:" + pool.substring("jdbc:".length());
        MD.append("## 4d. Own-key workers under the default settings against hand-fixed code (").append(version)
                .append(", four servers, loopback; ").append(rounds).append(" alternating rounds of ")
                .append(roundMillis / 1000).append(" s, after ").append(warmup).append(" warm-up rounds shown as w1, w2, ... and not counted)\n\n| workers | round | default jobs/s | hand-fixed jobs/s | ratio | machine CPU per job µs: default / hand-fixed | JVM CPU per job µs: default / hand-fixed |\n|---|---|---|---|---|---|---|\n");
        long key = 899_000;
        for (int workers : new int[] {8, 32}) {
            long[] jobs = new long[2];
            long[] nanos = new long[2];
            long[] machine = new long[2];
            long[] jvm = new long[2];
            for (int r = -warmup; r < rounds; r++) {
                boolean counted = r >= 0;
                double[] perSecond = new double[2];
                double[][] cpu = new double[2][2];
                for (int i = 0; i < 2; i++) {
                    int variant = (Math.floorMod(r, 2) == 0) == (i == 0) ? EMULATE_ONE : HAND_FIXED; // turning order
                    long[] got = ownKeyRound(bed, variant == EMULATE_ONE ? defaults : pool, variant, workers, key, roundMillis);
                    int at = variant == EMULATE_ONE ? 0 : 1;
                    if (counted) {
                        jobs[at] += got[0];
                        nanos[at] += got[1];
                        machine[at] += got[2];
                        jvm[at] += got[3];
                    }
                    perSecond[at] = got[0] * 1e9 / got[1];
                    cpu[at][0] = got[2] / (double) Math.max(1, got[0]);
                    cpu[at][1] = got[3] / (double) Math.max(1, got[0]);
                }
                key += 100;
                MD.append(String.format(Locale.ROOT, "| %d | %s | %.0f | %.0f | %.2f | %.0f / %.0f | %.0f / %.0f |%n", workers,
                        counted ? String.valueOf(r + 1) : "w" + (r + warmup + 1), perSecond[0], perSecond[1], perSecond[0] / perSecond[1], cpu[0][0], cpu[1][0], cpu[0][1], cpu[1][1]));
            }
            double ratio = (jobs[0] * 1e9 / nanos[0]) / (jobs[1] * 1e9 / nanos[1]);
            MD.append(String.format(Locale.ROOT, "| %d | all | %.0f | %.0f | **%.2f** | %.0f / %.0f | %.0f / %.0f |%n", workers,
                    jobs[0] * 1e9 / nanos[0], jobs[1] * 1e9 / nanos[1], ratio, machine[0] / (double) jobs[0],
                    machine[1] / (double) jobs[1], jvm[0] / (double) jobs[0], jvm[1] / (double) jobs[1]));
            JSON.put("defaultWorkers." + workers + ".ratio", ratio);
            System.out.printf("[bench] default workers, %d workers: ratio %.2f%n", workers, ratio);
        }
        io.lockhygiene.it.bed.Holders.reset();
        MD.append('\n');
    }

    private static void table(TestBed bed, String title, String pool, String holderUrl, int rounds, long roundMillis,
                              long firstKey, String jsonPrefix) throws Exception {
        String emulate = "jdbc:lockhygiene:" + pool.substring("jdbc:".length()) + (pool.contains("?") ? "&" : "?")
                + "lockhygiene.mode=emulate&lockhygiene.holderUrl=" + holderUrl + "&lockhygiene.holderSessions=";
        String[] urls = {emulate + "1", emulate + "4", pool, pool};
        MD.append("**").append(title).append("**\n\n| workers | emulate 1 jobs/s | emulate 4 jobs/s | hand-fixed jobs/s"
                + " | ratio 1 / 4 | same shape jobs/s | holder round trips per job 1 / 4 | requests per round trip 1 / 4"
                + " | waited per request µs 1 / 4 | machine CPU per job µs: emulate 1 / hand-fixed / same shape |\n"
                + "|---|---|---|---|---|---|---|---|---|---|\n");
        long key = firstKey;
        for (int workers : WORKERS) {
            long[] jobs = new long[VARIANTS];
            long[] nanos = new long[VARIANTS];
            long[] cpu = new long[VARIANTS];
            long[][] stats = new long[2][7];
            for (int r = 0; r < rounds; r++) {
                for (int variant = 0; variant < VARIANTS; variant++) {
                    boolean emulating = variant == EMULATE_ONE || variant == EMULATE_FOUR;
                    if (emulating) {
                        io.lockhygiene.it.bed.Holders.reset(); // a holder of this variant's setting, its counts from zero
                    }
                    long[] got = ownKeyRound(bed, urls[variant], variant, workers, key, roundMillis);
                    jobs[variant] += got[0];
                    nanos[variant] += got[1];
                    cpu[variant] += got[2];
                    if (emulating) {
                        long[] s1 = holderStats();
                        for (int i = 0; i < s1.length; i++) {
                            stats[variant][i] += s1[i];
                        }
                    }
                }
                key += 100;
            }
            io.lockhygiene.it.bed.Holders.reset();
            double[] perSecond = new double[VARIANTS];
            for (int v = 0; v < VARIANTS; v++) {
                perSecond[v] = jobs[v] * 1e9 / nanos[v];
            }
            long[] one = stats[EMULATE_ONE];
            long[] four = stats[EMULATE_FOUR];
            MD.append(String.format(Locale.ROOT, "| %d | %.0f | %.0f | %.0f | %.2f / %.2f | %.0f | %.2f / %.2f | %.2f / %.2f"
                    + " | %.0f / %.0f | %.0f / %.0f / %.0f |%n", workers, perSecond[EMULATE_ONE], perSecond[EMULATE_FOUR], perSecond[HAND_FIXED],
                    perSecond[EMULATE_ONE] / perSecond[HAND_FIXED], perSecond[EMULATE_FOUR] / perSecond[HAND_FIXED],
                    perSecond[SAME_SHAPE], one[0] / (double) Math.max(1, jobs[EMULATE_ONE]),
                    four[0] / (double) Math.max(1, jobs[EMULATE_FOUR]), perRoundTrip(one), perRoundTrip(four),
                    waited(one), waited(four), cpu[EMULATE_ONE] / (double) Math.max(1, jobs[EMULATE_ONE]),
                    cpu[HAND_FIXED] / (double) Math.max(1, jobs[HAND_FIXED]), cpu[SAME_SHAPE] / (double) Math.max(1, jobs[SAME_SHAPE])));
            String at = jsonPrefix + workers;
            JSON.put(at + ".emulateOneJobsPerSecond", perSecond[EMULATE_ONE]);
            JSON.put(at + ".emulateFourJobsPerSecond", perSecond[EMULATE_FOUR]);
            JSON.put(at + ".handFixedJobsPerSecond", perSecond[HAND_FIXED]);
            JSON.put(at + ".ratioOne", perSecond[EMULATE_ONE] / perSecond[HAND_FIXED]);
            JSON.put(at + ".ratioFour", perSecond[EMULATE_FOUR] / perSecond[HAND_FIXED]);
            System.out.printf("[bench] %s, %d workers: emulate %.0f (1 session) / %.0f (4) jobs/s, hand-fixed %.0f, same"
                    + " shape %.0f%n", at, workers, perSecond[EMULATE_ONE], perSecond[EMULATE_FOUR], perSecond[HAND_FIXED],
                    perSecond[SAME_SHAPE]);
        }
        MD.append('\n');
    }

    private static double perRoundTrip(long[] s) {
        return s[0] == 0 ? 0.0 : (s[1] + s[2]) / (double) s[0];
    }

    private static double waited(long[] s) {
        return s[3] == 0 ? 0.0 : s[5] / 1e3 / s[3];
    }

    /** Jobs done and nanoseconds taken by {@code workers} threads, each on its own connection and key. */
    private static long[] ownKeyRound(TestBed bed, String url, int variant, int workers, long key, long millis)
            throws Exception {
        boolean autocommit = variant != HAND_FIXED;
        boolean emulating = variant == EMULATE_ONE || variant == EMULATE_FOUR;
        List<Connection> connections = new ArrayList<>();
        try {
            for (int w = 0; w < workers; w++) {
                Connection c = DriverManager.getConnection(url, bed.credentials());
                c.setAutoCommit(autocommit);
                connections.add(c);
            }
            AtomicInteger done = new AtomicInteger();
            long cpu0 = machineCpuMicros();
            long jvm0 = jvmCpuMicros();
            long took = Workers.run(workers, done, (w, start, jobs) -> {
                Connection c = connections.get(w);
                long k = key + w;
                try (Statement s = c.createStatement()) {
                    start.await();
                    long deadline = System.nanoTime() + millis * 1_000_000L;
                    while (System.nanoTime() < deadline) {
                        // the plain shape tries: a blocking call would wait for its own lock left on another server
                        s.execute((emulating ? "SELECT pg_advisory_lock(" : variant == HAND_FIXED
                                ? "SELECT pg_advisory_xact_lock(" : "SELECT pg_try_advisory_lock(") + k + ")");
                        for (int j = 0; j < 5; j++) {
                            s.execute("SELECT " + j);
                        }
                        if (autocommit) {
                            s.execute("SELECT pg_advisory_unlock(" + k + ")");
                        } else {
                            c.commit();
                        }
                        jobs.incrementAndGet();
                    }
                }
            });
            long cpu = machineCpuMicros() - cpu0;
            long jvm = jvmCpuMicros() - jvm0;
            return new long[] {done.get(), took, cpu, jvm};
        } finally {
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    /** CPU time of the whole machine so far (every process: the JVM, PgBouncer, PostgreSQL), from /proc/stat; 0 elsewhere. */
    static long machineCpuMicros() {
        try {
            String[] f = java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length; i++) {
                if (i != 4 && i != 5) { // idle and iowait
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy * 10_000L; // USER_HZ is 100 on Linux
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
    }

    /** CPU time of this JVM so far (workers, LockHygiene, pgjdbc, the JIT and the GC). */
    static long jvmCpuMicros() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean
                ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1000 : 0;
    }

    /** roundTrips, takes, releases, requests, carried, waitNanos, roundTripNanos: over the process's holders. */
    private static long[] holderStats() {
        long[] sum = new long[7];
        for (Holder h : Holders.all()) {
            HolderStats.Snapshot x = h.stats();
            long[] v = {x.roundTrips, x.takes, x.releases, x.requests, x.carriedByOthers, x.waitNanos, x.roundTripNanos};
            for (int i = 0; i < sum.length; i++) {
                sum[i] += v[i];
            }
        }
        return sum;
    }

    private WorkerPoolSection() {
    }
}
