package io.lockhygiene.internal.holder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.locktable.ServerLock;
import io.lockhygiene.internal.locktable.SessionHold;
import io.lockhygiene.internal.leak.HeldLock;

/**
 * The lock holder's table behind its lock: every question the holder asks of it, as one short critical
 * section that never sends anything. The {@code state} lock is the innermost of emulate's locks (see
 * {@link Holder} for the order) and is never held across a round trip, so an owner that only asks the
 * table never waits for the network.
 */
final class Arbiter {
    /** What a request gets from the table right now. */
    enum Verdict { GRANTED, SERVER, REFUSED, WAIT, DEADLOCK }

    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    private final LockTable table = new LockTable();

    /** The result of {@link #request}: what to do, and with whom. */
    static final class Answer {
        final Verdict verdict;
        /** WAIT, DEADLOCK: the owner waited for (null: another process); SERVER: the backend the key lives on, or null. */
        final Object other;
        /** SERVER: the server already holds this mode on the key's backend for other owners: only PostgreSQL's queue may refuse. */
        final boolean queueCheckOnly;

        Answer(Verdict verdict, Object other, boolean queueCheckOnly) {
            this.verdict = verdict;
            this.other = other;
            this.queueCheckOnly = queueCheckOnly;
        }
    }

    /**
     * A request of {@code owner}: granted now when nothing local conflicts and the server holds the mode
     * already (for another owner: unless {@code checkQueue}, then SERVER with queueCheckOnly); SERVER when a
     * backend must take it; REFUSED for a try that conflicts; WAIT (queued) or DEADLOCK for a blocking one.
     *
     * @param queued the owner is in the key's queue already (it waited before)
     * @param checkQueue ask PostgreSQL before sharing a mode the server holds for others (dedicated endpoints)
     */
    Answer request(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                   boolean queued, boolean checkQueue) {
        state.lock();
        try {
            Object blocker = queued ? table.blockerInQueue(owner, key, shared) : tryLock
                    ? tryBlocker(owner, key, shared) : table.blocker(owner, key, shared);
            if (blocker != null) {
                if (tryLock) {
                    return new Answer(Verdict.REFUSED, blocker, false);
                }
                boolean cycle = queued ? table.closesCycle(owner, blocker) : table.enqueue(owner, key, shared, blocker);
                return new Answer(cycle ? Verdict.DEADLOCK : Verdict.WAIT, blocker, false);
            }
            if (!table.serverNeeds(key, shared)) {
                if (checkQueue && shared && !table.holdsKey(owner, key)) {
                    if (!queued && !tryLock) {
                        table.enqueue(owner, key, shared, null);
                    }
                    return new Answer(Verdict.SERVER, table.serverHolder(key, true), true);
                }
                table.grant(owner, key, shared, tx, level);
                if (queued) {
                    table.dequeue(owner, key);
                    changed.signalAll();
                }
                return new Answer(Verdict.GRANTED, null, false);
            }
            if (!queued && !tryLock) {
                // a blocking request queues now, before it asks the server: owners of this process that come
                // after it wait behind it here, so that one owner at a time waits for the key in PostgreSQL's
                // queue (two of ours there would wait for each other where only the JVM can see it)
                table.enqueue(owner, key, shared, null);
            }
            // the backend that holds the other mode of this key (one session per key), or none yet
            return new Answer(Verdict.SERVER, table.serverHolder(key, !shared), false);
        } finally {
            state.unlock();
        }
    }

    /**
     * PostgreSQL 15 refuses a try that conflicts with a lock another session holds or with any queued
     * request, and never lets a try jump the queue.
     */
    private Object tryBlocker(LockOwner owner, AdvisoryKey key, boolean shared) {
        Object b = table.heldConflict(owner, key, shared);
        return b != null ? b : table.queuedConflict(owner, key, shared);
    }

    /** The owner leaves the key's queue (granted elsewhere, or gave up). */
    void leaveQueue(LockOwner owner, AdvisoryKey key) {
        state.lock();
        try {
            table.dequeue(owner, key);
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    /** Waits up to {@code nanos} for a change of the table (a release, a grant, a loss). */
    void awaitChange(long nanos) throws InterruptedException {
        state.lock();
        try {
            changed.awaitNanos(nanos);
        } finally {
            state.unlock();
        }
    }

    /**
     * A backend took the mode on the server for {@code owner}: granted, unless the owner is closed or
     * another owner got ahead meanwhile (then false: the server lock becomes surplus).
     */
    boolean serverTook(LockOwner owner, AdvisoryKey key, boolean shared, Object on, Object tx, int level,
                       boolean queued) {
        state.lock();
        try {
            if (table.serverNeeds(key, shared)) {
                table.serverTook(key, shared, on);
            }
            boolean ok = !owner.isClosed() && (queued ? table.blockerInQueue(owner, key, shared)
                    : table.blocker(owner, key, shared)) == null;
            if (ok) {
                table.grant(owner, key, shared, tx, level);
            }
            if (queued) {
                table.dequeue(owner, key);
            }
            changed.signalAll();
            return ok;
        } finally {
            state.unlock();
        }
    }

    /**
     * A shared grant after PostgreSQL's queue let a new session's request through, the server holding the
     * shared mode already: false (decide again) when that changed meanwhile or another owner is ahead.
     */
    boolean grantShared(LockOwner owner, AdvisoryKey key, Object tx, int level) {
        state.lock();
        try {
            boolean ok = !owner.isClosed() && !table.serverNeeds(key, true)
                    && table.blockerInQueue(owner, key, true) == null && table.heldConflict(owner, key, true) == null;
            if (ok) {
                table.grant(owner, key, true, tx, level);
                table.dequeue(owner, key);
                changed.signalAll();
            }
            return ok;
        } finally {
            state.unlock();
        }
    }

    /** The owner waits for another process: it queues first among local owners, waiting for nobody here. */
    void enqueueForServer(LockOwner owner, AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            table.enqueue(owner, key, shared, null);
        } finally {
            state.unlock();
        }
    }

    /**
     * For the main connection's batch: the take still needs the server (nothing local conflicts and the
     * server does not hold the mode); marks a blocking shared request on a backend that holds the key
     * exclusively, which PostgreSQL grants at once.
     */
    boolean stillNeedsServer(Take t, Object main) {
        state.lock();
        try {
            if (t.probe) {
                // the probe goes to main when main holds the other mode, or nobody does: a session's own lock
                // does not conflict with its own try (a key that lives on a waiting connection goes there)
                Object home = table.serverHolder(t.key, !t.shared);
                return tryBlocker(t.owner, t.key, t.shared) == null && table.serverNeeds(t.key, t.shared)
                        && (home == null || home == main);
            }
            Object blocker = t.queued ? table.blockerInQueue(t.owner, t.key, t.shared) : t.tryLock
                    ? tryBlocker(t.owner, t.key, t.shared) : table.blocker(t.owner, t.key, t.shared);
            if (blocker != null || !table.serverNeeds(t.key, t.shared)) {
                return false;
            }
            Object home = table.serverHolder(t.key, !t.shared);
            if (home != null && home != main) {
                return false; // the key lives on a waiting connection now
            }
            t.grantedAtOnce = !t.tryLock && t.shared && home == main;
            return true;
        } finally {
            state.unlock();
        }
    }

    boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            boolean ok = table.unlock(owner, key, shared);
            changed.signalAll();
            return ok;
        } finally {
            state.unlock();
        }
    }

    void unlockAll(LockOwner owner) {
        state.lock();
        try {
            table.unlockAll(owner);
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    void releaseTransaction(Object tx, int level) {
        state.lock();
        try {
            table.releaseTransaction(tx, level);
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    void mergeTransactionLevel(Object tx, int level) {
        state.lock();
        try {
            table.mergeTransactionLevel(tx, level);
        } finally {
            state.unlock();
        }
    }

    /** Everything {@code owner} held goes; its session holds, for the report. */
    List<HeldLock> releaseOwner(LockOwner owner, boolean forGood) {
        List<HeldLock> held = new ArrayList<>();
        state.lock();
        try {
            if (forGood) {
                owner.close();
            }
            for (SessionHold h : table.releaseOwner(owner)) {
                held.add(new HeldLock(h.key.classid(), h.key.objid(), h.key.objsubid(),
                        h.shared ? "ShareLock" : "ExclusiveLock", 0, h.count));
            }
            changed.signalAll();
        } finally {
            state.unlock();
        }
        return held;
    }

    boolean holdsSessionLocks(LockOwner owner) {
        state.lock();
        try {
            return table.holdsSessionLocks(owner);
        } finally {
            state.unlock();
        }
    }

    boolean holdsAnything(LockOwner owner) {
        state.lock();
        try {
            return table.holdsAnything(owner);
        } finally {
            state.unlock();
        }
    }

    /** The owners holding {@code key} in a mode conflicting with {@code shared}. */
    List<Object> holders(AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            return table.holders(key, shared);
        } finally {
            state.unlock();
        }
    }

    /** The owner {@code owner} waits for locally, or null. */
    Object waitingFor(Object owner) {
        state.lock();
        try {
            return table.waitingFor(owner);
        } finally {
            state.unlock();
        }
    }

    /** Server locks nobody needs, marked released: the caller sends the releases. */
    List<ServerLock> takeSurplus() {
        state.lock();
        try {
            return table.surplus();
        } finally {
            state.unlock();
        }
    }

    /** True when a release is due, or when nothing is held at all on the server. */
    boolean surplusDue() {
        state.lock();
        try {
            return !table.surplusIsEmpty();
        } finally {
            state.unlock();
        }
    }

    boolean serverHoldsNothing() {
        state.lock();
        try {
            return table.serverHoldsNothing();
        } finally {
            state.unlock();
        }
    }

    boolean backendHolds(Object on) {
        state.lock();
        try {
            return table.backendHolds(on);
        } finally {
            state.unlock();
        }
    }

    /** The owners holding anything. */
    List<Object> owners() {
        state.lock();
        try {
            return table.owners();
        } finally {
            state.unlock();
        }
    }

    /** The holder's backends are gone: everything is forgotten; returns who held something. */
    List<Object> clear() {
        state.lock();
        try {
            List<Object> owners = table.owners();
            table.clear();
            changed.signalAll();
            return owners;
        } finally {
            state.unlock();
        }
    }

    /** Wakes every waiter (a loss, a cancel): they decide again. */
    void wakeAll() {
        state.lock();
        try {
            changed.signalAll();
        } finally {
            state.unlock();
        }
    }

    static long millisToNanos(long millis) {
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }
}
