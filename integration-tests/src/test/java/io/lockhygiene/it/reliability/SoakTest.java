package io.lockhygiene.it.reliability;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A bounded soak: 64 threads through the transaction-mode PgBouncer (3 servers), a mix of plain
 * transactions, session locks in every form, try-locks under contention guarding a critical section, and
 * SKIP LOCKED claims. Per mode: no overlap where the mode promises exclusion (emulate; rewrite inside a
 * transaction), no lock left, no error, heap printed. -Dsoak.seconds=N runs longer (default 5 per mode).
 */
@ExtendWith(TestBedExtension.class)
class SoakTest {
    private static final int THREADS = 64;
    private static final long CONTENDED = 997_000;

    @BeforeAll
    static void schema() throws SQLException {
        try (Connection c = TestBed.shared().connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS soak_queue");
            s.execute("CREATE TABLE soak_queue (id int PRIMARY KEY, status text NOT NULL, n int NOT NULL DEFAULT 0)");
            s.execute("INSERT INTO soak_queue SELECT g, 'new', 0 FROM generate_series(1, 200) g");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"detect", "rewrite", "emulate"})
    void soak(String mode) throws Exception {
        TestBed bed = TestBed.shared();
        long seconds = Long.getLong("soak.seconds", 5);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicLong critical = new AtomicLong();
        AtomicLong operations = new AtomicLong();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        long heapBefore = heap();
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int id = t;
            Thread w = new Thread(() -> {
                try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=" + mode);
                     Statement s = c.createStatement()) {
                    start.await();
                    ThreadLocalRandom r = ThreadLocalRandom.current();
                    while (System.nanoTime() < deadline) {
                        int dice = r.nextInt(100);
                        if (dice < 40) {
                            c.setAutoCommit(false);
                            s.execute("SELECT n FROM soak_queue WHERE id = " + (1 + r.nextInt(200)));
                            s.execute("UPDATE soak_queue SET n = n + 1 WHERE id = " + (1 + r.nextInt(200)));
                            c.commit();
                            c.setAutoCommit(true);
                        } else if (dice < 60) {
                            long k = 997_100 + id;
                            s.execute("SELECT pg_advisory_lock(" + k + "), pg_advisory_lock_shared(" + (k + 1000) + ")");
                            s.execute("SELECT pg_try_advisory_lock(" + id + ", 7), pg_advisory_unlock(" + id + ", 7)");
                            s.execute("SELECT pg_advisory_unlock(" + k + "), pg_advisory_unlock_shared(" + (k + 1000) + ")");
                        } else if (dice < 90) {
                            boolean tx = "rewrite".equals(mode);
                            c.setAutoCommit(!tx);
                            if (bool(s, "SELECT pg_try_advisory_lock(" + CONTENDED + ")")) {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                critical.incrementAndGet();
                                Thread.sleep(1);
                                inside.decrementAndGet();
                                bool(s, "SELECT pg_advisory_unlock(" + CONTENDED + ")");
                            }
                            if (tx) {
                                c.commit();
                            }
                            c.setAutoCommit(true);
                        } else {
                            c.setAutoCommit(false);
                            try (ResultSet rs = s.executeQuery("SELECT id FROM soak_queue WHERE status = 'new'"
                                    + " ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")) {
                                if (rs.next()) {
                                    s.execute("UPDATE soak_queue SET n = n + 1 WHERE id = " + rs.getInt(1));
                                }
                            }
                            c.commit();
                            c.setAutoCommit(true);
                        }
                        operations.incrementAndGet();
                    }
                } catch (Exception e) {
                    errors.add(e.toString());
                }
            }, "soak-" + t);
            threads.add(w);
            w.start();
        }
        start.countDown();
        for (Thread w : threads) {
            w.join();
        }
        long heapAfter = heap();
        List<?> left = bed.admin().awaitReleased(CONTENDED, 2_000);
        int allLeft = bed.admin().heldAdvisoryLocks().size();
        System.out.printf("[soak] %s: %d threads, %d s, %d operations, %d critical sections, %d overlapping, %d locks left,"
                        + " %d errors, heap %d -> %d MiB%n", mode, THREADS, seconds, operations.get(), critical.get(),
                overlaps.get(), allLeft, errors.size(), heapBefore >> 20, heapAfter >> 20);
        assertEquals(List.of(), errors);
        assertEquals(List.of(), left);
        assertEquals(0, allLeft, "no lock left held");
        if (!"detect".equals(mode)) {
            assertEquals(0, overlaps.get(), mode + " promises mutual exclusion");
        }
        assertTrue(critical.get() > 0);
        assertTrue(heapAfter - heapBefore < 256L << 20, "heap stable: " + (heapBefore >> 20) + " -> " + (heapAfter >> 20));
    }


    private static long heap() throws InterruptedException {
        for (int i = 0; i < 2; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
}
