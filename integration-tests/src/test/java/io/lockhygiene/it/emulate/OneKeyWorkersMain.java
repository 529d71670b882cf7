package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A child JVM of one-key workers: args url user password key workers tries blocking(true|false) [lock key text].
 * Each job counts itself in and out of {@code lh_inside}'s row {@code key} on the server, so overlaps are seen
 * across processes; the lock is taken on {@code key}, or on the key text when one is given (the seed's own
 * workers lock {@code 7742, hashtext('report-daily')}); it prints "DONE runs errors failedUnlocks".
 */
public final class OneKeyWorkersMain {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", args[1]);
        p.setProperty("password", args[2]);
        long key = Long.parseLong(args[3]);
        int workers = Integer.parseInt(args[4]);
        int tries = Integer.parseInt(args[5]);
        boolean blocking = Boolean.parseBoolean(args[6]);
        String lockKey = args.length > 7 ? args[7] : Long.toString(key);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            Thread t = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(args[0], p); Statement s = c.createStatement()) {
                    s.setQueryTimeout(60);
                    for (int i = 0; i < tries; i++) {
                        try {
                            boolean got;
                            if (blocking) {
                                s.execute("SELECT pg_advisory_lock(" + lockKey + ")");
                                got = true;
                            } else {
                                got = bool(s, "SELECT pg_try_advisory_lock(" + lockKey + ")");
                            }
                            if (got) {
                                s.execute("UPDATE lh_inside SET overlapping = overlapping + CASE WHEN n > 0 THEN 1 ELSE 0 END,"
                                        + " n = n + 1 WHERE key = " + key);
                                Thread.sleep(3);
                                s.execute("UPDATE lh_inside SET n = n - 1 WHERE key = " + key);
                                runs.incrementAndGet();
                                if (!bool(s, "SELECT pg_advisory_unlock(" + lockKey + ")")) {
                                    failedUnlocks.incrementAndGet();
                                }
                            }
                            Thread.sleep(1);
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
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("DONE " + runs.get() + " " + errors.get() + " " + failedUnlocks.get());
        System.out.flush();
    }
}
