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
        SessionTurn turn = new SessionTurn();
        AtomicBoolean answered = new AtomicBoolean();
        turn.lock(); // another thread's round trip is on the wire
        CountDownLatch asked = new CountDownLatch(1);
        Future<Boolean> tookTurn = threads.submit(() -> {
            asked.countDown();
            return turn.awaitTurn(answered::get);
        });
        assertTrue(asked.await(10, TimeUnit.SECONDS));
        answered.set(true); // that round trip carried this request too
        turn.unlock();
        assertFalse(tookTurn.get(10, TimeUnit.SECONDS), "served: it needs no round trip of its own");
        assertTrue(turn.tryLock(), "and it holds nothing");
        turn.unlock();
    }

    @Test
    void everyRequestStillWaitingGetsATurnInTheEnd() throws Exception {
        SessionTurn turn = new SessionTurn();
        int waiters = 8;
        AtomicInteger turns = new AtomicInteger();
        AtomicInteger holders = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(waiters);
        turn.lock();
        Future<?>[] done = new Future<?>[waiters];
        for (int i = 0; i < waiters; i++) {
            done[i] = threads.submit(() -> {
                started.countDown();
                assertTrue(turn.awaitTurn(() -> false), "never served by another: it gets its turn");
                mostAtOnce.accumulateAndGet(holders.incrementAndGet(), Math::max);
                turns.incrementAndGet();
                holders.decrementAndGet();
                turn.unlock();
                return null;
            });
        }
        assertTrue(started.await(10, TimeUnit.SECONDS));
        turn.unlock();
        for (Future<?> f : done) {
            f.get(10, TimeUnit.SECONDS);
        }
        assertEquals(waiters, turns.get(), "each waiter ran");
        assertEquals(1, mostAtOnce.get(), "one turn at a time");
    }

    @Test
    void aTicketIsServedByABatchBegunAfterIt() {
        SessionTurn turn = new SessionTurn();
        long first = turn.ticket();
        turn.lock();
        long serves = turn.batchBegins();
        long second = turn.ticket(); // released while that batch was on the wire: not in it
        turn.batchEnded(serves);
        turn.unlock();
        assertTrue(turn.servedUpTo(first));
        assertFalse(turn.servedUpTo(second), "a batch that began before the release does not serve it");
        turn.lock();
        turn.batchEnded(turn.batchBegins());
        turn.unlock();
        assertTrue(turn.servedUpTo(second));
    }

    @Test
    void anInterruptWhileWaitingIsKeptForTheCaller() throws Exception {
        SessionTurn turn = new SessionTurn();
        turn.lock();
        CountDownLatch waiting = new CountDownLatch(1);
        Future<boolean[]> outcome = threads.submit(() -> {
            waiting.countDown();
            boolean mine = turn.awaitTurn(() -> false);
            boolean interrupted = Thread.interrupted();
            turn.unlock();
            return new boolean[] {mine, interrupted};
        });
        assertTrue(waiting.await(10, TimeUnit.SECONDS));
        threads.shutdown(); // no new tasks; the running one is interrupted below
        threads.shutdownNow();
        turn.unlock();
        boolean[] r = outcome.get(10, TimeUnit.SECONDS);
        assertTrue(r[0], "not interruptible, as a lock: it still gets its turn");
        assertTrue(r[1], "and the interrupt is still there for the caller");
    }
}
