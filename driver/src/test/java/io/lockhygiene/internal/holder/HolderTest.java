package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The lock holder against a fake server (no PostgreSQL): batching, hand-overs, waits, deadlocks and loss,
 * each concurrent test counting what every thread did and waiting on latches, never on sleeps.
 */
class HolderTest {
    private final FakeServer server = new FakeServer();
    private final List<Holder> made = new ArrayList<>();

    private Holder holder(HolderEndpoint.Kind kind) {
        Holder h = new Holder(HolderEndpoint.ofLinks(kind, "fake", new Object(), server::open));
        made.add(h);
        return h;
    }

    @AfterEach
    void shutDown() {
        for (Holder h : made) {
            h.shutdown();
        }
    }

    private static LockOwner owner(String name) {
        return LockOwner.ofConnection(name, null);
    }

    private static final AdvisoryKey K = AdvisoryKey.bigint(42);

    @Test
    void anOwnerNeverConflictsWithItselfAndLocksStack() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        LockOwner a = owner("a");
        LockOwner b = owner("b");
        assertTrue(h.acquire(a, K, false, true, null, 0, Limits.none()));
        assertTrue(h.acquire(a, K, true, true, null, 0, Limits.none()), "its own exclusive does not stop its shared");
        assertTrue(h.acquire(a, K, false, true, null, 0, Limits.none()));
        assertFalse(h.acquire(b, K, true, true, null, 0, Limits.none()));
        assertTrue(h.unlock(a, K, false));
        assertTrue(h.unlock(a, K, true));
        assertFalse(h.acquire(b, K, false, true, null, 0, Limits.none()), "still held once");
        assertTrue(h.unlock(a, K, false));
        assertFalse(h.unlock(a, K, false), "PostgreSQL: you don't own a lock");
        assertTrue(h.acquire(b, K, false, true, null, 0, Limits.none()));
        assertEquals(1, server.holders("42"), "one backend of the holder holds it");
        h.unlock(b, K, false);
        assertEquals(0, server.holders("42"), "released on the server when nobody holds it");
    }

    @Test
    void aProbeByTheOwnerOfTheOtherModeAsksTheServerOnceAndAnswers() {
        // Kill Bill's isFree taken by the connection that holds the key shared: PostgreSQL lets a session's
        // exclusive try pass its own shared lock. A probe that is sent back to decide again on every round
        // spins for ever (a differential program found it); a bound turns that into a failure here.
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(20), () -> {
            Holder h = holder(HolderEndpoint.Kind.DIRECT);
            LockOwner a = owner("a");
            LockOwner b = owner("b");
            assertTrue(h.acquire(a, K, true, true, null, 0, Limits.none()));
            assertTrue(h.probeFree(a, K, false), "its own shared lock does not make the key busy for it");
            assertFalse(h.probeFree(b, K, false), "another owner's shared lock does");
            assertTrue(h.probeFree(b, K, true), "shared with shared is free");
            assertTrue(h.unlock(a, K, true));
            assertFalse(h.unlock(a, K, false), "the probe left nothing held");
            assertEquals(0, server.holders("42"), "nothing left on the server");
        });
    }

    @Test
    void aReleasedLockGoesToTheLocalWaiterWithoutARoundTrip() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        LockOwner a = owner("a");
        LockOwner b = owner("b");
        assertTrue(h.acquire(a, K, false, false, null, 0, Limits.none()));
        CountDownLatch waiting = new CountDownLatch(1);
        AtomicInteger got = new AtomicInteger();
        Thread t = new Thread(() -> {
            try {
                waiting.countDown();
                if (h.acquire(b, K, false, false, null, 0, new Limits(5_000, 0, null))) {
                    got.incrementAndGet();
                }
            } catch (SQLException e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        assertTrue(waiting.await(5, TimeUnit.SECONDS));
        awaitWaits(1);
        int before = server.statements.size();
        assertTrue(h.unlock(a, K, false));
        t.join(5_000);
        assertEquals(1, got.get(), "the waiter ran and got the lock");
        assertEquals(before, server.statements.size(), "handed over: nothing sent");
        assertEquals(1, server.holders("42"));
    }

    @Test
    void twoOwnersWaitingForEachOtherGetDeadlockDetected() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        LockOwner a = owner("a");
        LockOwner b = owner("b");
        AdvisoryKey k2 = AdvisoryKey.bigint(43);
        assertTrue(h.acquire(a, K, false, false, null, 0, Limits.none()));
        assertTrue(h.acquire(b, k2, false, false, null, 0, Limits.none()));
        ConcurrentLinkedQueue<String> outcomes = new ConcurrentLinkedQueue<>();
        Thread t = new Thread(() -> outcomes.add(outcome(h, a, k2)));
        t.start();
        awaitWaits(1);
        outcomes.add(outcome(h, b, K)); // b now waits for a, who waits for b
        t.join(5_000);
        assertFalse(t.isAlive());
        assertEquals(2, outcomes.size(), "both ran");
        assertTrue(outcomes.contains("40P01"), outcomes.toString());
    }

    private static String outcome(Holder h, LockOwner o, AdvisoryKey k) {
        try {
            h.acquire(o, k, false, false, null, 0, new Limits(10_000, 0, null));
            return "granted";
        } catch (SQLException e) {
            if ("40P01".equals(e.getSQLState())) {
                try {
                    h.releaseOwner(o, true); // the victim gives up: the other one goes on
                } catch (RuntimeException ignored) {
                    // test helper
                }
            }
            return e.getSQLState();
        }
    }

    /** Issue 43: the session's own bounds are asked only by a wait, and end a wait for another owner here. */
    @Test
    void theSessionsBoundsAreAskedByAWaitOnlyAndEndIt() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();
        SessionBounds.Source session = () -> {
            reads.incrementAndGet();
            return SessionBounds.of("100ms", "0");
        };
        LockOwner a = owner("a");
        assertTrue(h.acquire(a, K, false, false, null, 0, new Limits(0, 0, session)), "uncontended");
        assertFalse(h.acquire(owner("b"), K, false, true, null, 0, new Limits(0, 0, session)), "a try");
        assertEquals(0, reads.get(), "neither asked the session");
        long t0 = System.nanoTime();
        SQLException e = assertThrows(SQLException.class,
                () -> h.acquire(owner("c"), K, false, false, null, 0, new Limits(0, 0, session)));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertEquals("55P03", e.getSQLState());
        assertEquals("canceling statement due to lock timeout", e.getMessage());
        assertEquals(1, reads.get(), "the wait asked once");
        assertTrue(millis >= 95, "not before the bound: " + millis);
        assertTrue(h.unlock(a, K, false));
    }

    @Test
    void aWaitForAnotherProcessIsBoundedByLockTimeoutAndCancel() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        int other = server.otherProcessSession();
        assertTrue(server.take(other, "42", false));
        SQLException timeout = assertThrows(SQLException.class,
                () -> h.acquire(owner("a"), K, false, false, null, 0, new Limits(100, 0, null)));
        assertEquals("55P03", timeout.getSQLState());
        Limits limits = Limits.none();
        CountDownLatch started = new CountDownLatch(1);
        ConcurrentLinkedQueue<String> outcome = new ConcurrentLinkedQueue<>();
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                h.acquire(owner("b"), K, false, false, null, 0, limits);
                outcome.add("granted");
            } catch (SQLException e) {
                outcome.add(e.getSQLState());
            }
        });
        t.start();
        assertTrue(started.await(5, TimeUnit.SECONDS));
        awaitWaits(1);
        limits.cancel();
        t.join(5_000);
        assertEquals(List.of("57014"), new ArrayList<>(outcome));
        assertTrue(h.acquire(owner("c"), K, false, true, null, 0, Limits.none()) == false, "still the other's");
        server.release(other, "42", false);
        assertTrue(h.acquire(owner("c"), K, false, true, null, 0, Limits.none()));
    }

    @Test
    void manyOwnersOnOneKeyWithAnotherProcessNeverOverlapNorDeadlock() throws Exception {
        for (HolderEndpoint.Kind kind : new HolderEndpoint.Kind[] {HolderEndpoint.Kind.DIRECT,
                HolderEndpoint.Kind.APPLICATION_ROUTE}) {
            Holder h = holder(kind);
            int threads = 8;
            int rounds = 40;
            AtomicInteger inside = new AtomicInteger();
            AtomicInteger overlaps = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            CyclicBarrier start = new CyclicBarrier(threads + 1);
            int other = server.otherProcessSession();
            List<Thread> all = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                LockOwner o = owner("w" + i);
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int r = 0; r < rounds; r++) {
                            h.acquire(o, K, false, false, null, 0, new Limits(20_000, 0, null));
                            if (inside.incrementAndGet() > 1) {
                                overlaps.incrementAndGet();
                            }
                            inside.decrementAndGet();
                            assertTrue(h.unlock(o, K, false));
                            done.incrementAndGet();
                        }
                    } catch (Exception | AssertionError e) {
                        errors.add(String.valueOf(e));
                    }
                });
                all.add(t);
                t.start();
            }
            start.await();
            for (int r = 0; r < 20; r++) { // the other process takes the key now and then
                if (server.take(other, "42", false)) {
                    server.release(other, "42", false);
                }
            }
            for (Thread t : all) {
                t.join(60_000);
                assertFalse(t.isAlive(), kind + ": a worker is stuck");
            }
            assertEquals(List.of(), new ArrayList<>(errors), kind.toString());
            assertEquals(threads * rounds, done.get(), kind + ": every worker did every round");
            assertEquals(0, overlaps.get(), kind.toString());
            assertEquals(0, server.holders("42"), kind + ": nothing left on the server");
        }
    }

    @Test
    void concurrentTriesOnManyKeysShareRoundTrips() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        int threads = 16;
        List<LockOwner> owners = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            owners.add(owner("t" + i));
        }
        int granted = OwnKeys.acquireAtOnce(h, owners, 1000, true);
        assertEquals(threads, granted, "every thread ran and got its own key");
        long sends = server.statements.stream().filter(s -> s.contains("pg_try_advisory_lock")).count();
        assertTrue(sends <= threads, "at most one round trip each: " + sends);
    }

    @Test
    void aLostServerIsToldToEveryOwnerThatHeldALock() throws Exception {
        Holder h = holder(HolderEndpoint.Kind.DIRECT);
        LockOwner a = owner("a");
        LockOwner b = owner("b");
        assertTrue(h.acquire(a, K, false, true, null, 0, Limits.none()));
        assertTrue(h.acquire(b, AdvisoryKey.bigint(7), false, true, null, 0, Limits.none()));
        server.failNext = true;
        SQLException e = assertThrows(SQLException.class,
                () -> h.acquire(owner("c"), AdvisoryKey.bigint(8), false, true, null, 0, Limits.none()));
        assertEquals("08006", e.getSQLState(), "the statement that met the loss gets pgjdbc's error");
        assertTrue(h.table().lossSeen());
        assertTrue(a.takeLost(), "a is told on its next statement");
        assertTrue(b.takeLost());
        assertFalse(a.takeLost(), "once");
        assertTrue(h.acquire(owner("d"), K, false, true, null, 0, Limits.none()), "the lock is gone: others may take it");
    }

    private static void awaitWaits(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (EmulatedWait.snapshot().size() < n && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(EmulatedWait.snapshot().size() >= n, "the other thread is waiting");
    }
}
