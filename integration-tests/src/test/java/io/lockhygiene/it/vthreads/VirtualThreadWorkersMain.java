package io.lockhygiene.it.vthreads;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;

/**
 * A child JVM (Java 21 or later) of a thread-owner service on virtual threads: HikariCP with 4 connections,
 * wrapped by LockHygieneDataSource (emulate) or not (the control), N virtual threads that each take one key
 * with pg_try_advisory_lock on one borrow (again until they get it), run the job on a second borrow and unlock
 * on a third. Overlaps are
 * counted in the JVM. Args: url user password key threads jobs wrap(true|false). Prints
 * "DONE ran jobs overlaps failedUnlocks errors".
 */
public final class VirtualThreadWorkersMain {
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setUsername(args[1]);
        config.setPassword(args[2]);
        config.setMaximumPoolSize(4);
        long key = Long.parseLong(args[3]);
        int threads = Integer.parseInt(args[4]);
        int jobs = Integer.parseInt(args[5]);
        boolean wrap = Boolean.parseBoolean(args[6]);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Properties settings = new Properties();
            settings.setProperty("lockhygiene.mode", "emulate");
            settings.setProperty("lockhygiene.poolMode", "transaction");
            DataSource ds = wrap ? new LockHygieneDataSource(pool, settings) : pool;
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            AtomicInteger inJob = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger failedUnlocks = new AtomicInteger();
            AtomicInteger errors = new AtomicInteger();
            // one warm-up job on this thread first: loading and initialising classes pins a virtual thread's
            // carrier once per class (the JVM's doing); the recording is about what happens after that
            run(ds, "SELECT pg_try_advisory_lock(" + key + ")");
            run(ds, "SELECT count(*) FROM pg_class");
            run(ds, "SELECT pg_advisory_unlock(" + key + ")");
            CountDownLatch start = new CountDownLatch(1);
            // Executors.newVirtualThreadPerTaskExecutor() is Java 21 API; this module compiles for 17
            ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                    .invoke(null);
            for (int t = 0; t < threads; t++) {
                virtual.submit(() -> {
                    ran.incrementAndGet();
                    try {
                        start.await();
                        int tries = 0;
                        for (int i = 0; i < jobs && tries < 5000; tries++) {
                            try {
                                // a try, not a blocking lock: a thread blocked in pg_advisory_lock would hold its
                                // borrowed connection, and with more threads than connections the lock's owner
                                // could not borrow one to unlock (as on PostgreSQL itself)
                                if (!"t".equals(run(ds, "SELECT pg_try_advisory_lock(" + key + ")"))) {
                                    Thread.sleep(1);
                                    continue;
                                }
                                i++;
                                if (inJob.incrementAndGet() > 1) {
                                    overlaps.incrementAndGet();
                                }
                                run(ds, "SELECT count(*) FROM pg_class");
                                inJob.decrementAndGet();
                                if (!"t".equals(run(ds, "SELECT pg_advisory_unlock(" + key + ")"))) {
                                    failedUnlocks.incrementAndGet();
                                }
                                done.incrementAndGet();
                            } catch (SQLException e) {
                                errors.incrementAndGet();
                                System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage());
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return null;
                });
            }
            start.countDown();
            virtual.shutdown();
            if (!virtual.awaitTermination(120, TimeUnit.SECONDS)) {
                System.out.println("ERROR timeout: virtual threads still running after 120 s");
                errors.incrementAndGet();
            }
            System.out.println("DONE " + ran.get() + " " + done.get() + " " + overlaps.get() + " " + failedUnlocks.get()
                    + " " + errors.get());
            System.out.flush();
        }
    }

    /** One borrow, one statement, its first column as text. */
    private static String run(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.setQueryTimeout(60);
            try (ResultSet rs = s.executeQuery(sql)) {
                rs.next();
                return rs.getString(1);
            }
        }
    }
}
