package io.lockhygiene.internal.locktable;

import java.lang.ref.WeakReference;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.RecentCalls;

/**
 * Who holds advisory locks in a lock holder's table, as one PostgreSQL session would: an application
 * connection, or, for connections borrowed from a pool, the thread that took the lock (it keeps the lock
 * across borrows until it unlocks it on any connection of that pool).
 */
public final class LockOwner {
    private final String description;
    /** The owning thread of a pooled owner; null for a connection owner. */
    private final WeakReference<Thread> thread;
    /** The calls it sent that the holder ran, for attribution when its locks are reported. */
    private final RecentCalls calls = new RecentCalls();
    /** The last reporter it used: a gone thread's locks are reported through it. */
    private volatile LeakReporter reporter;
    /** The holder lost its server while this owner held locks: its next statement fails once. */
    private volatile boolean lost;
    /** A connection owner whose connection is closed: it takes nothing any more. */
    private volatile boolean closed;
    /** It holds something in its holder's table (written by the table under its lock; read by the hot path). */
    private volatile boolean holding;
    /**
     * Open application transactions of this owner whose advisory calls run on the application's own server
     * (see the connection side's venue): while any is open, the table decides none of its calls.
     */
    private final AtomicInteger serverTransactions = new AtomicInteger();

    private LockOwner(String description, Thread thread, LeakReporter reporter) {
        this.description = description;
        this.thread = thread == null ? null : new WeakReference<>(thread);
        this.reporter = reporter;
    }

    public static LockOwner ofConnection(String connectionId, LeakReporter reporter) {
        return new LockOwner(connectionId, null, reporter);
    }

    public static LockOwner ofThread(Thread t, LeakReporter reporter) {
        return new LockOwner("thread \"" + t.getName() + "\"", t, reporter);
    }

    /** True while it holds anything in its holder's table: one volatile read, for the hot path. */
    public boolean holding() {
        return holding;
    }

    void holding(boolean now) {
        holding = now;
    }

    /** True for the thread of a pool (a lock taken on any of its borrows is the thread's), false for a connection. */
    public boolean ofThread() {
        return thread != null;
    }

    /** A thread owner whose thread has ended: nobody can unlock its locks any more. */
    public boolean isGone() {
        if (thread == null) {
            return false;
        }
        Thread t = thread.get();
        return t == null || !t.isAlive();
    }

    /** The calls it sent that the lock table decided, for attribution. */
    public RecentCalls calls() {
        return calls;
    }

    public LeakReporter reporter() {
        return reporter;
    }

    /** The reporter of the connection it used last. */
    public void usedBy(LeakReporter r) {
        reporter = r;
    }

    public void close() {
        closed = true;
    }

    public boolean isClosed() {
        return closed;
    }

    public void markLost() {
        lost = true;
    }

    /** Marked lost and not told yet ({@link #takeLost}): a volatile read. */
    public boolean lostUntold() {
        return lost;
    }

    /** True once after the loss of the holder's server (then cleared). */
    public boolean takeLost() {
        if (!lost) {
            return false;
        }
        lost = false;
        return true;
    }

    /** An application transaction of this owner runs its advisory calls on its own server from now on. */
    public void serverTransactionOpened() {
        serverTransactions.incrementAndGet();
    }

    /** It ended. */
    public void serverTransactionEnded() {
        for (int n = serverTransactions.get(); n > 0 && !serverTransactions.compareAndSet(n, n - 1); ) {
            n = serverTransactions.get(); // another thread changed it: again, never below 0
        }
    }

    /** True while some transaction of this owner holds advisory locks on its own server. */
    public boolean hasServerTransaction() {
        return serverTransactions.get() > 0;
    }

    @Override
    public String toString() {
        return description;
    }
}
