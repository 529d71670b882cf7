package io.lockhygiene.it.migrators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import liquibase.Liquibase;
import liquibase.database.Database;
import liquibase.database.DatabaseFactory;
import liquibase.database.jvm.JdbcConnection;
import liquibase.resource.ClassLoaderResourceAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 33: a public Liquibase extension whose lock is a session advisory lock (liquibase-sessionlock 1.6.9:
 * {@code pg_try_advisory_lock(?, ?)}, tried every second), migrator processes started at once through the
 * transaction pooler, as services are deployed: with emulate in its default configuration (a
 * {@code jdbc:lockhygiene:} URL) every run applies each change set once and every migrator succeeds, as on
 * direct PostgreSQL; plain pgjdbc through the pooler does not (the control).
 *
 * <p>Processes, not threads: Liquibase keeps one lock service per database it finds equal (by URL and
 * user), so migrators of one URL in one JVM share its "I hold the lock" flag and run without the lock, on
 * PostgreSQL itself. The schema has its changelog tables already (a service that migrated before): Liquibase
 * creates them before it takes the lock.
 */
@ExtendWith(TestBedExtension.class)
class LiquibaseSessionLockTest {
    /**
     * One fewer than the bed's transaction pool has servers: a migrator that waits for the lock sits idle in
     * its transaction (Liquibase's connection is not in autocommit), pinning a server, so 4 migrators starve a
     * 3-server pool by themselves (query_wait_timeout), with plain pgjdbc too.
     */
    private static final int MIGRATORS = 3;
    /** A run takes about ten seconds: a migrator still there after this waits for a lock nobody will let go. */
    private static final long RUN_BOUND_SECONDS = 45;
    private final TestBed bed = TestBed.shared();

    /** What one run left. */
    record Run(List<String> failures, int rows, int recorded) {
    }

    @SuppressWarnings("deprecation") // Liquibase.update(String): the shortest call that runs a changelog
    private Run migrateAtOnce(String url, String schema) throws Exception {
        long t0 = System.nanoTime();
        try {
            return migrateAtOnce0(url, schema);
        } finally {
            System.out.println("[liquibase-sessionlock] " + schema + ": " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        }
    }

    @SuppressWarnings("deprecation")
    private Run migrateAtOnce0(String url, String schema) throws Exception {
        try (Connection setup = bed.connect(Route.DIRECT); Statement s = setup.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            s.execute("CREATE SCHEMA " + schema);
        }
        try (Connection c = bed.connect(Route.DIRECT)) {
            Database db = DatabaseFactory.getInstance().findCorrectDatabaseImplementation(new JdbcConnection(c));
            db.setDefaultSchemaName(schema);
            try (Liquibase liquibase = new Liquibase("liquibase/empty-changelog.xml", new ClassLoaderResourceAccessor(), db)) {
                liquibase.update("");
            }
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<Process> processes = new ArrayList<>();
        List<BufferedReader> outputs = new ArrayList<>();
        for (int i = 0; i < MIGRATORS; i++) {
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    LiquibaseMigratorMain.class.getName(), url, bed.endpoints().user(), bed.endpoints().password(), schema)
                    .redirectErrorStream(true).start();
            processes.add(p);
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            outputs.add(out);
            for (String line; (line = out.readLine()) != null && !line.equals("READY"); ) {
                // the JVM's start-up
            }
        }
        for (Process p : processes) { // all at once
            Writer w = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
            w.write("GO\n");
            w.flush();
        }
        // read each migrator's output on a thread of its own, so that a migrator stuck behind a lock another
        // one left (the control's bug) is ended at the run's bound instead of holding the test for minutes
        List<StringBuilder> printed = new ArrayList<>();
        for (BufferedReader out : outputs) {
            StringBuilder all = new StringBuilder();
            printed.add(all);
            Thread reader = new Thread(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        synchronized (all) {
                            all.append(line).append('\n');
                        }
                    }
                } catch (java.io.IOException e) {
                    // the process was ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_BOUND_SECONDS);
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < MIGRATORS; i++) {
            Process p = processes.get(i);
            if (!p.waitFor(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                failures.add("still waiting for the lock after " + RUN_BOUND_SECONDS + " s");
                continue;
            }
            p.waitFor();
            String all;
            synchronized (printed.get(i)) {
                all = printed.get(i).toString();
            }
            String result = all.lines().filter(l -> l.startsWith("RESULT ")).map(l -> l.substring(7)).findFirst()
                    .orElse(null);
            if (result == null || !result.equals("ok")) {
                failures.add(result == null ? "no result: " + all : result.length() > 300 ? result.substring(0, 300) : result);
            }
        }
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            return new Run(failures, count(s, "SELECT count(*) FROM " + schema + ".lb_applied_once"),
                    count(s, "SELECT count(*) FROM " + schema + ".databasechangelog"));
        }
    }

    private static int count(Statement s, String sql) {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            return -1; // the table is not there
        }
    }

    @Test
    void fourMigratorProcessesAtOnceApplyEachChangeSetOnce() throws Exception {
        Run reference = migrateAtOnce(bed.url(Route.DIRECT), "lb_sl_direct");
        System.out.println("[liquibase-sessionlock] plain pgjdbc, direct PostgreSQL (the reference): " + reference);
        assertEquals(new Run(List.of(), 2, 3), reference, "the reference itself");
        String url = bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        withBystanders(() -> {
            for (int run = 0; run < 2; run++) {
                Run r = migrateAtOnce(url, "lb_sl_" + run);
                System.out.println("[liquibase-sessionlock] emulate through the transaction pooler, among other"
                        + " clients of the pool, run " + run + ": " + r);
                assertEquals(new Run(List.of(), 2, 3), r, "run " + run);
            }
        });
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "no lock left");
    }

    /** Work that must end before the bystanders do. */
    @FunctionalInterface
    interface Work {
        void run() throws Exception;
    }

    /**
     * Runs {@code work} while other clients of the same pool (two threads of short statements, as a service
     * has) hand its servers around as in production: alone, the migrators tend to get their own server back
     * (PgBouncer reuses the last one), and plain pgjdbc's bug shows only now and then.
     */
    private void withBystanders(Work work) throws Exception {
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        List<Thread> others = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
                    while (!stop.get()) {
                        s.execute("SELECT pg_sleep(0.005)");
                    }
                } catch (SQLException e) {
                    // a bystander: what it meets is not what is tested
                }
            }, "pool-bystander-" + i);
            t.setDaemon(true);
            t.start();
            others.add(t);
        }
        try {
            work.run();
        } finally {
            stop.set(true);
            for (Thread t : others) {
                t.join(10_000);
            }
        }
    }

    /** Control: plain pgjdbc through the pooler, among the same bystanders. */
    @Test
    void controlPlainPgjdbcThroughThePooler() throws Exception {
        withBystanders(this::control);
    }

    private void control() throws Exception {
        int broken = 0;
        for (int run = 0; run < 4 && broken == 0; run++) { // a run of plain pgjdbc breaks by chance: up to four
            Run r = migrateAtOnce(bed.url(Route.TRANSACTION_POOL), "lb_sl_plain_" + run);
            int left = bed.admin().heldAdvisoryLocks().size();
            System.out.println("[liquibase-sessionlock] plain pgjdbc through the pooler, run " + run + ": " + r
                    + ", locks left " + left);
            broken += r.equals(new Run(List.of(), 2, 3)) && left == 0 ? 0 : 1;
            try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
                s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
            }
        }
        assertTrue(broken > 0, "control: a run fails, applies twice or leaves a lock");
    }
}
