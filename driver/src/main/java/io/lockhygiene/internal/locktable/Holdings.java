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

    /** The distinct seals of the sessions the owner's holds live on; empty when it holds nothing. */
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
        return Arrays.copyOf(seals, n);
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
}
