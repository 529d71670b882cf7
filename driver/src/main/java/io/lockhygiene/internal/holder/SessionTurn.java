package io.lockhygiene.internal.holder;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * Whose turn it is to use the holder's main session: one round trip at a time, and a thread whose request
 * another thread's round trip carried returns as soon as that round trip is answered, instead of queueing
 * for the session it no longer needs (with a plain lock it waited for the lock, behind requests that came
 * after its own: the cost that grew with the number of workers, BENCHMARKS.md).
 *
 * <p>A thread that needs a round trip {@linkplain #awaitTurn waits} until either its request is served
 * (its take answered, or a batch that began after its releases ended) or the session is free, then it sends
 * everything queued itself. Whoever lets the session go wakes the threads that were served and the first
 * one still waiting, which takes the next turn: nobody waits for a round trip that does not carry its
 * request.
 *
 * <p>No wake-up is lost, so a waiter parks until it is woken, with no timer that looks again: a request becomes
 * served only under the turn, and the thread that served it wakes it ({@link #wakeServed}, then {@link #unlock});
 * every unlock wakes the first waiter not served, which takes the turn or, if a thread that did not queue took it
 * first, is woken again by that thread's unlock; a waiter is in the queue before it tries the turn the last time,
 * and an unpark that comes before its park makes the park return at once. The wait is bounded by the round trips
 * of the threads ahead of it, each bounded by the holder connection's network timeout.
 */
final class SessionTurn implements AutoCloseable {
    private final OrderedLock lock;
    private final ConcurrentLinkedQueue<Waiter> waiting = new ConcurrentLinkedQueue<>();
    /** Releases that want a batch begun after them: numbered in order. */
    private final AtomicLong tickets = new AtomicLong();
    /** Every ticket up to this one was served by a batch that ended. */
    private volatile long served;

    private SessionTurn(OrderedLock lock) {
        this.lock = lock;
    }

    /** A main session's turn: the outermost of emulate's locks. */
    static SessionTurn ofMainSession() {
        return new SessionTurn(new OrderedLock(LockOrder.HOLDER_MAIN_SESSION));
    }

    /** A waiting session's turn: taken after a main session's. */
    static SessionTurn ofWaitingSession() {
        return new SessionTurn(new OrderedLock(LockOrder.HOLDER_WAITING_SESSION));
    }

    private static final class Waiter {
        final Thread thread = Thread.currentThread();
        final BooleanSupplier done;

        Waiter(BooleanSupplier done) {
            this.done = done;
        }
    }

    /** Takes the turn, to be closed: {@code try (SessionTurn turn = main.turn()) { ... }}. */
    SessionTurn obtain() {
        lock.lock();
        return this;
    }

    /** The turn, taken, if it is free now (to be closed); else null. */
    SessionTurn tryObtain() {
        return lock.tryLock() ? this : null;
    }

    /** The turn, taken within {@code millis} (to be closed); else null. */
    SessionTurn tryObtain(long millis) throws InterruptedException {
        return lock.tryLock(millis, TimeUnit.MILLISECONDS) ? this : null;
    }

    /** Lets the turn go and wakes who was served and who goes next (see {@link #unlock}). */
    @Override
    public void close() {
        unlock();
    }

    /** True while some thread has its turn (a round trip, or a look at the session, is under way). */
    boolean isLocked() {
        return lock.isLocked();
    }

    /** Lets the session go, and wakes who was served and who goes next. */
    private void unlock() {
        lock.unlock();
        for (Waiter w : waiting) {
            boolean done = w.done.getAsBoolean();
            LockSupport.unpark(w.thread);
            if (!done) {
                return; // the first one still waiting takes the next turn; the rest wait for its batch
            }
        }
    }

    /**
     * Wakes the threads whose requests are answered (after a round trip, under the turn; or a loss that failed
     * the queued requests, from any thread); the turn stays where it is.
     */
    void wakeServed() {
        for (Waiter w : waiting) {
            if (w.done.getAsBoolean()) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    /**
     * Returns the turn, taken (the caller sends, then closes it), or null once {@code done} says another thread's
     * round trip served the caller. Not interruptible, as a lock: an
     * interrupt is kept for the caller.
     */
    SessionTurn awaitTurn(BooleanSupplier done) {
        if (done.getAsBoolean()) {
            return null;
        }
        if (lock.tryLock()) {
            return this;
        }
        Waiter me = new Waiter(done);
        waiting.add(me);
        boolean interrupted = false;
        try {
            while (true) {
                if (done.getAsBoolean()) {
                    return null;
                }
                if (lock.tryLock()) {
                    return this;
                }
                LockSupport.park(this);
                interrupted |= Thread.interrupted(); // else park returns at once from now on
            }
        } finally {
            waiting.remove(me);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A release's ticket: served once a batch that began after this call has ended. */
    long ticket() {
        return tickets.incrementAndGet();
    }

    boolean servedUpTo(long ticket) {
        return served >= ticket;
    }

    /** Under the turn, as a batch begins: the tickets it will have served when it ends. */
    long batchBegins() {
        return tickets.get();
    }

    /** Under the turn, when a batch that began at {@code upTo} has ended: who it served goes on now. */
    void batchEnded(long upTo) {
        if (upTo > served) {
            served = upTo;
        }
        wakeServed();
    }
}
