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
 * statements and unlocks, {@code tries} times. Args: url user password baseKey workers tries
 * [barrierDir barrierCount]. Prints "DONE jobs errors failedUnlocks" and an "ERROR ..." line per error.
 *
 * <p>With a barrier (the control of holders that go through the pooler), the first job of each worker,
 * once its lock is taken, marks this replica as holding (a file in barrierDir) and waits until
 * barrierCount replicas hold locks at once (at most 30 s) before its statements: holders that pin the
 * pool's servers then all pin at the same moment, so the stall they cause does not depend on timing.
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
        java.nio.file.Path barrier = args.length > 7 && !args[6].isEmpty() ? java.nio.file.Paths.get(args[6]) : null;
        int barrierCount = args.length > 7 ? Integer.parseInt(args[7]) : 0;
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
                            if (barrier != null && i == 0) {
                                awaitReplicasHolding(barrier, base, barrierCount);
                            }
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
                } catch (SQLException | InterruptedException | java.io.IOException e) {
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

    /** Marks this replica as holding a lock, then waits until {@code count} replicas do (30 s at most). */
    private static void awaitReplicasHolding(java.nio.file.Path dir, long replica, int count) throws java.io.IOException,
            InterruptedException {
        try {
            java.nio.file.Files.createFile(dir.resolve("holding-" + replica));
        } catch (java.nio.file.FileAlreadyExistsException another) {
            // a second worker of this replica
        }
        long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < until) {
            try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(dir)) {
                if (files.count() >= count) {
                    return;
                }
            }
            Thread.sleep(20); // polling an observed state (the replicas' files), bounded above
        }
    }
}
