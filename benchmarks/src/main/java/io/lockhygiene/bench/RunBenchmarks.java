package io.lockhygiene.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import io.lockhygiene.it.bed.TestBed;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;

/**
 * Every figure of the benchmarks issue in one run: {@code quick} (a few minutes) or {@code full}. Writes
 * BENCHMARKS.md-ready tables to target/benchmarks/results.md and the figures to results.json.
 */
public final class RunBenchmarks {
    public static void main(String[] args) throws Exception {
        boolean full = args.length > 0 && "full".equals(args[0]);
        MD.append("Mode: ").append(full ? "full" : "quick").append("; JVM ").append(System.getProperty("java.version"))
                .append("; ").append(Runtime.getRuntime().availableProcessors()).append(" cores\n\n");
        // -Dbench.only=emulate: only section 4 (a minute instead of several); -Dbench.only=leakcheck: only
        // section 2's transaction-pool rows for plain pgjdbc, tracked without and with the default sample, and
        // always (the leak check's cost), and section 3
        String only = System.getProperty("bench.only", "");
        boolean all = only.isEmpty() || "all".equals(only);
        if (all || "hotpath".equals(only)) { // -Dbench.only=hotpath: only section 1 (JMH), no servers
            HotPathSection.hotPath(full);
            HotPathSection.memory();
        }
        if ("hotpath".equals(only)) {
            Path out = Paths.get("target", "benchmarks");
            Files.createDirectories(out);
            Files.writeString(out.resolve("results.md"), MD.toString());
            System.out.println("\n" + MD);
            return;
        }
        try (TestBed bed = TestBed.start()) {
            MD.append("Servers: ").append(bed.endpoints().postgresVersion()).append(", ")
                    .append(bed.endpoints().pgbouncerVersion()).append(" (transaction pool: 3 servers)\n\n");
            EndToEnd.schema(bed);
            if (all) {
                EndToEndSection.endToEnd(bed, full, false);
                EndToEndSection.serverWork(bed);
            }
            if ("default".equals(only)) { // -Dbench.only=default: plain pgjdbc against the default settings (issue 45)
                EndToEndSection.endToEnd(bed, full, false, true);
            }
            if ("leakcheck".equals(only)) {
                EndToEndSection.endToEnd(bed, full, true);
                EndToEndSection.serverWork(bed);
            }
            if (all || "r2dbc".equals(only)) { // -Dbench.only=r2dbc: only section 5
                R2dbcSection.endToEnd(bed, full);
            }
            if (all || "emulate".equals(only)) {
                EmulateSection.emulate(bed, full);
            }
            if ("workers".equals(only)) { // -Dbench.only=workers: only the worker pool of section 4 (issue 36)
                WorkerPoolSection.workerPool(bed, full);
            }
            if ("defaultworkers".equals(only)) { // -Dbench.only=defaultworkers: own-key workers, default settings (issue 45)
                WorkerPoolSection.defaultWorkers(bed, full);
            }
            if ("fence".equals(only)) { // -Dbench.only=fence: only the commit fence's rows of section 4
                FenceSection.fence(bed, full);
            }
        }
        Path out = Paths.get("target", "benchmarks");
        Files.createDirectories(out);
        Files.writeString(out.resolve("results.md"), MD.toString());
        Files.writeString(out.resolve("results.json"), Report.json(JSON));
        System.out.println("\n" + MD);
        System.out.println("Written: " + out.toAbsolutePath().resolve("results.md") + " and results.json");
    }

    private RunBenchmarks() {
    }
}
