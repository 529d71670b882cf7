package io.lockhygiene.internal.locktable;

import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.lockhygiene.internal.locktable.Holdings.WaitQueues;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * PostgreSQL's advisory lock semantics among the owners of one process, for one lock holder, and its own
 * monitor. Each owner (an application connection, or a thread of a pool) holds keys as a session would:
 * exclusive and shared, session-level holds that stack and are released one unlock at a time, and
 * transaction-level holds tied to a transaction and the savepoint level they were taken at. An owner never
 * conflicts with itself. Owners that wait form a queue per key, as PostgreSQL's (see {@link KeyState}).
 *
 * <p>The table also knows which modes the holder's backends hold on the server for each key, on which
 * backend, and that backend's seal then (what a fenced commit checks): exactly the modes some owner holds
 * or a queued owner takes next. Callers ask before sending and apply {@link #surplus} after releases.
 *
 * <p>Thread-safe: every method takes the table's one lock, never across a round trip; waiters sleep on its
 * one condition, with a generation count so that a change between a decision and the wait is never missed
 * ({@link #awaitChange}). Under the lock three plain parts keep the data: {@link Holdings} (what owners hold,
 * indexed from owner and from transaction to keys), {@link ServerCopies} (the modes on the server, counted
 * per backend) and {@link WaitQueues} (who waits for what), so every per-request question is O(1) in the
 * number of keys held.
 */
public final class LockTable {
    /** A holder session that holds modes on the server (the main session, or a waiting one). */
    public interface Backend {
    }

    private volatile boolean lossSeen;
    private final OrderedLock state = new OrderedLock(LockOrder.LOCK_TABLE);
    private final Condition changed = state.newCondition();
    private long generation;
    private final Holdings holdings = new Holdings();
    private final ServerCopies server = new ServerCopies(holdings);
    private final WaitQueues queues = new WaitQueues(holdings);

    /**
     * A request of {@code owner}: granted now when nothing local conflicts and the server holds the mode
     * already (for another owner: unless {@code checkQueue}, then SERVER with queueCheckOnly); SERVER when a
     * backend must take it; REFUSED for a try that conflicts; WAIT (queued) or DEADLOCK for a blocking one. A
     * blocking request queues before it asks the server: owners of this process that come after it wait
     * behind it here, so that one owner at a time waits for the key in PostgreSQL's queue.
     *
     * @param queued the owner is in the key's queue already (it waited before)
     * @param checkQueue ask PostgreSQL before sharing a mode the server holds for others (dedicated endpoints)
     */
    public Answer request(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, TransactionId tx,
                          int level, boolean queued, boolean checkQueue) {
        state.lock();
        try {
            KeyState k = holdings.keys.get(key);
            LockOwner blocker = k == null ? null : queued ? k.blockerInQueue(owner, shared)
                    : tryLock ? k.tryBlocker(owner, shared) : k.blocker(owner, shared);
            if (blocker != null) {
                if (tryLock) {
                    return answer(Answer.Verdict.REFUSED, blocker, null, false);
                }
                boolean cycle = queued ? queues.closesCycle(owner, blocker) : !queues.enqueue(owner, key, shared, blocker);
                return answer(cycle ? Answer.Verdict.DEADLOCK : Answer.Verdict.WAIT, blocker, null, false);
            }
            if (k != null && k.server(shared) != null) {
                if (checkQueue && shared && !k.owners.containsKey(owner)) {
                    if (!queued && !tryLock) {
                        queues.enqueue(owner, key, shared, null);
                    }
                    return answer(Answer.Verdict.SERVER, null, k.serverShared, true);
                }
                holdings.grant(owner, key, shared, tx, level);
                if (queued) {
                    queues.dequeue(owner, key);
                    signal();
                }
                return answer(Answer.Verdict.GRANTED, null, null, false);
            }
            if (!queued && !tryLock) {
                queues.enqueue(owner, key, shared, null);
            }
            return answer(Answer.Verdict.SERVER, null, k == null ? null : k.server(!shared), false);
        } finally {
            state.unlock();
        }
    }

    private Answer answer(Answer.Verdict v, LockOwner blocker, Backend home, boolean queueCheckOnly) {
        return new Answer(v, blocker, home, queueCheckOnly, generation);
    }

    /**
     * For a take queued for the main session, at its batch: whether it still needs the server (nothing local
     * conflicts, the server does not hold the mode, the key does not live on another backend); a blocking
     * shared request on the main session's own exclusive mode is granted by PostgreSQL at once.
     *
     * @param probe only asks whether the key is free (taken and let go in one statement)
     */
    public Answer.ServerStep stillNeedsServer(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock,
                                       boolean queued, boolean probe, Backend main) {
        return underLock(() -> {
            KeyState k = holdings.keys.get(key);
            return k == null ? Answer.ServerStep.TRY : k.serverStep(owner, shared, tryLock, queued, probe, main);
        });
    }

    /**
     * Backend {@code on} (sealed {@code seal}) took the mode on the server for {@code owner}: granted, unless
     * the owner is closed or another owner got ahead meanwhile (then false: the server lock becomes surplus).
     */
    public boolean serverTook(LockOwner owner, AdvisoryKey key, boolean shared, Backend on, int seal,
                              TransactionId tx, int level, boolean queued) {
        state.lock();
        try {
            KeyState k = holdings.key(key);
            server.took(key, k, shared, on, seal);
            boolean ok = !owner.isClosed() && (queued ? k.blockerInQueue(owner, shared) : k.blocker(owner, shared)) == null;
            if (ok) {
                holdings.grant(owner, key, shared, tx, level);
            }
            if (queued) {
                queues.dequeue(owner, key);
            }
            signal();
            return ok;
        } finally {
            state.unlock();
        }
    }

    /**
     * A shared grant after PostgreSQL's queue let a new session's request through, the server holding the
     * shared mode already: false (decide again) when that changed meanwhile or another owner is ahead.
     */
    public boolean grantShared(LockOwner owner, AdvisoryKey key, TransactionId tx, int level) {
        state.lock();
        try {
            KeyState k = holdings.keys.get(key);
            boolean ok = !owner.isClosed() && k != null && k.serverShared != null
                    && k.blockerInQueue(owner, true) == null && k.conflictingOwner(owner, true) == null;
            if (ok) {
                holdings.grant(owner, key, true, tx, level);
                queues.dequeue(owner, key);
                signal();
            }
            return ok;
        } finally {
            state.unlock();
        }
    }

    /** The owner leaves the key's queue (granted elsewhere, or gave up). */
    public void leaveQueue(LockOwner owner, AdvisoryKey key) {
        change(() -> {
            queues.dequeue(owner, key);
            return null;
        });
    }

    /**
     * Waits up to {@code nanos} for a change of the table after generation {@code seen} (a release, a grant,
     * a loss); returns at once if it changed already.
     */
    public void awaitChange(long seen, long nanos) throws InterruptedException {
        state.lock();
        try {
            long left = nanos;
            while (generation == seen && left > 0) {
                left = changed.awaitNanos(left);
            }
        } finally {
            state.unlock();
        }
    }

    /** Wakes every waiter (a loss, a cancel): they decide again. */
    public void wakeAll() {
        change(() -> null);
    }

    /** pg_advisory_unlock[_shared]: one session-level hold less; false when the owner holds none. */
    public boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) {
        return change(() -> holdings.unlock(owner, key, shared));
    }

    /** pg_advisory_unlock_all for one owner: its session-level holds go, transaction-level ones stay. */
    public void unlockAll(LockOwner owner) {
        change(() -> holdings.releaseSessionHolds(owner, false));
    }

    /** The transaction-level holds of {@code tx} taken at savepoint depth {@code level} or deeper go. */
    public void releaseTransaction(TransactionId tx, int level) {
        change(() -> {
            holdings.releaseTransaction(tx, level);
            return null;
        });
    }

    /** RELEASE SAVEPOINT: holds of {@code tx} taken at {@code level} or deeper now belong to the enclosing level. */
    public void mergeTransactionLevel(TransactionId tx, int level) {
        change(() -> {
            holdings.mergeTransactionLevel(tx, level);
            return null;
        });
    }

    /**
     * The owner is gone: everything it held goes, its queue place too; returns its session-level holds, for
     * the report.
     *
     * @param forGood it takes nothing any more (a closed connection: a statement racing the close takes
     *                nothing after this)
     */
    public List<SessionHold> releaseOwner(LockOwner owner, boolean forGood) {
        return change(() -> {
            if (forGood) {
                owner.close();
            }
            List<SessionHold> held = holdings.releaseSessionHolds(owner, true);
            queues.leave(owner);
            return held;
        });
    }

    /**
     * The server locks no owner needs any more (and stray copies): marked as released here; the caller
     * releases them on the backends named. Keys nobody holds are forgotten. Only the backends {@code mine}
     * accepts (one main session's own, of several).
     */
    public List<ServerLock> surplus(Predicate<Backend> mine) {
        return underLock(() -> server.surplus(mine));
    }

    /** True when {@link #surplus} has something to release on the backends {@code mine} accepts. */
    public boolean surplusDue(Predicate<Backend> mine) {
        return underLock(() -> server.surplusDue(mine));
    }

    /** Everything is forgotten (the holder's backends are gone, and their locks with them); returns who held something. */
    public List<LockOwner> clear() {
        return change(() -> {
            server.clear();
            queues.clear();
            return holdings.clear();
        });
    }

    /** True when the owner holds anything, session- or transaction-level. */
    public boolean holdsAnything(LockOwner owner) {
        return underLock(() -> holdings.holdsAnything(owner));
    }

    /** True when some owner holds anything: a volatile read, for the hot path. */
    public boolean anyoneHolds() {
        return holdings.anyoneHolds();
    }

    /** The owners that hold anything. */
    public List<LockOwner> owners() {
        return underLock(() -> holdings.owners());
    }

    /** The owners that hold {@code key} in a mode conflicting with {@code shared}, for the deadlock probe. */
    public List<LockOwner> ownersHolding(AdvisoryKey key, boolean shared) {
        return underLock(() -> holdings.ownersHolding(key, shared));
    }

    /** The owner {@code owner} waits for here now, or null (its turn has come, or it waits for another process). */
    public LockOwner waitingFor(LockOwner owner) {
        return underLock(() -> queues.waitingFor(owner));
    }

    /** True when no backend holds any mode on the server (strays included). */
    public boolean serverHoldsNothing() {
        return underLock(() -> server.holdNothing());
    }

    /** True when backend {@code on} holds some mode of some key on the server. */
    public boolean backendHolds(Backend on) {
        return underLock(() -> server.onBackend(on));
    }

    /** What a commit of {@code owner} checks: the seals of its holds' sessions, distinct; null when it holds nothing. */
    public int[] commitSeals(LockOwner owner) {
        if (!holdings.anyoneHolds()) {
            return null;
        }
        state.lock(); // not underLock: an owner's every autocommit statement asks, and its lambda would allocate
        try {
            return holdings.sealsOf(owner);
        } finally {
            state.unlock();
        }
    }

    /** False until some owner was told of a loss: an owner's hot path reads this one volatile field first. */
    public boolean lossSeen() {
        return lossSeen;
    }

    /** Some owners are told of a loss now (the holder marks them before it clears the table). */
    public void lossTold() {
        lossSeen = true;
    }

    /** The keys the owner holds, for messages. */
    public List<AdvisoryKey> keysOf(LockOwner owner) {
        return underLock(() -> holdings.keysOf(owner));
    }

    /** Answers a question under the lock (not for the hot path: the lambda may allocate). */
    private <T> T underLock(Supplier<T> question) {
        state.lock();
        try {
            return question.get();
        } finally {
            state.unlock();
        }
    }

    /** Makes a change under the lock and wakes the waiters, who decide again. */
    private <T> T change(Supplier<T> change) {
        state.lock();
        try {
            return change.get();
        } finally {
            signal();
            state.unlock();
        }
    }

    private void signal() {
        generation++;
        changed.signalAll();
    }

    @Override
    public String toString() {
        return underLock(() -> "LockTable[" + holdings + ", queued " + queues + "]");
    }
}
