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

    static final List<Client> CLIENTS = List.of(Client.plain(), lockHygiene("detect"), lockHygiene("rewrite"),
            lockHygiene("strict"), lockHygiene("emulate"));

    static Client lockHygiene(String mode) {
        // Behind a session-mode PgBouncer the user says so: auto treats any pooler as transaction pooling.
        return Client.of("lockhygiene " + mode, (bed, route) -> route == Route.SESSION_POOL
                ? bed.connectLockHygiene(route, "lockhygiene.mode=" + mode, "lockhygiene.poolMode=session")
                : bed.connectLockHygiene(route, "lockhygiene.mode=" + mode));
    }

    public static void main(String[] args) throws Exception {
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
                    if (r.firstError() != null) {
                        System.out.println("  " + route.label() + " / " + client.label() + ": first error: "
                                + r.firstError());
                    }
                }
            }
            System.out.println();
            table.print(System.out);
            System.out.println("\noverlapping runs: runs during which another worker ran the same job;"
                    + " failed unlocks: pg_advisory_unlock returned false (it ran on another backend);"
                    + " locks left held: backends still holding the key after every worker closed.");
        }
    }
}
