package io.lockhygiene.bench;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
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

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;

/** Sections 1 and 6: the hot path (JMH) and the memory a million statements leave behind. */
final class HotPathSection {

    static void hotPath(boolean full) throws Exception {
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

    static void memory() throws Exception {
        java.lang.reflect.Method wrap = io.lockhygiene.internal.jdbc.LockHygieneConnection.class.getMethod("wrap",
                Connection.class, io.lockhygiene.settings.Settings.class, io.lockhygiene.internal.placement.HolderRoute.class);
        Connection raw = (Connection) java.lang.reflect.Proxy.newProxyInstance(HotPathSection.class.getClassLoader(),
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

    private HotPathSection() {
    }
}
