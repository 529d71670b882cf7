package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 44: a pooled service that idles between bursts of jobs keeps no holder session and no row in pg_locks
 * once its holder's linger has passed; the next burst opens them again and runs as the first. Control: a
 * linger longer than the test keeps the holder's session (the behaviour before: for the life of the process).
 */
@ExtendWith(TestBedExtension.class)
class IdleHolderTest {
    private static final String HOLDER = "lockhygiene lock holder";
    private final TestBed bed = TestBed.shared();

    private HikariDataSource pool(String linger) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bed.lockHygieneUrl(Route.PREPARED_TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderLinger=" + linger));
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(4);
        return new HikariDataSource(config);
    }

    /** Own-key jobs: borrow, try, a short job, unlock, return; 4 threads x 20. Returns the jobs that ran. */
    private int burst(HikariDataSource ds, long base) throws Exception {
        AtomicInteger jobs = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            long key = base + t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < 20; i++) {
                        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                            if (bool(s, "SELECT pg_try_advisory_lock(" + key + ")")) {
                                s.execute("SELECT pg_sleep(0.005)");
                                jobs.incrementAndGet();
                                if (!bool(s, "SELECT pg_advisory_unlock(" + key + ")")) {
                                    errors.add("unlock false");
                                }
                            }
                        }
                    }
                    ran.incrementAndGet();
                } catch (Exception e) {
                    errors.add(e.toString());
                }
            });
            threads.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : threads) {
            th.join(60_000);
        }
        assertEquals(List.of(), new ArrayList<>(errors));
        assertEquals(4, ran.get(), "every worker ran");
        return jobs.get();
    }

    private int sealRows() throws Exception {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                     + " AND classid = 1279787009")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void anIdleServiceKeepsNoHolderSessionAndTheNextBurstRunsAsTheFirst() throws Exception {
        try (HikariDataSource ds = pool("500ms")) {
            assertEquals(80, burst(ds, 947_000), "own keys: every job runs");
            Eventually.until("the holder's sessions closed after its linger", Duration.ofSeconds(10),
                    () -> bed.admin().sessionsNamed(HOLDER) == 0);
            assertEquals(0, sealRows(), "no seal row in pg_locks");
            Eventually.until("the watchdog thread gone with them", Duration.ofSeconds(10),
                    () -> Thread.getAllStackTraces().keySet().stream()
                            .noneMatch(t -> t.getName().equals("lockhygiene-holder-watchdog") && t.isAlive()));
            assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "nothing held");
            assertEquals(80, burst(ds, 947_010), "the second burst as the first");
            Eventually.until("closed again", Duration.ofSeconds(10), () -> bed.admin().sessionsNamed(HOLDER) == 0);
            assertEquals(List.of(), bed.admin().heldAdvisoryLocks());
        }
    }

    @Test
    void controlALingerLongerThanTheIdleKeepsTheSession() throws Exception {
        try (HikariDataSource ds = pool("60m")) {
            assertEquals(80, burst(ds, 947_100));
            Thread.sleep(1_500); // three times the other test's linger: a sleep that is the scenario (idling)
            assertTrue(bed.admin().sessionsNamed(HOLDER) >= 1, "the holder's session stays while it lingers");
            assertTrue(sealRows() >= 1, "with its seal");
        }
    }
}
