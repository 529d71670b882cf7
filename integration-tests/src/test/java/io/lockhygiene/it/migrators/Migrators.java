package io.lockhygiene.it.migrators;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import javax.sql.DataSource;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;

/** Several Flyway migrators started at once with Flyway's session lock (postgresql.transactional.lock=false). */
final class Migrators {
    private Migrators() {
    }

    /** What the run left: each failure's text, and the migrator threads still alive at the deadline. */
    record Outcome(List<String> failures, List<String> stillRunning) {
    }

    static Outcome migrateAtOnce(DataSource ds, String schema, String location, int migrators, int lockRetries,
                                 long joinMillis) throws InterruptedException {
        return migrateAtOnce(c -> c.dataSource(ds), schema, location, migrators, lockRetries, joinMillis);
    }

    /** @param source where Flyway connects (a DataSource, or a URL with credentials) */
    static Outcome migrateAtOnce(java.util.function.Consumer<FluentConfiguration> source, String schema, String location,
                                 int migrators, int lockRetries, long joinMillis) throws InterruptedException {
        List<String> failures = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < migrators; i++) {
            Thread t = new Thread(() -> {
                try {
                    FluentConfiguration config = Flyway.configure().schemas(schema)
                            .locations(location).lockRetryCount(lockRetries);
                    source.accept(config);
                    config.getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(false);
                    Flyway fw = config.load();
                    start.await();
                    fw.migrate();
                } catch (Exception e) {
                    failures.add(e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }, schema + "-migrator-" + i);
            t.setDaemon(true); // a hang fails the caller's assertion instead of holding the JVM
            threads.add(t);
            t.start();
        }
        start.countDown();
        long deadline = System.currentTimeMillis() + joinMillis;
        for (Thread t : threads) {
            t.join(Math.max(1, deadline - System.currentTimeMillis()));
        }
        List<String> alive = new ArrayList<>();
        for (Thread t : threads) {
            if (t.isAlive()) {
                alive.add(t.getName());
            }
        }
        return new Outcome(new ArrayList<>(failures), alive);
    }
}
