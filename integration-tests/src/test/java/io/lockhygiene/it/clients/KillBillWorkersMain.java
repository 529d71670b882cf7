package io.lockhygiene.it.clients;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.killbill.commons.locker.GlobalLock;
import org.killbill.commons.locker.LockFailedException;
import org.killbill.commons.locker.postgresql.PostgreSQLGlobalLocker;

import io.lockhygiene.LockHygieneDataSource;

/**
 * A child JVM of workers that guard one job with Kill Bill's PostgreSQL {@code GlobalLocker}
 * (killbill-locker, unchanged): {@code isFree}, then {@code lockWithNumberOfTries}, the job (counted in and
 * out on the server, so overlaps are seen across processes), {@code release()}. Args: url user password
 * plain|emulate workers tries lockName [HikariCP connection timeout, ms] [lock tries]. Prints "DONE runs errors millis".
 */
public final class KillBillWorkersMain {
    public static void main(String[] args) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(args[0]);
        config.setUsername(args[1]);
        config.setPassword(args[2]);
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(Long.parseLong(args.length > 7 ? args[7] : "60000"));
        boolean emulate = "emulate".equals(args[3]);
        int workers = Integer.parseInt(args[4]);
        int tries = Integer.parseInt(args[5]);
        String name = args[6];
        int lockTries = args.length > 8 ? Integer.parseInt(args[8]) : 100;
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Properties p = new Properties();
            p.setProperty("lockhygiene.mode", "emulate");
            DataSource ds = emulate ? new LockHygieneDataSource(pool, p) : pool;
            PostgreSQLGlobalLocker locker = new PostgreSQLGlobalLocker(ds);
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int i = 0; i < tries; i++) {
                            try {
                                locker.isFree("lockhygiene", name);
                                GlobalLock lock = locker.lockWithNumberOfTries("lockhygiene", name, lockTries);
                                try {
                                    job(ds, name, 1);
                                    Thread.sleep(2);
                                    job(ds, name, -1);
                                    runs.incrementAndGet();
                                } finally {
                                    lock.release();
                                }
                            } catch (LockFailedException | SQLException | RuntimeException e) {
                                errors.incrementAndGet();
                                System.out.println("ERROR " + e);
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
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
            long millis = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("DONE " + runs.get() + " " + errors.get() + " " + millis);
        }
        System.out.flush();
    }

    /** In (+1) or out (-1) of the job, counted on the server: an entry while someone is inside overlaps. */
    private static void job(DataSource ds, String name, int delta) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(delta > 0
                    ? "UPDATE lh_killbill SET overlapping = overlapping + CASE WHEN n > 0 THEN 1 ELSE 0 END, n = n + 1"
                    + " WHERE name = '" + name + "'"
                    : "UPDATE lh_killbill SET n = n - 1 WHERE name = '" + name + "'");
        }
    }
}
