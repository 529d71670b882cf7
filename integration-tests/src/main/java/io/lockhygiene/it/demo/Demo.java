package io.lockhygiene.it.demo;

import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;

/**
 * The README's main job: start the test bed, run the workers scenario over every route with every
 * client, print one table. Sizes come from -Ddemo.workers, -Ddemo.tries, -Ddemo.jobMillis,
 * -Ddemo.pauseMillis.
 */
public final class Demo {

    /** Plain pgjdbc, then LockHygiene as a URL swap alone leaves it (its default, emulate), then each other mode. */
    static final List<Client> CLIENTS = List.of(Client.plain(), lockHygiene(null), lockHygiene("detect"),
            lockHygiene("rewrite"), lockHygiene("strict"));

    /** @param mode null for the default (no lockhygiene.mode at all) */
    static Client lockHygiene(String mode) {
        String label = mode == null ? "lockhygiene (default)" : "lockhygiene " + mode;
        List<String> params = new java.util.ArrayList<>();
        if (mode != null) {
            params.add("lockhygiene.mode=" + mode);
        }
        // Behind a session-mode PgBouncer the user says so: auto treats any pooler as transaction pooling.
        return Client.of(label, (bed, route) -> {
            List<String> all = new java.util.ArrayList<>(params);
            if (route == Route.SESSION_POOL) {
                all.add("lockhygiene.poolMode=session");
            }
            return bed.connectLockHygiene(route, all.toArray(new String[0]));
        });
    }

    /** Where the demo's log lines go (LockHygiene's WARNs, the servers' notes), so the table stands alone. */
    static final String LOG_FILE = "integration-tests/target/demo.log";

    public static void main(String[] args) throws Exception {
        java.nio.file.Path log = java.nio.file.Paths.get(System.getProperty("demo.log", LOG_FILE)).toAbsolutePath();
        java.nio.file.Files.createDirectories(log.getParent());
        java.nio.file.Files.deleteIfExists(log);
        if (System.getProperty("org.slf4j.simpleLogger.logFile") == null) {
            System.setProperty("org.slf4j.simpleLogger.logFile", log.toString()); // before the first logger is made
        }
        WorkersScenario.Config standard = WorkersScenario.Config.standard();
        WorkersScenario.Config config = new WorkersScenario.Config(
                Integer.getInteger("demo.workers", standard.workers()),
                Integer.getInteger("demo.tries", standard.tries()),
                Integer.getInteger("demo.jobMillis", standard.jobMillis()),
                Integer.getInteger("demo.pauseMillis", standard.pauseMillis()));
        ResultTable table = new ResultTable();
        try (TestBed bed = TestBed.start()) {
            System.out.printf("%nWorkers scenario: %d workers x %d tries; each guards one job with"
                            + " pg_try_advisory_lock in autocommit, runs it (%d ms), then pg_advisory_unlock.%n",
                    config.workers(), config.tries(), config.jobMillis());
            long key = 4_242_000L;
            for (Route route : Route.values()) {
                for (Client client : CLIENTS) {
                    WorkersScenario.Result r = WorkersScenario.run(config, ++key, () -> client.open(bed, route),
                            bed.admin());
                    table.add(route.label(), client.label(), r);
                    System.out.print(".");
                    System.out.flush();
                }
            }
            System.out.println();
            table.print(System.out);
            System.out.println("\noverlapping runs: runs during which another worker ran the same job;"
                    + " failed unlocks: pg_advisory_unlock returned false (it ran on another backend);"
                    + " locks left held: backends still holding the key after every worker closed.");
            System.out.println("The default is what a URL swap alone gives (jdbc:lockhygiene:postgresql:...): emulate behind"
                    + " a transaction pooler, and pgjdbc's own behaviour directly and under session pooling.");
            table.errors().forEach(e -> org.slf4j.LoggerFactory.getLogger(Demo.class).warn("{}", e));
            long warnings = 0;
            if (java.nio.file.Files.exists(log)) {
                try (java.util.stream.Stream<String> lines = java.nio.file.Files.lines(log)) {
                    warnings = lines.filter(l -> l.contains(" WARN ") || l.contains(" ERROR ")).count();
                }
            }
            System.out.println("The log (" + warnings + " WARN or ERROR lines: what LockHygiene told each mode's workers,"
                    + " strict's refusals, each row's first error) is in " + log);
        }
    }
}
