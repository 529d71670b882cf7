package io.lockhygiene.internal.holder;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Turns of the main session: served requests leave without a turn, the rest each get one, tickets in order. */
class SessionTurnTest {
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    @Test
    void aRequestAnotherRoundTripServedLeavesWithoutATurn() throws Exception {
        SessionTurn turn = SessionTurn.ofMainSession();
        AtomicBoolean answered = new AtomicBoolean();
        turn.obtain(); // another thread's round trip is on the wire
        CountDownLatch asked = new CountDownLatch(1);
        Future<Boolean> tookTurn = threads.submit(() -> {
            asked.countDown();
            return turn.awaitTurn(answered::get) != null;
        });
        assertTrue(asked.await(10, TimeUnit.SECONDS));
        answered.set(true); // that round trip carried this request too
        turn.close();
        assertFalse(tookTurn.get(10, TimeUnit.SECONDS), "served: it needs no round trip of its own");
        assertTrue(turn.tryObtain() != null, "and it holds nothing");
        turn.close();
    }

    @Test
    void everyRequestStillWaitingGetsATurnInTheEnd() throws Exception {
        SessionTurn turn = SessionTurn.ofMainSession();
        int waiters = 8;
        AtomicInteger turns = new AtomicInteger();
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(waiters);
        turn.obtain();
        Future<?>[] done = new Future<?>[waiters];
        for (int i = 0; i < waiters; i++) {
            done[i] = threads.submit(() -> {
                started.countDown();
                assertTrue(turn.awaitTurn(() -> false) != null, "never served by another: it gets its turn");
                mostAtOnce.accumulateAndGet(holders.incrementAndGet(), Math::max);
                turns.incrementAndGet();
                holders.decrementAndGet();
                turn.close();
                return null;
            });
        }
        assertTrue(started.await(10, TimeUnit.SECONDS));
        turn.close();
        for (Future<?> f : done) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertEquals(waiters, turns.get(), "each waiter ran");
        assertEquals(1, mostAtOnce.get(), "one turn at a time");
    }

    @Test
    void aTicketIsServedByABatchBegunAfterIt() {
        SessionTurn turn = SessionTurn.ofMainSession();
        long first = turn.ticket();
        turn.obtain();
        long serves = turn.batchBegins();
        long second = turn.ticket(); // released while that batch was on the wire: not in it
        turn.batchEnded(serves);
        turn.close();
        assertTrue(turn.servedUpTo(first));
        assertFalse(turn.servedUpTo(second), "a batch that began before the release does not serve it");
        turn.obtain();
        turn.batchEnded(turn.batchBegins());
        turn.close();
        assertTrue(turn.servedUpTo(second));
    }

    @Test
    void anInterruptWhileWaitingIsKeptForTheCaller() throws Exception {
        SessionTurn turn = SessionTurn.ofMainSession();
        turn.obtain();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<boolean[]> outcome = threads.submit(() -> {
            waiting.countDown();
            boolean mine = turn.awaitTurn(() -> false) != null;
            boolean interrupted = Thread.interrupted();
            turn.close();
            return new boolean[] {mine, interrupted};
        });
        assertTrue(waiting.await(10, TimeUnit.SECONDS));
        threads.shutdown(); // no new tasks; the running one is interrupted below
        threads.shutdownNow();
        turn.close();
        boolean[] r = outcome.get(10, TimeUnit.SECONDS);
        assertTrue(r[0], "not interruptible, as a lock: it still gets its turn");
        assertTrue(r[1], "and the interrupt is still there for the caller");
    }

    @Test
    void aRequestALossAnsweredWakesWhileAnotherHoldsTheTurn() throws Exception {
        SessionTurn turn = SessionTurn.ofMainSession();
        AtomicBoolean failed = new AtomicBoolean();
        turn.obtain(); // another thread's round trip is on the wire, and stays there
        CountDownLatch asked = new CountDownLatch(1);
        Future<Boolean> tookTurn = threads.submit(() -> {
            asked.countDown();
            return turn.awaitTurn(failed::get) != null;
        });
        assertTrue(asked.await(10, TimeUnit.SECONDS));
        failed.set(true); // a loss failed the queued request (MainSession.failQueued)
        turn.wakeServed();
        assertFalse(tookTurn.get(10, TimeUnit.SECONDS), "woken with its answer, not after the round trip ahead");
        turn.close();
    }

    /**
     * No timer looks again for a waiter: each is woken by an unlock. Threads that take turns without pause, some
     * served by another's round trip, must all finish (a lost wake-up would leave one parked, and the get times out).
     */
    @Test
    void manyThreadsTakingTurnsAllFinishWithNoTimerToRescueThem() throws Exception {
        SessionTurn turn = SessionTurn.ofMainSession();
        int threadsCount = 6;
        int rounds = 3_000;
        AtomicInteger turnsTaken = new AtomicInteger();
        AtomicInteger served = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        Future<?>[] done = new Future<?>[threadsCount];
        for (int i = 0; i < threadsCount; i++) {
            done[i] = threads.submit(() -> {
                start.await();
                for (int r = 0; r < rounds; r++) {
                    long ticket = turn.ticket();
                    SessionTurn mine = turn.awaitTurn(() -> turn.servedUpTo(ticket));
                    if (mine == null) {
                        served.incrementAndGet();
                        continue;
                    }
                    turnsTaken.incrementAndGet();
                    long serves = turn.batchBegins();
                    Thread.onSpinWait();
                    turn.batchEnded(serves);
                    mine.close();
                }
                return null;
            });
        }
        start.countDown();
        for (Future<?> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }
        assertEquals(threadsCount * rounds, turnsTaken.get() + served.get(), "every request ended");
        assertTrue(turnsTaken.get() > 0, "turns were taken");
    }
}
