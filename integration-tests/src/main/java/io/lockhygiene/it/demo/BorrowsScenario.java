package io.lockhygiene.it.demo;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

/**
 * The everyday Spring pattern: every call borrows a connection. Threads try the job's lock on one borrow,
 * do the job on another and unlock on a third. A run "overlaps" when another thread was inside the job at
 * the same time (counted in this JVM). Used by tests with and without the agent.
 */
public final class BorrowsScenario {

    public record Result(int runs, int overlapping, int failedUnlocks, int errors, boolean finished,
                         String firstError) {
    }

    private BorrowsScenario() {
    }

    public static Result run(DataSource ds, long key, int threads, int tries) throws InterruptedException {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger overlapping = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        List<String> errorTexts = Collections.synchronizedList(new ArrayList<>());
        List<Thread> started = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < tries; i++) {
                    try {
                        boolean got;
                        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                            got = bool(s, "SELECT pg_try_advisory_lock(" + key + ")");
                        }
                        if (got) {
                            if (inside.incrementAndGet() > 1) {
                                overlapping.incrementAndGet();
                            }
                            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                                s.execute("SELECT count(*) FROM pg_class");
                                Thread.sleep(2);
                            }
                            inside.decrementAndGet();
                            runs.incrementAndGet();
                            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                                if (!bool(s, "SELECT pg_advisory_unlock(" + key + ")")) {
                                    failedUnlocks.incrementAndGet();
                                }
                            }
                        }
                        Thread.sleep(1);
                    } catch (SQLException e) {
                        errors.incrementAndGet();
                        errorTexts.add(e.getMessage());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }, "borrower-" + w);
            started.add(t);
            t.start();
        }
        boolean finished = true;
        for (Thread t : started) {
            t.join(TimeUnit.SECONDS.toMillis(120));
            finished &= !t.isAlive();
        }
        return new Result(runs.get(), overlapping.get(), failedUnlocks.get(), errors.get(), finished,
                errorTexts.isEmpty() ? null : errorTexts.get(0));
    }
}
