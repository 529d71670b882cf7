package io.lockhygiene.it.fleet;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A child JVM of own-key workers, one replica of a service: each worker takes its own key, runs five short
 * statements and unlocks, {@code tries} times. Args: url user password baseKey workers tries. Prints
 * "DONE jobs errors failedUnlocks" and an "ERROR ..." line per error.
 */
public final class OwnKeyWorkersMain {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", args[1]);
        p.setProperty("password", args[2]);
        long base = Long.parseLong(args[3]);
        int workers = Integer.parseInt(args[4]);
        int tries = Integer.parseInt(args[5]);
        AtomicInteger jobs = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            long key = base + w;
            Thread t = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(args[0], p); Statement s = c.createStatement()) {
                    s.setQueryTimeout(60);
                    start.await();
                    for (int i = 0; i < tries; i++) {
                        try {
                            s.execute("SELECT pg_advisory_lock(" + key + ")");
                            for (int j = 0; j < 5; j++) {
                                s.execute("SELECT " + j);
                            }
                            try (ResultSet rs = s.executeQuery("SELECT pg_advisory_unlock(" + key + ")")) {
                                rs.next();
                                if (!rs.getBoolean(1)) {
                                    failedUnlocks.incrementAndGet();
                                }
                            }
                            jobs.incrementAndGet();
                        } catch (SQLException e) {
                            errors.incrementAndGet();
                            System.out.println("ERROR " + e.getSQLState() + " " + e.getMessage());
                        }
                    }
                } catch (SQLException | InterruptedException e) {
                    errors.incrementAndGet();
                    System.out.println("ERROR " + e);
                }
            });
            threads.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("DONE " + jobs.get() + " " + errors.get() + " " + failedUnlocks.get());
        System.out.flush();
    }
}
