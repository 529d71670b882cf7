package io.lockhygiene.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.demo.Client;
import io.lockhygiene.it.demo.WorkersScenario;

/**
 * Every figure of the benchmarks issue in one run: {@code quick} (a few minutes) or {@code full}. Writes
 * BENCHMARKS.md-ready tables to target/benchmarks/results.md and the figures to results.json.
 */
public final class RunBenchmarks {
    private static final StringBuilder MD = new StringBuilder();
    private static final Map<String, Object> JSON = new LinkedHashMap<>();

    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && "full".equals(args[0]);
        MD.append("Mode: ").append(full ? "full" : "quick").append("; JVM ").append(System.getProperty("java.version"))
                .append("; ").append(Runtime.getRuntime().availableProcessors()).append(" cores\n\n");
        // -Dbench.only=emulate: only section 4 (a minute instead of several); -Dbench.only=leakcheck: only
        // section 2's transaction-pool rows for plain pgjdbc, tracked without and with the default sample, and
        // always (the leak check's cost), and section 3
        String only = System.getProperty("bench.only", "");
        boolean all = only.isEmpty() || "all".equals(only);
        if (all) {
            hotPath(full);
            memory();
        }
        try (TestBed bed = TestBed.start()) {
            MD.append("Servers: ").append(bed.endpoints().postgresVersion()).append(", ")
                    .append(bed.endpoints().pgbouncerVersion()).append(" (transaction pool: 3 servers)\n\n");
            EndToEnd.schema(bed);
            if (all) {
                endToEnd(bed, full, false);
                serverWork(bed);
            }
            if ("leakcheck".equals(only)) {
                endToEnd(bed, full, true);
                serverWork(bed);
            }
            if (all || "emulate".equals(only)) {
                emulate(bed, full);
            }
            if ("fence".equals(only)) { // -Dbench.only=fence: only the commit fence's rows of section 4
                fence(bed, full);
            }
        }
        Path out = Paths.get("target", "benchmarks");
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.md"), MD.toString());
        Files.writeString(out.resolve("results.json"), json(JSON));
        System.out.println("\n" + MD);
        System.out.println("Written: " + out.toAbsolutePath().resolve("results.md") + " and results.json");
    }

    private static void hotPath(boolean full) throws Exception {
        Options opts = new OptionsBuilder()
                .include(io.lockhygiene.internal.guard.HotPathBenchmark.class.getName())
                .forks(1)
                .warmupIterations(full ? 5 : 2).warmupTime(TimeValue.seconds(1))
                .measurementIterations(full ? 10 : 3).measurementTime(TimeValue.seconds(1))
                .addProfiler("gc")
                .shouldFailOnError(true)
                .build();
        List<String> rows = new ArrayList<>();
        Map<String, double[]> byKey = new LinkedHashMap<>();
        for (RunResult r : new Runner(opts).run()) {
            String name = r.getParams().getBenchmark().replaceAll(".*\\.", "");
            String size = r.getParams().getParam("size");
            double ns = r.getPrimaryResult().getScore();
            double err = r.getPrimaryResult().getScoreError();
            double alloc = r.getSecondaryResults().containsKey("gc.alloc.rate.norm")
                    ? r.getSecondaryResults().get("gc.alloc.rate.norm").getScore() : Double.NaN;
            byKey.put(name + "/" + size, new double[] {ns, err, alloc});
        }
        MD.append("## 1. Hot path (JMH, ns/op, allocation B/op)\n\n")
                .append("| benchmark | SQL size | ns/op | ± | B/op |\n|---|---|---|---|---|\n");
        for (Map.Entry<String, double[]> e : byKey.entrySet()) {
            String[] k = e.getKey().split("/");
            double[] v = e.getValue();
            MD.append(String.format(Locale.ROOT, "| %s | %s | %.1f | %.1f | %.1f |%n", k[0], k[1], v[0], v[1], v[2]));
        }
        MD.append("\nLayer cost (guardedExecute - plainExecute):\n\n| SQL size | added ns | goal |\n|---|---|---|\n");
        for (String size : List.of("100", "1000", "100000")) {
            double added = byKey.get("guardedExecute/" + size)[0] - byKey.get("plainExecute/" + size)[0];
            MD.append(String.format(Locale.ROOT, "| %s | %.1f | %s |%n", size, added, "100".equals(size) ? "< 100 ns" : "linear"));
            JSON.put("hotPath.addedNs." + size, added);
            JSON.put("hotPath.allocBytes." + size, byKey.get("guardedExecute/" + size)[2] - byKey.get("plainExecute/" + size)[2]);
        }
        MD.append('\n');
        rows.clear();
    }

    private static void memory() throws Exception {
        java.lang.reflect.Method wrap = io.lockhygiene.internal.jdbc.LockHygieneConnection.class.getMethod("wrap",
                Connection.class, io.lockhygiene.settings.Settings.class, io.lockhygiene.internal.placement.HolderRoute.class);
        Connection raw = (Connection) java.lang.reflect.Proxy.newProxyInstance(RunBenchmarks.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (p, m, a) -> "createStatement".equals(m.getName())
                        ? new NoopStatement((Connection) p) : m.getReturnType() == boolean.class
                        ? Boolean.valueOf("getAutoCommit".equals(m.getName())) : null);
        io.lockhygiene.settings.Settings session = io.lockhygiene.settings.Settings.builder()
                .poolMode(io.lockhygiene.settings.Settings.PoolMode.SESSION).build();
        Connection c = (Connection) wrap.invoke(null, raw, session, null);
        Statement s = c.createStatement();
        String[] texts = new String[10_000];
        for (int i = 0; i < texts.length; i++) {
            texts[i] = i % 2 == 0 ? "SELECT * FROM t WHERE id = " + i + " /* not advisory */"
                    : "SELECT status FROM jobs WHERE id = " + i;
        }
        long before = usedHeapAfterGc();
        for (int i = 0; i < 1_000_000; i++) {
            s.execute(texts[i % texts.length]);
        }
        long after = usedHeapAfterGc();
        MD.append("## 6. Memory\n\n1,000,000 statements of 10,000 distinct texts (half pass the prefilter and are cached):"
                + " heap after GC grew by ").append((after - before) / 1024).append(" KiB (verdict cache bounded at "
                + "2048 entries).\n\n");
        JSON.put("memory.heapGrowthKiB", (after - before) / 1024);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void endToEnd(TestBed bed, boolean full, boolean leakCheckOnly) throws Exception {
        long millis = full ? 10_000 : 2_000;
        int reps = full ? 3 : 2;
        List<Client> clients = leakCheckOnly
                ? List.of(Client.plain(),
                        Client.lockHygiene("detect, tracked, no sample", "lockhygiene.leakCheckSample=0"),
                        Client.lockHygiene("detect, tracked + sample 0.005 (default)"),
                        Client.lockHygiene("detect, tracked + sample 0.01", "lockhygiene.leakCheckSample=0.01"),
                        Client.lockHygiene("detect, leakCheck=always", "lockhygiene.leakCheck=always"))
                : List.of(Client.plain(),
                Client.lockHygiene("detect, tracked + sample 0.005 (default)"),
                Client.lockHygiene("detect, leakCheck=always", "lockhygiene.leakCheck=always"),
                Client.lockHygiene("emulate", "lockhygiene.mode=emulate"));
        MD.append("## 2. End to end: small transactions (SELECT + UPDATE + COMMIT), interleaved A/B, ")
                .append(reps).append(" x ").append(millis / 1000).append(" s per cell\n\n")
                .append("| route | threads | client | tx/s | ratio | p50 µs | p50 ratio | p99 µs | p99 ratio | errors |\n")
                .append("|---|---|---|---|---|---|---|---|---|---|\n");
        // leakcheck: the transaction-pool rows again with the two statements in autocommit (each its own
        // transaction, which leakCheck=always wraps to check its end)
        List<Route> routes = leakCheckOnly ? List.of(Route.TRANSACTION_POOL, Route.TRANSACTION_POOL)
                : List.of(Route.TRANSACTION_POOL, Route.DIRECT);
        for (int ri = 0; ri < routes.size(); ri++) {
            Route route = routes.get(ri);
            boolean autocommit = leakCheckOnly && ri == 1;
            for (int threads : List.of(1, 8, 32)) {
                Map<String, EndToEnd.Result> sum = new LinkedHashMap<>();
                for (int rep = 0; rep < reps; rep++) {
                    for (Client client : clients) {
                        EndToEnd.Result r = EndToEnd.run(bed, route, client, threads, millis, autocommit);
                        sum.computeIfAbsent(client.label(), k -> new EndToEnd.Result()).add(r);
                    }
                }
                EndToEnd.Result base = sum.get("plain pgjdbc");
                for (Map.Entry<String, EndToEnd.Result> e : sum.entrySet()) {
                    EndToEnd.Result r = e.getValue();
                    double ratio = r.tps() / base.tps();
                    MD.append(String.format(Locale.ROOT, "| %s | %d | %s | %.0f | %.3f | %.0f | %.3f | %.0f | %.3f | %d |%n",
                            route.label() + (autocommit ? ", autocommit" : ""), threads, e.getKey(), r.tps(), ratio, r.percentileMicros(0.5),
                            r.percentileMicros(0.5) / base.percentileMicros(0.5), r.percentileMicros(0.99),
                            r.percentileMicros(0.99) / base.percentileMicros(0.99), r.errors));
                    JSON.put("e2e." + route.name() + (autocommit ? ".autocommit" : "") + "." + threads + "." + e.getKey() + ".ratio", ratio);
                }
            }
        }
        MD.append('\n');
    }

    private static void serverWork(TestBed bed) throws Exception {
        MD.append("## 3. Statements the server executes per application transaction (pg_stat_statements)\n\n")
                .append("| workload | client | statements per transaction |\n|---|---|---|\n");
        String[][] cases = {
                {"no advisory lock", "plain", ""},
                {"no advisory lock", "lockhygiene detect", ""},
                {"no advisory lock", "lockhygiene detect, leakCheck=always", "lockhygiene.leakCheck=always"},
                {"pg_advisory_lock in the transaction", "plain", ""},
                {"pg_advisory_lock in the transaction", "lockhygiene detect", ""},
        };
        for (String[] c : cases) {
            boolean lock = c[0].startsWith("pg_advisory");
            int n = 200;
            resetStats(bed);
            try (Connection conn = "plain".equals(c[1]) ? bed.connect(Route.TRANSACTION_POOL)
                    : bed.connectLockHygiene(Route.TRANSACTION_POOL, c[2].isEmpty() ? new String[0] : new String[] {c[2]});
                 Statement s = conn.createStatement()) {
                conn.setAutoCommit(false);
                for (int i = 0; i < n; i++) {
                    if (lock) {
                        s.execute("SELECT pg_advisory_lock(777000)");
                    }
                    s.execute("SELECT abalance FROM bench_accounts WHERE aid = 1");
                    s.execute("UPDATE bench_accounts SET abalance = abalance + 1 WHERE aid = 1");
                    if (lock) {
                        s.execute("SELECT pg_advisory_unlock(777000)");
                    }
                    conn.commit();
                }
            }
            double per = statements(bed) / (double) n;
            MD.append(String.format(Locale.ROOT, "| %s | %s | %.2f |%n", c[0], c[1], per));
            JSON.put("serverWork." + c[0] + "." + c[1], per);
            bed.admin().terminateHoldersOf(777000);
        }
        MD.append("\nThe leak check adds its one statement (it lists and releases) to the COMMIT's own round trip: one"
                + " JDBC execute, one Sync, so no extra round trip.\n\n");
    }

    private static void resetStats(TestBed bed) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_stat_statements_reset()");
        }
    }

    /** Statements counted in our database since the reset, less the counting query itself. */
    private static long statements(TestBed bed) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_database d"
                     + " ON d.oid = s.dbid WHERE d.datname = current_database() AND s.query NOT LIKE '%pg_stat_statements%'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void emulate(TestBed bed, boolean full) throws Exception {
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
        placement(bed, full, jobs);
        keyShapes(bed, rounds);
        fence(bed, full);
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
            io.lockhygiene.internal.holder.Holders.resetForTests(); // the next placement gets a holder of its own
        }
        MD.append('\n');
    }

    /**
     * What the commit fence costs (issue 33): own-key workers whose job runs its statements on the connection that
     * holds the lock (every autocommit statement, or the transaction's COMMIT, carries the fence) against the
     * same job with its statements on a second connection of the worker that holds nothing (no fence; the same
     * round trips otherwise), interleaved; workers without locks under emulate against plain pgjdbc; and the
     * window between the fence's check and the end of the commit, as the server's clock sees it.
     */
    private static void fence(TestBed bed, boolean full) throws Exception {
        int jobs = full ? 200 : 60;
        int rounds = full ? 5 : 3;
        MD.append("\n| commit fence, 8 own-key workers, ").append(jobs).append(" jobs of 5 statements each,"
                + " 3-server pool | fenced jobs/s | unfenced jobs/s | ratio |\n|---|---|---|---|\n");
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS fence_rows (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO fence_rows (id) SELECT g FROM generate_series(0, 7) g ON CONFLICT DO NOTHING");
        }
        String[][] shapes = {{"SELECT ?::int", "5 x SELECT ?::int"},
                {"UPDATE fence_rows SET n = n + 1 WHERE id = ?", "5 x UPDATE of the worker's row"}};
        for (String[] shape : shapes) {
            for (boolean transactions : new boolean[] {false, true}) {
                double fenced = 0;
                double unfenced = 0;
                for (int r = 0; r < rounds; r++) {
                    fenced += fencedJobsPerSecond(bed, jobs, 889_000 + r * 10, true, transactions, shape[0]);
                    unfenced += fencedJobsPerSecond(bed, jobs, 889_500 + r * 10, false, transactions, shape[0]);
                }
                MD.append(String.format(Locale.ROOT, "| %s, %s | %.1f | %.1f | %.2f |%n", shape[1], transactions
                        ? "a transaction per job (the fence rides with COMMIT)" : "autocommit (each statement carries the fence)",
                        fenced / rounds, unfenced / rounds, fenced / unfenced));
                JSON.put("fence." + (shape[0].startsWith("UPDATE") ? "update." : "select.")
                        + (transactions ? "transaction" : "autocommit") + ".ratio", fenced / unfenced);
            }
        }
        double plain = 0;
        double emulate = 0;
        for (int r = 0; r < rounds; r++) {
            plain += lockless(bed, jobs, false);
            emulate += lockless(bed, jobs, true);
        }
        MD.append(String.format(Locale.ROOT, "| workers holding no lock: emulate against plain pgjdbc | %.1f | %.1f | %.2f |%n",
                emulate / rounds, plain / rounds, emulate / plain));
        JSON.put("fence.lockless.ratio", emulate / plain);
        long[] window = fenceWindow(bed, full ? 2000 : 500);
        MD.append(String.format(Locale.ROOT, "%nThe fence's window (the server's clock from the fence's check to the end of"
                + " its COMMIT, in one round trip): p50 %d µs, p99 %d µs.%n%n", window[0], window[1]));
        JSON.put("fence.windowP50us", window[0]);
        JSON.put("fence.windowP99us", window[1]);
    }

    /** Jobs per second of 8 own-key workers: lock, 5 statements (on the lock's connection, or another), unlock. */
    private static double fencedJobsPerSecond(TestBed bed, int jobs, long key, boolean fenced, boolean transactions,
                                              String statement) throws Exception {
        return perSecond(8, (w, start, done) -> {
            long k = key + w;
            try (Connection lock = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
                 Connection other = fenced ? null : bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
                 Statement ls = lock.createStatement();
                 PreparedStatement work = (fenced ? lock : other).prepareStatement(statement)) {
                Connection worker = fenced ? lock : other;
                start.await();
                for (int i = 0; i < jobs; i++) {
                    ls.execute("SELECT pg_advisory_lock(" + k + ")");
                    if (transactions) {
                        worker.setAutoCommit(false);
                    }
                    for (int j = 0; j < 5; j++) {
                        work.setInt(1, statement.startsWith("UPDATE") ? w : j);
                        work.execute();
                    }
                    if (transactions) {
                        worker.commit();
                        worker.setAutoCommit(true);
                    }
                    ls.execute("SELECT pg_advisory_unlock(" + k + ")");
                    done.incrementAndGet();
                }
            }
        });
    }

    /** Jobs per second of 8 workers running 5 statements per job and no lock at all. */
    private static double lockless(TestBed bed, int jobs, boolean emulate) throws Exception {
        return perSecond(8, (w, start, done) -> {
            try (Connection c = emulate ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")
                    : bed.connect(Route.TRANSACTION_POOL); PreparedStatement work = c.prepareStatement("SELECT ?::int")) {
                start.await();
                for (int i = 0; i < jobs; i++) {
                    for (int j = 0; j < 5; j++) {
                        work.setInt(1, j);
                        work.execute();
                    }
                    done.incrementAndGet();
                }
            }
        });
    }

    /** One worker's loop: {@code worker} its number, {@code start} to await before timing, {@code done} to count jobs. */
    @FunctionalInterface
    private interface Worker {
        void run(int worker, java.util.concurrent.CountDownLatch start, java.util.concurrent.atomic.AtomicInteger done)
                throws Exception;
    }

    /** Jobs per second of {@code workers} threads running {@code body}, timed from their common start. */
    private static double perSecond(int workers, Worker body) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        java.util.concurrent.atomic.AtomicInteger done = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Thread t = new Thread(() -> {
                try {
                    body.run(worker, start, done);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        return done.get() * 1e9 / (System.nanoTime() - t0);
    }

    /** p50 and p99 µs, by the server's clock, from a fence's check to the end of the COMMIT it goes with. */
    private static long[] fenceWindow(TestBed bed, int rounds) throws SQLException {
        long[] w = new long[rounds];
        int seal = 1; // a key nobody holds here stands for a live holder's seal (the try fails only if held: same work)
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             Connection h = bed.connect(Route.DIRECT); Statement hs = h.createStatement()) {
            hs.execute("SELECT pg_advisory_lock(" + io.lockhygiene.internal.holder.Seals.CLASSID + ", " + seal + ")");
            c.setAutoCommit(false);
            for (int i = 0; i < rounds; i++) {
                s.execute("SELECT 1"); // the transaction's work
                // the fence's own statement, with the server's clock read just before its check
                s.execute(io.lockhygiene.internal.holder.Seals.fence(new int[] {seal}).replace("SELECT CASE",
                        "SELECT (extract(epoch from clock_timestamp()) * 1e6)::bigint, CASE")
                        + "; COMMIT; SELECT (extract(epoch from clock_timestamp()) * 1e6)::bigint");
                long before;
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    before = rs.getLong(1);
                }
                s.getMoreResults();
                s.getMoreResults();
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    w[i] = rs.getLong(1) - before;
                }
            }
            c.setAutoCommit(true);
        }
        java.util.Arrays.sort(w);
        return new long[] {w[rounds / 2], w[(int) (rounds * 0.99)]};
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

    private static String json(Map<String, Object> m) {
        StringBuilder sb = new StringBuilder("{\n");
        int i = 0;
        for (Map.Entry<String, Object> e : m.entrySet()) {
            sb.append("  \"").append(e.getKey().replace("\"", "'")).append("\": ").append(e.getValue())
                    .append(++i < m.size() ? ",\n" : "\n");
        }
        return sb.append("}\n").toString();
    }

    private RunBenchmarks() {
    }
}
