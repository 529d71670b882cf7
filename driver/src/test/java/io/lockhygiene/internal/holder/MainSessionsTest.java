package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A holder with several main sessions against a fake server: where keys live, releases, and a lost session. */
class MainSessionsTest {
    private final FakeServer server = new FakeServer();
    private final List<Holder> made = new ArrayList<>();

    private Holder holder(int mainSessions) {
        Holder h = new Holder(HolderEndpoint.ofLinks(HolderEndpoint.Kind.DIRECT, "fake", new Object(), server::open)
                .withMainSessions(mainSessions));
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

    @Test
    void theApplicationsRouteKeepsOneSession() {
        HolderEndpoint route = HolderEndpoint.ofLinks(HolderEndpoint.Kind.APPLICATION_ROUTE, "fake", new Object(),
                server::open).withMainSessions(4);
        assertEquals(1, route.mainSessions(), "each would pin a pooled server");
    }

    @Test
    void keysSpreadOverTheMainSessionsEachKeyOnOneAndReleasedThere() throws Exception {
        Holder h = holder(3);
        int threads = 12;
        List<LockOwner> owners = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            owners.add(owner("s" + i));
        }
        int granted = OwnKeys.acquireAtOnce(h, owners, 2000, false);
        assertEquals(threads, granted, "every thread ran and got its own key");
        java.util.Set<Integer> sessions = new java.util.HashSet<>();
        for (int i = 0; i < threads; i++) {
            assertEquals(1, server.holders(String.valueOf(2000 + i)), "one session holds each key");
            sessions.add(server.holderOf(String.valueOf(2000 + i)));
        }
        assertEquals(3, sessions.size(), "twelve keys on all three sessions: " + sessions);
        assertEquals(3, server.holdingSessions().size(), "no more sessions than asked for");
        int[] seals = h.table().commitSeals(owners.get(0));
        assertEquals(1, seals.length, "an owner's commit checks the session its key lives on");
        assertFalse(h.acquire(owner("x"), AdvisoryKey.bigint(2000), false, true, null, 0, Limits.none()),
                "decided in the one table, whichever session holds the key");
        for (int i = 0; i < threads; i++) {
            assertTrue(h.unlock(owners.get(i), AdvisoryKey.bigint(2000 + i), false));
            assertEquals(0, server.holders(String.valueOf(2000 + i)), "released on its own session before unlock returns");
        }
    }

    @Test
    void aLostMainSessionIsTheLossOfTheWholeHolder() throws Exception {
        Holder h = holder(3);
        List<LockOwner> owners = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            LockOwner o = owner("l" + i);
            owners.add(o);
            assertTrue(h.acquire(o, AdvisoryKey.bigint(3000 + i), false, true, null, 0, Limits.none()));
        }
        assertTrue(server.holdingSessions().size() >= 2, "the keys live on several sessions");
        server.failNext = true; // the next statement, on whichever session, meets a broken connection
        assertThrows(SQLException.class, () -> h.acquire(owner("m"), AdvisoryKey.bigint(3100), false, true, null, 0,
                Limits.none()));
        for (LockOwner o : owners) {
            assertTrue(o.takeLost(), o + " is told, whichever session held its key");
        }
        assertEquals(java.util.Set.of(), server.holdingSessions(), "every session of the holder ended");
    }


    @Test
    void anUnlockReturnsOnlyOnceTheServerLetTheKeyGoEvenWhenAnotherThreadsRoundTripCarriedIt() throws Exception {
        for (int sessions : new int[] {1, 3}) {
            Holder h = holder(sessions);
            int threads = 8;
            int rounds = 150;
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicInteger stillHeld = new AtomicInteger();
            AtomicInteger done = new AtomicInteger();
            List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> all = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                AdvisoryKey key = AdvisoryKey.bigint(4000 + i);
                LockOwner o = owner("u" + i);
                Thread t = new Thread(() -> {
                    try {
                        start.await();
                        for (int r = 0; r < rounds; r++) {
                            assertTrue(h.acquire(o, key, false, false, null, 0, Limits.none()));
                            assertTrue(h.unlock(o, key, false));
                            if (server.holders(key.sqlArguments()) != 0) {
                                stillHeld.incrementAndGet(); // PostgreSQL: free once pg_advisory_unlock returned
                            }
                            done.incrementAndGet();
                        }
                    } catch (Exception | AssertionError e) {
                        errors.add(String.valueOf(e));
                    }
                });
                all.add(t);
                t.start();
            }
            for (Thread t : all) {
                t.join(60_000);
            }
            assertEquals(List.of(), errors);
            assertEquals(threads * rounds, done.get(), sessions + " session(s): every thread did every round");
            assertEquals(0, stillHeld.get(), sessions + " session(s): an unlock returned while its release was on the wire");
        }
    }
}
