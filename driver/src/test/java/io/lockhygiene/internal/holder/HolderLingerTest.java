package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 44 against the fake server: a holder that holds nothing and waits for nothing closes its sessions after
 * its linger and opens them again at the next lock; requests racing the close are never lost, and a close is
 * no loss.
 */
class HolderLingerTest {
    private final FakeServer server = new FakeServer();
    private final List<Holder> made = new ArrayList<>();

    private Holder holder(long lingerMillis) {
        Holder h = new Holder(HolderEndpoint.ofLinks(HolderEndpoint.Kind.DIRECT, "fake", new Object(), server::open)
                .withLinger(lingerMillis));
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

    /** Polls (bounded) until the fake server has {@code n} sessions open. */
    private void awaitOpen(int n, long maxMillis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        while (server.open.size() != n && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(n, server.open.size(), "sessions open");
    }

    @Test
    void anIdleHolderClosesItsSessionsAfterItsLingerAndOpensThemAgain() throws Exception {
        Holder h = holder(100);
        LockOwner a = owner("a");
        AdvisoryKey k = AdvisoryKey.bigint(1);
        assertTrue(h.acquire(a, k, false, false, null, 0, Limits.none()));
        assertEquals(1, server.open.size(), "the main session");
        Thread.sleep(200); // longer than the linger, while a lock is held: it stays
        assertEquals(1, server.open.size(), "a holder that holds something keeps its session");
        assertTrue(h.unlock(a, k, false));
        awaitOpen(0, 5_000);
        assertTrue(h.acquire(a, k, false, true, null, 0, Limits.none()), "the next lock opens a fresh session");
        assertEquals(1, server.open.size());
        assertEquals(2, server.opened.get());
        assertTrue(h.unlock(a, k, false));
        awaitOpen(0, 5_000);
        assertTrue(a.takeLost() == false, "closing an idle holder is no loss");
    }

    @Test
    void aJobLoopWithinTheLingerKeepsItsSession() throws Exception {
        Holder h = holder(2_000);
        LockOwner a = owner("a");
        AdvisoryKey k = AdvisoryKey.bigint(2);
        for (int i = 0; i < 20; i++) {
            assertTrue(h.acquire(a, k, false, true, null, 0, Limits.none()));
            assertTrue(h.unlock(a, k, false));
            Thread.sleep(10);
        }
        assertEquals(1, server.opened.get(), "one session for the whole loop");
    }

    /**
     * Threads lock and unlock their own keys, pausing a moment between jobs, while a zero linger lets the
     * watchdog close the holder whenever all of them are between jobs: they run until the holder has been closed
     * and opened again several times, and every request is answered as without the closes.
     */
    @Test
    void requestsRacingTheCloseAreNeverLost() throws Exception {
        Holder h = holder(0);
        int threads = 4;
        CountDownLatch start = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                LockOwner o = owner("o" + id);
                AdvisoryKey k = AdvisoryKey.bigint(100 + id); // own keys: every request must be granted
                try {
                    start.await();
                    for (int i = 0; server.opened.get() < 6 && System.nanoTime() < until; i++) {
                        asked.incrementAndGet();
                        if (h.acquire(o, k, false, i % 2 == 0, null, 0, Limits.none())) {
                            granted.incrementAndGet();
                            if (!h.unlock(o, k, false)) {
                                failures.add(o + ": unlock false");
                            }
                        } else {
                            failures.add(o + ": refused its own key");
                        }
                        if (o.takeLost()) {
                            failures.add(o + ": told of a loss");
                        }
                        Thread.sleep(1); // between jobs: now and then all are, and the holder closes
                    }
                    ran.incrementAndGet();
                } catch (SQLException | InterruptedException | RuntimeException e) {
                    failures.add(o + ": " + e);
                }
            });
            ts.add(th);
            th.start();
        }
        start.countDown();
        for (Thread th : ts) {
            th.join(60_000);
            assertTrue(!th.isAlive(), "ended");
        }
        assertEquals(List.of(), new ArrayList<>(failures));
        assertEquals(threads, ran.get(), "every thread ran");
        assertEquals(asked.get(), granted.get(), "every request granted");
        assertTrue(server.opened.get() >= 6, "the holder closed and opened again meanwhile: " + server.opened.get());
        awaitOpen(0, 5_000);
        assertEquals(java.util.Set.of(), server.holdingSessions(), "nothing left held");
    }
}
