package io.lockhygiene.internal.jdbc;

import java.lang.ref.WeakReference;

import io.lockhygiene.internal.leak.RecentCalls;

/**
 * Who holds advisory locks in a {@link SharedHolder}'s table, as one PostgreSQL session would: an
 * application connection, or, for connections borrowed from a pool, the thread that took the lock (it
 * keeps the lock across borrows until it unlocks it on any connection of that pool).
 */
final class LockOwner {
    private final String description;
    /** The owning thread of a pooled owner; null for a connection owner. */
    private final WeakReference<Thread> thread;
    /** The calls it sent that the holder ran, for attribution when its locks are reported. */
    final RecentCalls calls = new RecentCalls();
    /** The last reporter it used: a gone thread's locks are reported through it. */
    volatile LeakReporter reporter;
    /** The holder lost its server while this owner held locks: its next statement fails once. */
    private volatile boolean lost;
    /** A connection owner whose connection is closed: it takes nothing any more (written under the holder's mutex). */
    private boolean closed;

    private LockOwner(String description, Thread thread, LeakReporter reporter) {
        this.description = description;
        this.thread = thread == null ? null : new WeakReference<>(thread);
        this.reporter = reporter;
    }

    static LockOwner ofConnection(String connectionId, LeakReporter reporter) {
        return new LockOwner(connectionId, null, reporter);
    }

    static LockOwner ofThread(Thread t, LeakReporter reporter) {
        return new LockOwner("thread \"" + t.getName() + "\"", t, reporter);
    }

    boolean isThreadOwner() {
        return thread != null;
    }

    /** A thread owner whose thread has ended: nobody can unlock its locks any more. */
    boolean isGone() {
        if (thread == null) {
            return false;
        }
        Thread t = thread.get();
        return t == null || !t.isAlive();
    }

    void close() {
        closed = true;
    }

    boolean isClosed() {
        return closed;
    }

    void markLost() {
        lost = true;
    }

    /** True once after the loss of the holder's server (then cleared). */
    boolean takeLost() {
        if (!lost) {
            return false;
        }
        lost = false;
        return true;
    }

    @Override
    public String toString() {
        return description;
    }
}
