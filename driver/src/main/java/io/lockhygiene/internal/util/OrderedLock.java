package io.lockhygiene.internal.util;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ReentrantLock} with its place in {@link LockOrder}. Where Java assertions are on (tests: Surefire runs
 * with {@code -ea}), each thread's held locks are recorded and a wait that inverts the table fails at once with an
 * AssertionError naming both locks, instead of deadlocking some day; a {@code tryLock()} that cannot wait is
 * recorded but never refused. Where assertions are off, the lock is a plain ReentrantLock behind one constant test.
 * Not a {@code synchronized} monitor: a virtual thread that waits on it never pins its carrier.
 */
public final class OrderedLock extends ReentrantLock implements AutoCloseable {
    private static final long serialVersionUID = 1L;
    private static final boolean CHECKED = checked();
    /**
     * The locks this thread holds now, in the order taken (a reentry counts once). Made only where assertions are
     * on, and a class rather than a lambda: a service's first connection bootstraps no lambda of ours.
     */
    private static final ThreadLocal<List<OrderedLock>> HELD = CHECKED ? new HeldLocks() : null;

    private static final class HeldLocks extends ThreadLocal<List<OrderedLock>> {
        @Override
        protected List<OrderedLock> initialValue() {
            return new ArrayList<>(4);
        }
    }

    private final LockOrder place;

    public OrderedLock(LockOrder place) {
        this.place = place;
    }

    private static boolean checked() {
        boolean on = false;
        assert on = true; // on exactly where assertions are enabled for this class
        return on;
    }

    /** True where this run checks the order (assertions on). */
    public static boolean checking() {
        return CHECKED;
    }

    public LockOrder place() {
        return place;
    }

    @Override
    public void lock() {
        if (CHECKED) {
            mayWait();
        }
        super.lock();
        if (CHECKED) {
            taken();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (CHECKED) {
            mayWait();
        }
        super.lockInterruptibly();
        if (CHECKED) {
            taken();
        }
    }

    @Override
    public boolean tryLock() {
        boolean got = super.tryLock();
        if (got && CHECKED) {
            taken();
        }
        return got;
    }

    /** A bounded wait: checked like {@link #lock()}, since an inverted one stalls both threads for its bound. */
    @Override
    public boolean tryLock(long timeout, TimeUnit unit) throws InterruptedException {
        if (CHECKED) {
            mayWait();
        }
        boolean got = super.tryLock(timeout, unit);
        if (got && CHECKED) {
            taken();
        }
        return got;
    }

    @Override
    public void unlock() {
        boolean last = getHoldCount() == 1;
        super.unlock();
        if (CHECKED && last) {
            List<OrderedLock> held = HELD.get();
            for (int i = held.size() - 1; i >= 0; i--) {
                if (held.get(i) == this) {
                    held.remove(i);
                    break;
                }
            }
        }
    }

    /**
     * Takes the lock and returns it to be closed, as pgjdbc's {@code ResourceLock}:
     * {@code try (OrderedLock held = session.turn()) { ... }}.
     */
    public OrderedLock obtain() {
        lock();
        return this;
    }

    /** The lock, taken, if it is free now (to be closed); else null. */
    public OrderedLock tryObtain() {
        return tryLock() ? this : null;
    }

    /** Lets the lock go (the end of a try-with-resources). */
    @Override
    public void close() {
        unlock();
    }

    /** Fails when this thread holds a lock that the table puts at or below this one's place, or a leaf. */
    private void mayWait() {
        if (isHeldByCurrentThread()) {
            return; // a reentry never waits
        }
        for (OrderedLock h : HELD.get()) {
            if (h.place.leaf() || h.place.compareTo(place) >= 0) {
                throw new AssertionError("lock order: " + place + " waited for while holding " + h.place
                        + (h.place.leaf() ? " (a leaf: nothing may be waited for under it)"
                        : " (the table, LockOrder, puts " + place + " first)"));
            }
        }
    }

    private void taken() {
        if (getHoldCount() == 1) {
            HELD.get().add(this);
        }
    }

    @Override
    public String toString() {
        return place + " " + super.toString();
    }
}
