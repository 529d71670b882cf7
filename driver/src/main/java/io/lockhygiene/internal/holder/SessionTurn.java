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
 * request. Every park is bounded ({@link #PARK_NANOS}), so a lost wake-up costs a moment, never a hang.
 */
final class SessionTurn {
    /** The longest a waiting thread sleeps before it looks again by itself. */
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final OrderedLock lock = new OrderedLock(LockOrder.HOLDER_MAIN_SESSION);
    private final ConcurrentLinkedQueue<Waiter> waiting = new ConcurrentLinkedQueue<>();
    /** Releases that want a batch begun after them: numbered in order. */
    private final AtomicLong tickets = new AtomicLong();
    /** Every ticket up to this one was served by a batch that ended. */
    private volatile long served;

    private static final class Waiter {
        final Thread thread = Thread.currentThread();
        final BooleanSupplier done;

        Waiter(BooleanSupplier done) {
            this.done = done;
        }
    }

    void lock() {
        lock.lock();
    }

    boolean tryLock() {
        return lock.tryLock();
    }

    boolean tryLock(long timeout, TimeUnit unit) throws InterruptedException {
        return lock.tryLock(timeout, unit);
    }

    /** True while some thread has its turn (a round trip, or a look at the session, is under way). */
    boolean isLocked() {
        return lock.isLocked();
    }

    /** Lets the session go, and wakes who was served and who goes next. */
    void unlock() {
        lock.unlock();
        for (Waiter w : waiting) {
            boolean done = w.done.getAsBoolean();
            LockSupport.unpark(w.thread);
            if (!done) {
                return; // the first one still waiting takes the next turn; the rest wait for its batch
            }
        }
    }

    /** Under the turn, after a round trip: wakes the threads it served; the turn stays where it is. */
    void wakeServed() {
        for (Waiter w : waiting) {
            if (w.done.getAsBoolean()) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    /**
     * Returns true with the session held (the caller sends, then {@link #unlock}s), or false once
     * {@code done} says another thread's round trip served the caller. Not interruptible, as a lock: an
     * interrupt is kept for the caller.
     */
    boolean awaitTurn(BooleanSupplier done) {
        if (done.getAsBoolean()) {
            return false;
        }
        if (lock.tryLock()) {
            return true;
        }
        Waiter me = new Waiter(done);
        waiting.add(me);
        boolean interrupted = false;
        try {
            while (true) {
                if (done.getAsBoolean()) {
                    return false;
                }
                if (lock.tryLock()) {
                    return true;
                }
                LockSupport.parkNanos(this, PARK_NANOS);
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

    /** Under the turn, when a batch that began at {@code upTo} has ended. */
    void batchEnded(long upTo) {
        if (upTo > served) {
            served = upTo;
        }
    }
}
