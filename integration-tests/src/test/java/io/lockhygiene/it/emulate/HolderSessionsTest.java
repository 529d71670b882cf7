package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import io.lockhygiene.it.bed.Holders;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code lockhygiene.holderSessions=4}: the holder spreads its keys over four main sessions of its own. More
 * workers than the pooler has servers (3) each lock their own key while another process tries those keys
 * directly: nobody is ever inside a key another holds, all finish, and the holder uses at most four server
 * sessions. A killed one of them is the loss of every key: each owner is told, whichever session held its
 * key. The control (plain pgjdbc through the pooler) keeps working after its lock's session was killed.
 */
@ExtendWith(TestBedExtension.class)
class HolderSessionsTest {
    private static final int SESSIONS = 4;
    private static final String HOLDER_NAME = "lockhygiene lock holder";
    private final TestBed bed = TestBed.shared();

    @BeforeEach
    @AfterEach
    void freshHolder() {
        Holders.reset(); // this test's holder is made with its setting, and goes with it
    }

    private Connection emulating() throws SQLException {
        return bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderSessions=" + SESSIONS);
    }

    @Test
    void workersOverFourHolderSessionsUseAtMostFourAndAllFinish() throws Exception {
        int most = workers(981_000, false);
        assertTrue(most <= SESSIONS, "at most " + SESSIONS + " holder sessions: " + most);
        assertTrue(most >= 2, "the keys spread over several: " + most);
    }

    @Test
    void workersOverFourHolderSessionsKeepAnotherProcessOut() throws Exception {
        workers(981_100, true);
    }

    /**
     * 16 workers over the 3-server pool, each locking its own key 15 times around five statements; with
     * {@code outsider}, another process tries their keys directly all along (a worker whose key it holds
     * waits for it in PostgreSQL's queue, on a waiting session of the holder). Returns the most holder
     * sessions seen at once.
     */
    private int workers(long base, boolean withOutsider) throws Exception {
        int workers = 16;
        int jobs = 15;
        AtomicIntegerArray inside = new AtomicIntegerArray(workers);
        AtomicInteger done = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger outsiderGot = new AtomicInteger();
        AtomicInteger mostHolderSessions = new AtomicInteger();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch finished = new CountDownLatch(workers);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Thread t = new Thread(() -> {
                try (Connection c = emulating(); Statement s = c.createStatement()) {
                    s.setQueryTimeout(30);
                    start.await();
                    for (int i = 0; i < jobs; i++) {
                        s.execute("SELECT pg_advisory_lock(" + (base + worker) + ")");
                        inside.incrementAndGet(worker);
                        for (int j = 0; j < 5; j++) {
                            s.execute("SELECT " + j);
                        }
                        inside.decrementAndGet(worker);
                        assertTrue(bool(s, "SELECT pg_advisory_unlock(" + (base + worker) + ")"));
                        done.incrementAndGet();
                    }
                } catch (Exception | AssertionError e) {
                    errors.add(String.valueOf(e));
                } finally {
                    finished.countDown();
                }
            }, "sessions-worker-" + w);
            threads.add(t);
            t.start();
        }
        AtomicBoolean outsiderRan = new AtomicBoolean();
        Thread outsider = new Thread(() -> { // another process: the server's own exclusion, direct
            try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
                start.await();
                while (finished.getCount() > 0) {
                    for (int w = 0; withOutsider && w < workers; w++) {
                        if (bool(s, "SELECT pg_try_advisory_lock(" + (base + w) + ")")) {
                            outsiderGot.incrementAndGet();
                            if (inside.get(w) > 0) {
                                overlaps.incrementAndGet();
                            }
                            s.execute("SELECT pg_advisory_unlock(" + (base + w) + ")");
                        }
                    }
                    mostHolderSessions.accumulateAndGet(bed.admin().sessionsNamed(HOLDER_NAME), Math::max);
                    outsiderRan.set(true);
                }
            } catch (Exception e) {
                errors.add("outsider: " + e);
            }
        }, "other-process");
        outsider.start();
        start.countDown();
        assertTrue(finished.await(120, TimeUnit.SECONDS), "the workers finish");
        outsider.join(30_000);
        assertEquals(List.of(), errors);
        assertEquals(workers * jobs, done.get(), "every worker ran every job");
        assertTrue(outsiderRan.get(), "the other process (or the sessions' counter) ran");
        if (withOutsider) {
            assertEquals(0, overlaps.get(), "the other process never got a key a worker was inside");
            assertTrue(outsiderGot.get() > 0, "and got the keys between jobs");
        }
        for (int w = 0; w < workers; w++) {
            assertEquals(List.of(), bed.admin().awaitReleased(base + w, 1000), "nothing left held");
        }
        return mostHolderSessions.get();
    }

    @Test
    void aKilledHolderSessionIsTheLossOfEveryOwnersKey() throws Exception {
        int owners = 8;
        long base = 982_000;
        List<Connection> connections = new ArrayList<>();
        try {
            Set<Integer> holding = new HashSet<>();
            for (int i = 0; i < owners; i++) {
                Connection c = emulating();
                connections.add(c);
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_lock(" + (base + i) + ")");
                }
                holding.addAll(bed.admin().holdersOf(base + i));
            }
            assertTrue(holding.size() >= 2, "the keys live on several holder sessions: " + holding);
            int killed = bed.admin().holdersOf(base).get(0);
            try (Connection admin = bed.connect(Route.DIRECT); Statement s = admin.createStatement()) {
                s.execute("SELECT pg_terminate_backend(" + killed + ")");
            }
            for (int i = 0; i < owners; i++) {
                assertEquals(List.of(), bed.admin().awaitReleased(base + i, 10_000),
                        "key " + (base + i) + " is released with the holder, whichever session held it");
            }
            int told = 0;
            for (Connection c : connections) {
                try (Statement s = c.createStatement()) {
                    SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT 1"),
                            "an owner goes on as if it still held its key");
                    assertEquals("08006", e.getSQLState(), e.getMessage());
                    told++;
                }
            }
            assertEquals(owners, told, "every owner was told");
        } finally {
            for (Connection c : connections) {
                c.close();
            }
        }
    }

    @Test
    void controlPlainPgjdbcGoesOnAfterTheSessionOfItsLockWasKilled() throws Exception {
        long key = 982_900;
        try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            int killed = bed.admin().holdersOf(key).get(0);
            try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
                a.execute("SELECT pg_terminate_backend(" + killed + ")");
            }
            assertEquals(List.of(), bed.admin().awaitReleased(key, 10_000), "its lock is gone");
            boolean wentOn = false;
            for (int i = 0; i < 3 && !wentOn; i++) { // the pooler may hand it the killed server once
                try {
                    s.execute("SELECT 1");
                    wentOn = true;
                } catch (SQLException e) {
                    // that server was the killed one: the next statement gets another
                }
            }
            assertTrue(wentOn, "control: plain pgjdbc is not told its lock is gone and goes on");
            assertFalse(bool(s, "SELECT pg_advisory_unlock(" + key + ")"), "it holds nothing any more");
        }
    }
}
