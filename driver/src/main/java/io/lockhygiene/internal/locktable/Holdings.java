package io.lockhygiene.internal.locktable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the owners hold, per key and indexed from owner and from transaction to keys, so every question of
 * one owner or one transaction is answered from its own keys. Keys touched by a release are noted for the
 * surplus. Not thread-safe: {@link LockTable} uses it under its lock.
 */
final class Holdings {
    final Map<AdvisoryKey, KeyState> keys = new HashMap<>();
    private final Map<LockOwner, Set<AdvisoryKey>> byOwner = new HashMap<>();
    private final Map<TransactionId, Set<AdvisoryKey>> byTransaction = new HashMap<>();
    /** Keys whose server modes may have become surplus since the last surplus. */
    final Set<AdvisoryKey> touched = new LinkedHashSet<>();
    /** Owners holding anything: the hot path reads it without the lock. */
    private volatile int owning;

    KeyState key(AdvisoryKey key) {
        return keys.computeIfAbsent(key, x -> new KeyState());
    }

    /** Records a grant (the caller checked the blocker and the server's mode). */
    void grant(LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level) {
        KeyState.Holds h = key(key).owners.computeIfAbsent(owner, o -> new KeyState.Holds());
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

    /** One session-level hold less; false when the owner holds none. */
    boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) {
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
    }

    /** The owner's session-level holds go, and are returned; with {@code transactionToo} its transaction-level ones too. */
    List<SessionHold> releaseSessionHolds(LockOwner owner, boolean transactionToo) {
        List<SessionHold> held = new ArrayList<>(0);
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
            if (transactionToo) {
                for (KeyState.XactHold x : h.xact) {
                    Set<AdvisoryKey> ofTx = byTransaction.get(x.tx);
                    if (ofTx != null && ofTx.remove(key) && ofTx.isEmpty()) {
                        byTransaction.remove(x.tx);
                    }
                }
                h.xact.clear();
            }
            forgetIfEmpty(key, k, owner, h);
        }
        return held;
    }

    /** The transaction-level holds of {@code tx} taken at savepoint depth {@code level} or deeper go. */
    void releaseTransaction(TransactionId tx, int level) {
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
                left |= h.holdsIn(tx);
                forgetIfEmpty(key, k, o.getKey(), h);
            }
            if (!left) {
                held.remove(key);
            }
        }
        if (held.isEmpty()) {
            byTransaction.remove(tx);
        }
    }

    /** RELEASE SAVEPOINT: holds of {@code tx} taken at {@code level} or deeper belong to the enclosing level. */
    void mergeTransactionLevel(TransactionId tx, int level) {
        for (AdvisoryKey key : byTransaction.getOrDefault(tx, Set.of())) {
            for (KeyState.Holds h : keys.get(key).owners.values()) {
                for (KeyState.XactHold x : h.xact) {
                    if (x.tx == tx && x.level >= level) {
                        x.level = level - 1;
                    }
                }
            }
        }
    }

    /** Everything is forgotten; returns who held something (no longer marked as holding). */
    List<LockOwner> clear() {
        List<LockOwner> owners = new ArrayList<>(byOwner.keySet());
        for (LockOwner o : owners) {
            o.holding(false);
        }
        keys.clear();
        byOwner.clear();
        byTransaction.clear();
        touched.clear();
        owning = 0;
        return owners;
    }

    boolean holdsAnything(LockOwner owner) {
        return byOwner.containsKey(owner);
    }

    boolean anyoneHolds() {
        return owning > 0;
    }

    List<LockOwner> owners() {
        return new ArrayList<>(byOwner.keySet());
    }

    List<AdvisoryKey> keysOf(LockOwner owner) {
        return new ArrayList<>(byOwner.getOrDefault(owner, Set.of()));
    }

    /** The owners that hold {@code key} in a mode conflicting with {@code shared}. */
    List<LockOwner> ownersHolding(AdvisoryKey key, boolean shared) {
        KeyState k = keys.get(key);
        return k == null ? List.of() : k.ownersHolding(shared);
    }

    /** The distinct seals of the sessions the owner's holds live on; null when it holds nothing. */
    int[] sealsOf(LockOwner owner) {
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
                        seals = Arrays.copyOf(seals, n * 2);
                    }
                }
            }
        }
        return n == 0 ? null : Arrays.copyOf(seals, n);
    }

    private static int addDistinct(int[] values, int n, int v) {
        for (int i = 0; i < n; i++) {
            if (values[i] == v) {
                return n;
            }
        }
        values[n] = v;
        return n + 1;
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
    }

    @Override
    public String toString() {
        return "keys " + keys.keySet() + ", owners " + byOwner;
    }

    /**
     * Who is queued for which key (an owner waits for one lock at a time), and the wait-for graph read from
     * the table as it is, for deadlocks. The queues themselves are the keys' (see {@link KeyState}). Not
     * thread-safe: {@link LockTable} uses it under its lock.
     */
    static final class WaitQueues {
        private final Holdings holdings;
        private final Map<LockOwner, AdvisoryKey> queuedOn = new HashMap<>();

        WaitQueues(Holdings holdings) {
            this.holdings = holdings;
        }

        /** Queues a request; false when waiting for {@code blocker} closes a cycle (a deadlock), then nothing is queued. */
        boolean enqueue(LockOwner owner, AdvisoryKey key, boolean shared, LockOwner blocker) {
            if (blocker != null && closesCycle(owner, blocker)) {
                return false;
            }
            holdings.key(key).queue.add(new KeyState.QueuedRequest(owner, shared));
            queuedOn.put(owner, key);
            return true;
        }

        void dequeue(LockOwner owner, AdvisoryKey key) {
            queuedOn.remove(owner, key);
            KeyState k = holdings.keys.get(key);
            if (k != null && k.queue.removeIf(w -> w.owner == owner)) {
                holdings.touched.add(key);
            }
        }

        /** The owner leaves whatever queue it is in. */
        void leave(LockOwner owner) {
            AdvisoryKey key = queuedOn.get(owner);
            if (key != null) {
                dequeue(owner, key);
            }
        }

        /** True when {@code owner} waiting for {@code blocker} closes a cycle of owners waiting for each other. */
        boolean closesCycle(LockOwner owner, LockOwner blocker) {
            LockOwner o = blocker;
            for (int i = 0; o != null && i <= queuedOn.size() + 1; i++) {
                if (o == owner) {
                    return true;
                }
                o = waitingFor(o);
            }
            return false;
        }

        /**
         * Whom {@code owner} waits for now, always computed from the table as it is (a remembered edge goes stale
         * the moment its owner lets go, and a stale edge is a deadlock that is not there).
         */
        LockOwner waitingFor(LockOwner owner) {
            AdvisoryKey key = queuedOn.get(owner);
            KeyState k = key == null ? null : holdings.keys.get(key);
            KeyState.QueuedRequest w = k == null ? null : k.queued(owner);
            return w == null ? null : k.blockerInQueue(owner, w.shared);
        }

        void clear() {
            queuedOn.clear();
        }

        @Override
        public String toString() {
            return queuedOn.toString();
        }
    }
}
