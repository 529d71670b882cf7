package io.lockhygiene.internal.locktable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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
 * ({@link #awaitChange}). Indexes from owner to keys, from transaction to keys and from backend to modes,
 * and a set of keys that may have become surplus, keep every per-request question O(1) in the number of
 * keys held.
 */
public final class LockTable {
    /** A holder session that holds modes on the server (the main session, or a waiting one). */
    public interface Backend {
    }

    /** What a request gets from the table right now. */
    public enum Verdict { GRANTED, SERVER, REFUSED, WAIT, DEADLOCK }

    /** What a take queued for the main session still needs when its batch is sent. */
    public enum ServerStep { NOT_NEEDED, TRY, GRANTED_AT_ONCE }

    /** The result of {@link #request}. */
    public static final class Answer {
        public final Verdict verdict;
        /** WAIT, DEADLOCK, REFUSED: the owner waited for. */
        public final LockOwner blocker;
        /** SERVER: the backend the key lives on (its other mode, or the mode itself for a queue check), or null. */
        public final Backend home;
        /** SERVER: the server holds this mode already for other owners; only PostgreSQL's queue may refuse. */
        public final boolean queueCheckOnly;
        /** The table's generation when this was decided: {@link #awaitChange} returns at once if it moved. */
        public final long generation;

        Answer(Verdict verdict, LockOwner blocker, Backend home, boolean queueCheckOnly, long generation) {
            this.verdict = verdict;
            this.blocker = blocker;
            this.home = home;
            this.queueCheckOnly = queueCheckOnly;
            this.generation = generation;
        }
    }

    private final ReentrantLock state = new ReentrantLock();
    private final Condition changed = state.newCondition();
    private long generation;
    private final Map<AdvisoryKey, KeyState> keys = new HashMap<>();
    private final Map<LockOwner, Set<AdvisoryKey>> byOwner = new HashMap<>();
    private final Map<Object, Set<AdvisoryKey>> byTransaction = new HashMap<>();
    private final Map<Backend, Integer> modesOn = new HashMap<>();
    /** Keys whose server modes may have become surplus since the last {@link #surplus}. */
    private final Set<AdvisoryKey> touched = new LinkedHashSet<>();
    /** Server modes taken that the table already had on another backend: released with the surplus. */
    private final List<ServerLock> strays = new ArrayList<>(0);
    /** owner -> the key it is queued for (an owner waits for one lock at a time). */
    private final Map<LockOwner, AdvisoryKey> queuedOn = new HashMap<>();
    private int serverModes;
    /** Owners holding anything: the hot path reads it without the lock. */
    private volatile int owning;

    // ---- requests

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
    public Answer request(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                          boolean queued, boolean checkQueue) {
        state.lock();
        try {
            KeyState k = keys.get(key);
            LockOwner blocker = k == null ? null : queued ? k.blockerInQueue(owner, shared)
                    : tryLock ? k.tryBlocker(owner, shared) : k.blocker(owner, shared);
            if (blocker != null) {
                if (tryLock) {
                    return answer(Verdict.REFUSED, blocker, null, false);
                }
                boolean cycle = queued ? closesCycle(owner, blocker) : !enqueue(owner, key, shared, blocker);
                return answer(cycle ? Verdict.DEADLOCK : Verdict.WAIT, blocker, null, false);
            }
            if (k != null && k.server(shared) != null) {
                if (checkQueue && shared && !k.owners.containsKey(owner)) {
                    if (!queued && !tryLock) {
                        enqueue(owner, key, shared, null);
                    }
                    return answer(Verdict.SERVER, null, k.serverShared, true);
                }
                grant(owner, key, shared, tx, level);
                if (queued) {
                    dequeue(owner, key);
                }
                return answer(Verdict.GRANTED, null, null, false);
            }
            if (!queued && !tryLock) {
                enqueue(owner, key, shared, null);
            }
            return answer(Verdict.SERVER, null, k == null ? null : k.server(!shared), false);
        } finally {
            state.unlock();
        }
    }

    private Answer answer(Verdict v, LockOwner blocker, Backend home, boolean queueCheckOnly) {
        return new Answer(v, blocker, home, queueCheckOnly, generation);
    }

    /**
     * For a take queued for the main session, at its batch: whether it still needs the server (nothing local
     * conflicts, the server does not hold the mode, the key does not live on another backend); a blocking
     * shared request on the main session's own exclusive mode is granted by PostgreSQL at once.
     *
     * @param probe only asks whether the key is free (taken and let go in one statement)
     */
    public ServerStep stillNeedsServer(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock,
                                       boolean queued, boolean probe, Backend main) {
        state.lock();
        try {
            KeyState k = keys.get(key);
            if (k == null) {
                return ServerStep.TRY;
            }
            Backend home = k.server(!shared);
            if (probe) {
                // a session's own lock does not conflict with its own try; a key on a waiting session goes there
                return k.tryBlocker(owner, shared) == null && k.server(shared) == null && (home == null || home == main)
                        ? ServerStep.TRY : ServerStep.NOT_NEEDED;
            }
            LockOwner blocker = queued ? k.blockerInQueue(owner, shared) : tryLock ? k.tryBlocker(owner, shared)
                    : k.blocker(owner, shared);
            if (blocker != null || k.server(shared) != null || (home != null && home != main)) {
                return ServerStep.NOT_NEEDED;
            }
            return !tryLock && shared && home == main ? ServerStep.GRANTED_AT_ONCE : ServerStep.TRY;
        } finally {
            state.unlock();
        }
    }

    /**
     * Backend {@code on} (sealed {@code seal}) took the mode on the server for {@code owner}: granted, unless
     * the owner is closed or another owner got ahead meanwhile (then false: the server lock becomes surplus).
     */
    public boolean serverTook(LockOwner owner, AdvisoryKey key, boolean shared, Backend on, int seal, Object tx,
                              int level, boolean queued) {
        state.lock();
        try {
            KeyState k = keys.computeIfAbsent(key, x -> new KeyState());
            if (k.server(shared) == null) {
                k.setServer(shared, on, seal);
                serverModes++;
                modesOn.merge(on, 1, Integer::sum);
            } else {
                // a second copy (on another session, or stacked on the same one): it goes with the surplus
                strays.add(new ServerLock(key, shared, on));
                modesOn.merge(on, 1, Integer::sum);
            }
            boolean ok = !owner.isClosed() && (queued ? k.blockerInQueue(owner, shared) : k.blocker(owner, shared)) == null;
            if (ok) {
                grant(owner, key, shared, tx, level);
            }
            if (queued) {
                dequeue(owner, key);
            }
            touched.add(key);
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
    public boolean grantShared(LockOwner owner, AdvisoryKey key, Object tx, int level) {
        state.lock();
        try {
            KeyState k = keys.get(key);
            boolean ok = !owner.isClosed() && k != null && k.serverShared != null
                    && k.blockerInQueue(owner, true) == null && k.conflictingHolder(owner, true) == null;
            if (ok) {
                grant(owner, key, true, tx, level);
                dequeue(owner, key);
            }
            return ok;
        } finally {
            state.unlock();
        }
    }

    /** The owner waits for another process: it queues first among local owners, waiting for nobody here. */
    public void enqueueForServer(LockOwner owner, AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            enqueue(owner, key, shared, null);
        } finally {
            state.unlock();
        }
    }

    /** The owner leaves the key's queue (granted elsewhere, or gave up). */
    public void leaveQueue(LockOwner owner, AdvisoryKey key) {
        state.lock();
        try {
            dequeue(owner, key);
        } finally {
            state.unlock();
        }
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
        state.lock();
        try {
            signal();
        } finally {
            state.unlock();
        }
    }

    // ---- releases

    /** pg_advisory_unlock[_shared]: one session-level hold less; false when the owner holds none. */
    public boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            KeyState k = keys.get(key);
            KeyState.Holds h = k == null ? null : k.owners.get(owner);
            if (h == null || (shared ? h.sessionShared : h.sessionExclusive) == 0) {
                return false;
            }
            if (shared) {
                h.sessionShared--;
            } else {
                h.sessionExclusive--;
            }
            forgetIfEmpty(key, k, owner, h);
            return true;
        } finally {
            state.unlock();
        }
    }

    /** pg_advisory_unlock_all for one owner: its session-level holds go, transaction-level ones stay. */
    public void unlockAll(LockOwner owner) {
        state.lock();
        try {
            for (AdvisoryKey key : new ArrayList<>(byOwner.getOrDefault(owner, Set.of()))) {
                KeyState k = keys.get(key);
                KeyState.Holds h = k.owners.get(owner);
                h.sessionExclusive = 0;
                h.sessionShared = 0;
                forgetIfEmpty(key, k, owner, h);
            }
        } finally {
            state.unlock();
        }
    }

    /** The transaction-level holds of {@code tx} taken at savepoint depth {@code level} or deeper go. */
    public void releaseTransaction(Object tx, int level) {
        state.lock();
        try {
            Set<AdvisoryKey> held = byTransaction.get(tx);
            if (held == null) {
                return;
            }
            for (AdvisoryKey key : new ArrayList<>(held)) {
                KeyState k = keys.get(key);
                boolean left = false;
                for (Map.Entry<LockOwner, KeyState.Holds> o : new ArrayList<>(k.owners.entrySet())) {
                    KeyState.Holds h = o.getValue();
                    h.xact.removeIf(x -> x.tx == tx && x.level >= level);
                    left |= hasHoldOf(h, tx);
                    forgetIfEmpty(key, k, o.getKey(), h);
                }
                if (!left) {
                    held.remove(key);
                }
            }
            if (held.isEmpty()) {
                byTransaction.remove(tx);
            }
        } finally {
            state.unlock();
        }
    }

    /** RELEASE SAVEPOINT: holds of {@code tx} taken at {@code level} or deeper now belong to the enclosing level. */
    public void mergeTransactionLevel(Object tx, int level) {
        state.lock();
        try {
            for (AdvisoryKey key : byTransaction.getOrDefault(tx, Set.of())) {
                for (KeyState.Holds h : keys.get(key).owners.values()) {
                    for (KeyState.XactHold x : h.xact) {
                        if (x.tx == tx && x.level >= level) {
                            x.level = level - 1;
                        }
                    }
                }
            }
        } finally {
            state.unlock();
        }
    }

    /**
     * The owner is gone: everything it held goes, its queue place too; returns its session-level holds, for
     * the report.
     *
     * @param forGood it takes nothing any more (a closed connection: a statement racing the close takes
     *                nothing after this)
     */
    public List<SessionHold> releaseOwner(LockOwner owner, boolean forGood) {
        state.lock();
        try {
            if (forGood) {
                owner.close();
            }
            List<SessionHold> held = new ArrayList<>();
            for (AdvisoryKey key : new ArrayList<>(byOwner.getOrDefault(owner, Set.of()))) {
                KeyState k = keys.get(key);
                KeyState.Holds h = k.owners.get(owner);
                if (h.sessionExclusive > 0) {
                    held.add(new SessionHold(key, false, h.sessionExclusive));
                }
                if (h.sessionShared > 0) {
                    held.add(new SessionHold(key, true, h.sessionShared));
                }
                h.sessionExclusive = 0;
                h.sessionShared = 0;
                for (KeyState.XactHold x : h.xact) {
                    Set<AdvisoryKey> ofTx = byTransaction.get(x.tx);
                    if (ofTx != null) {
                        ofTx.remove(key);
                        if (ofTx.isEmpty()) {
                            byTransaction.remove(x.tx);
                        }
                    }
                }
                h.xact.clear();
                forgetIfEmpty(key, k, owner, h);
            }
            AdvisoryKey waitingFor = queuedOn.get(owner);
            if (waitingFor != null) {
                dequeue(owner, waitingFor);
            }
            signal();
            return held;
        } finally {
            state.unlock();
        }
    }

    /**
     * The server locks no owner needs any more (and stray copies): marked as released here; the caller
     * releases them on the backends named. Keys nobody holds are forgotten.
     */
    public List<ServerLock> surplus() {
        state.lock();
        try {
            List<ServerLock> out = new ArrayList<>(strays);
            for (ServerLock stray : strays) {
                modesOn.computeIfPresent(stray.on, (b, n) -> n == 1 ? null : n - 1);
            }
            strays.clear();
            for (AdvisoryKey key : touched) {
                KeyState k = keys.get(key);
                if (k == null) {
                    continue;
                }
                for (boolean shared : new boolean[] {false, true}) {
                    if (k.surplus(shared)) {
                        out.add(new ServerLock(key, shared, k.server(shared)));
                        modesOn.computeIfPresent(k.server(shared), (b, n) -> n == 1 ? null : n - 1);
                        serverModes--;
                        k.setServer(shared, null, 0);
                    }
                }
                if (k.unused()) {
                    keys.remove(key);
                }
            }
            touched.clear();
            return out;
        } finally {
            state.unlock();
        }
    }

    /** True when {@link #surplus} has something to release. */
    public boolean surplusDue() {
        state.lock();
        try {
            if (!strays.isEmpty()) {
                return true;
            }
            for (AdvisoryKey key : touched) {
                KeyState k = keys.get(key);
                if (k != null && (k.surplus(false) || k.surplus(true))) {
                    return true;
                }
            }
            return false;
        } finally {
            state.unlock();
        }
    }

    /** Everything is forgotten (the holder's backends are gone, and their locks with them); returns who held something. */
    public List<LockOwner> clear() {
        state.lock();
        try {
            List<LockOwner> owners = new ArrayList<>(byOwner.keySet());
            for (LockOwner o : owners) {
                o.holding(false);
            }
            keys.clear();
            byOwner.clear();
            byTransaction.clear();
            modesOn.clear();
            touched.clear();
            strays.clear();
            queuedOn.clear();
            serverModes = 0;
            owning = 0;
            signal();
            return owners;
        } finally {
            state.unlock();
        }
    }

    // ---- questions

    /** True when the owner holds anything, session- or transaction-level. */
    public boolean holdsAnything(LockOwner owner) {
        state.lock();
        try {
            return byOwner.containsKey(owner);
        } finally {
            state.unlock();
        }
    }

    /** True when some owner holds anything: a volatile read, for the hot path. */
    public boolean anyoneHolds() {
        return owning > 0;
    }

    /** The owners that hold anything. */
    public List<LockOwner> owners() {
        state.lock();
        try {
            return new ArrayList<>(byOwner.keySet());
        } finally {
            state.unlock();
        }
    }

    /** The owners that hold {@code key} in a mode conflicting with {@code shared}, for the deadlock probe. */
    public List<LockOwner> holders(AdvisoryKey key, boolean shared) {
        state.lock();
        try {
            KeyState k = keys.get(key);
            return k == null ? new ArrayList<>(0) : k.holders(shared);
        } finally {
            state.unlock();
        }
    }

    /** The owner {@code owner} waits for here now, or null (its turn has come, or it waits for another process). */
    public LockOwner waitingFor(LockOwner owner) {
        state.lock();
        try {
            return waitingFor0(owner);
        } finally {
            state.unlock();
        }
    }

    public boolean serverHoldsNothing() {
        state.lock();
        try {
            return serverModes == 0 && strays.isEmpty();
        } finally {
            state.unlock();
        }
    }

    /** True when backend {@code on} holds some mode of some key on the server. */
    public boolean backendHolds(Backend on) {
        state.lock();
        try {
            return modesOn.containsKey(on);
        } finally {
            state.unlock();
        }
    }

    /**
     * The seals of the sessions the owner's holds live on (what its fenced commit checks), distinct; empty
     * when it holds nothing.
     */
    public int[] sealsOf(LockOwner owner) {
        state.lock();
        try {
            int[] seals = new int[2];
            int n = 0;
            for (AdvisoryKey key : byOwner.getOrDefault(owner, Set.of())) {
                KeyState k = keys.get(key);
                KeyState.Holds h = k.owners.get(owner);
                for (int m = 0; m < 2; m++) {
                    boolean shared = m == 1;
                    if (h.holds(shared) && k.server(shared) != null) {
                        n = addDistinct(seals, n, k.seal(shared));
                        if (n == seals.length) {
                            seals = java.util.Arrays.copyOf(seals, n * 2);
                        }
                    }
                }
            }
            return java.util.Arrays.copyOf(seals, n);
        } finally {
            state.unlock();
        }
    }

    /** The keys the owner holds, for messages. */
    public List<AdvisoryKey> keysOf(LockOwner owner) {
        state.lock();
        try {
            return new ArrayList<>(byOwner.getOrDefault(owner, Set.of()));
        } finally {
            state.unlock();
        }
    }

    // ---- under the lock

    private static int addDistinct(int[] values, int n, int v) {
        for (int i = 0; i < n; i++) {
            if (values[i] == v) {
                return n;
            }
        }
        values[n] = v;
        return n + 1;
    }

    private void signal() {
        generation++;
        changed.signalAll();
    }

    /** Records a grant (the caller checked the blocker and the server's mode). */
    private void grant(LockOwner owner, AdvisoryKey key, boolean shared, Object tx, int level) {
        KeyState k = keys.computeIfAbsent(key, x -> new KeyState());
        KeyState.Holds h = k.owners.computeIfAbsent(owner, o -> new KeyState.Holds());
        if (tx != null) {
            h.xact.add(new KeyState.XactHold(tx, level, shared));
            byTransaction.computeIfAbsent(tx, t -> new HashSet<>(2)).add(key);
        } else if (shared) {
            h.sessionShared++;
        } else {
            h.sessionExclusive++;
        }
        if (byOwner.computeIfAbsent(owner, o -> new HashSet<>(2)).add(key)) {
            owning = byOwner.size();
            owner.holding(true);
        }
    }

    private static boolean hasHoldOf(KeyState.Holds h, Object tx) {
        for (KeyState.XactHold x : h.xact) {
            if (x.tx == tx) {
                return true;
            }
        }
        return false;
    }

    private void forgetIfEmpty(AdvisoryKey key, KeyState k, LockOwner owner, KeyState.Holds h) {
        if (h.isEmpty()) {
            k.owners.remove(owner);
            Set<AdvisoryKey> mine = byOwner.get(owner);
            if (mine != null && mine.remove(key) && mine.isEmpty()) {
                byOwner.remove(owner);
                owning = byOwner.size();
                owner.holding(false);
            }
        }
        touched.add(key);
        signal();
    }

    /** Queues a request; false when waiting for {@code blocker} closes a cycle (a deadlock), then nothing is queued. */
    private boolean enqueue(LockOwner owner, AdvisoryKey key, boolean shared, LockOwner blocker) {
        if (blocker != null && closesCycle(owner, blocker)) {
            return false;
        }
        keys.computeIfAbsent(key, x -> new KeyState()).queue.add(new KeyState.Waiting(owner, shared));
        queuedOn.put(owner, key);
        return true;
    }

    private void dequeue(LockOwner owner, AdvisoryKey key) {
        queuedOn.remove(owner, key);
        KeyState k = keys.get(key);
        if (k != null && k.queue.removeIf(w -> w.owner == owner)) {
            touched.add(key);
        }
        signal();
    }

    /** True when {@code owner} waiting for {@code blocker} closes a cycle of owners waiting for each other. */
    private boolean closesCycle(LockOwner owner, LockOwner blocker) {
        LockOwner o = blocker;
        for (int i = 0; o != null && i <= queuedOn.size() + 1; i++) {
            if (o == owner) {
                return true;
            }
            o = waitingFor0(o);
        }
        return false;
    }

    /**
     * Whom {@code owner} waits for now, always computed from the table as it is (a remembered edge goes stale
     * the moment its owner lets go, and a stale edge is a deadlock that is not there).
     */
    private LockOwner waitingFor0(LockOwner owner) {
        AdvisoryKey key = queuedOn.get(owner);
        KeyState k = key == null ? null : keys.get(key);
        KeyState.Waiting w = k == null ? null : k.queued(owner);
        return w == null ? null : k.blockerInQueue(owner, w.shared);
    }

    @Override
    public String toString() {
        state.lock();
        try {
            return "LockTable[keys " + keys.keySet() + ", owners " + byOwner + ", queued " + queuedOn + "]";
        } finally {
            state.unlock();
        }
    }
}
