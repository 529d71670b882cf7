package io.lockhygiene.internal.emulate;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostgreSQL's advisory lock semantics among the owners of one process, for one lock holder. Each owner
 * (an application connection, or a thread of a pool) holds keys as a session would: exclusive and shared,
 * session-level holds that stack and are released one unlock at a time, and transaction-level holds tied
 * to a transaction and the savepoint level they were taken at. An owner never conflicts with itself.
 *
 * <p>The table also knows which modes the holder's backend holds on the server for each key: exactly the
 * modes some owner holds, so that other processes see PostgreSQL's exclusion. Callers ask
 * {@link #serverNeeds} before a grant and apply {@link #surplus} after a release.
 *
 * <p>Pure and not thread-safe: the lock holder serializes all calls.
 */
public final class LockTable {

    /** A transaction-level hold: taken in transaction {@code tx} at savepoint depth {@code level}. */
    private static final class XactHold {
        final Object tx;
        int level;
        final boolean shared;

        XactHold(Object tx, int level, boolean shared) {
            this.tx = tx;
            this.level = level;
            this.shared = shared;
        }
    }

    /** What one owner holds on one key. */
    private static final class Holds {
        int sessionExclusive;
        int sessionShared;
        final List<XactHold> xact = new ArrayList<>(1);

        boolean holds(boolean shared) {
            if ((shared ? sessionShared : sessionExclusive) > 0) {
                return true;
            }
            for (XactHold h : xact) {
                if (h.shared == shared) {
                    return true;
                }
            }
            return false;
        }

        boolean isEmpty() {
            return sessionExclusive == 0 && sessionShared == 0 && xact.isEmpty();
        }
    }

    /** One key: its owners' holds and what the holder's backend holds on the server. */
    private static final class Entry {
        final Map<Object, Holds> owners = new LinkedHashMap<>(2);
        boolean serverExclusive;
        boolean serverShared;
        /** Local owners waiting for this key: its server lock is kept for them (handed over, no round trip). */
        int waiters;

        boolean anyHolds(boolean shared) {
            for (Holds h : owners.values()) {
                if (h.holds(shared)) {
                    return true;
                }
            }
            return false;
        }

        /** The server holds this mode and no owner needs it (nor a local waiter, who takes it next). */
        boolean surplus(boolean shared) {
            return waiters == 0 && (shared ? serverShared : serverExclusive) && !anyHolds(shared);
        }
    }

    private final Map<AdvisoryKey, Entry> entries = new HashMap<>();
    /** owner -> the owner it waits for, for deadlock detection among local waiters. */
    private final Map<Object, Object> waitsFor = new HashMap<>();

    /**
     * The other owner whose hold conflicts with {@code owner} taking {@code key} in this mode, or null:
     * exclusive conflicts with anything another owner holds, shared only with another's exclusive.
     */
    public Object blocker(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        for (Map.Entry<Object, Holds> o : e.owners.entrySet()) {
            if (o.getKey() != owner && (o.getValue().holds(false) || (!shared && o.getValue().holds(true)))) {
                return o.getKey();
            }
        }
        return null;
    }

    /** True when the holder's backend must take this mode on the server before the grant. */
    public boolean serverNeeds(AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        return e == null || !(shared ? e.serverShared : e.serverExclusive);
    }

    /** True when the holder's backend holds the key exclusively (a shared request then cannot wait there). */
    public boolean serverHoldsExclusive(AdvisoryKey key) {
        Entry e = entries.get(key);
        return e != null && e.serverExclusive;
    }

    /** The holder's backend now holds this mode on the server. */
    public void serverTook(AdvisoryKey key, boolean shared) {
        Entry e = entries.computeIfAbsent(key, k -> new Entry());
        if (shared) {
            e.serverShared = true;
        } else {
            e.serverExclusive = true;
        }
    }

    /**
     * Records a grant; the caller checked {@link #blocker} and took the server mode if needed.
     *
     * @param tx null for a session-level hold, else the transaction the hold belongs to
     * @param level the savepoint depth at which a transaction-level hold was taken
     */
    public void grant(Object owner, AdvisoryKey key, boolean shared, Object tx, int level) {
        Holds h = entries.computeIfAbsent(key, k -> new Entry()).owners.computeIfAbsent(owner, o -> new Holds());
        if (tx != null) {
            h.xact.add(new XactHold(tx, level, shared));
        } else if (shared) {
            h.sessionShared++;
        } else {
            h.sessionExclusive++;
        }
    }

    /**
     * A session-level unlock: one hold of this mode less. False (PostgreSQL's "you don't own a lock")
     * when the owner holds none at session level; transaction-level holds are never released by it.
     */
    public boolean unlock(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        Holds h = e == null ? null : e.owners.get(owner);
        if (h == null || (shared ? h.sessionShared : h.sessionExclusive) == 0) {
            return false;
        }
        if (shared) {
            h.sessionShared--;
        } else {
            h.sessionExclusive--;
        }
        forgetIfEmpty(e, owner, h);
        return true;
    }

    /** pg_advisory_unlock_all for one owner: all its session-level holds go, transaction-level ones stay. */
    public void unlockAll(Object owner) {
        for (Entry e : entries.values()) {
            Holds h = e.owners.get(owner);
            if (h != null) {
                h.sessionExclusive = 0;
                h.sessionShared = 0;
                forgetIfEmpty(e, owner, h);
            }
        }
    }

    /** The transaction-level holds of {@code tx} taken at savepoint depth {@code level} or deeper go. */
    public void releaseTransaction(Object tx, int level) {
        for (Entry e : entries.values()) {
            Iterator<Map.Entry<Object, Holds>> owners = e.owners.entrySet().iterator();
            while (owners.hasNext()) {
                Holds h = owners.next().getValue();
                h.xact.removeIf(x -> x.tx == tx && x.level >= level);
                if (h.isEmpty()) {
                    owners.remove();
                }
            }
        }
    }

    /** RELEASE SAVEPOINT: holds of {@code tx} taken at {@code level} or deeper now belong to the enclosing level. */
    public void mergeTransactionLevel(Object tx, int level) {
        for (Entry e : entries.values()) {
            for (Holds h : e.owners.values()) {
                for (XactHold x : h.xact) {
                    if (x.tx == tx && x.level >= level) {
                        x.level = level - 1;
                    }
                }
            }
        }
    }

    /** The owner is gone: everything it held goes; returns its session-level holds, for the report. */
    public List<SessionHold> releaseOwner(Object owner) {
        List<SessionHold> held = new ArrayList<>();
        for (Map.Entry<AdvisoryKey, Entry> e : entries.entrySet()) {
            Holds h = e.getValue().owners.remove(owner);
            if (h != null) {
                if (h.sessionExclusive > 0) {
                    held.add(new SessionHold(e.getKey(), false, h.sessionExclusive));
                }
                if (h.sessionShared > 0) {
                    held.add(new SessionHold(e.getKey(), true, h.sessionShared));
                }
            }
        }
        waitsFor.remove(owner);
        return held;
    }

    /** True when the owner holds any session-level lock (its transactions' xact calls then come here too). */
    public boolean holdsSessionLocks(Object owner) {
        for (Entry e : entries.values()) {
            Holds h = e.owners.get(owner);
            if (h != null && (h.sessionExclusive > 0 || h.sessionShared > 0)) {
                return true;
            }
        }
        return false;
    }

    /** The owners that hold anything. */
    public List<Object> owners() {
        List<Object> owners = new ArrayList<>();
        for (Entry e : entries.values()) {
            for (Object o : e.owners.keySet()) {
                if (!owners.contains(o)) {
                    owners.add(o);
                }
            }
        }
        return owners;
    }

    /**
     * The server locks no owner needs any more: marked as released here; the caller releases them on the
     * holder's backend. Keys nobody holds are forgotten.
     */
    public List<ServerLock> surplus() {
        List<ServerLock> out = new ArrayList<>(1);
        Iterator<Map.Entry<AdvisoryKey, Entry>> it = entries.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<AdvisoryKey, Entry> me = it.next();
            Entry e = me.getValue();
            // a local waiter takes a released lock next, as PostgreSQL grants it to its queue
            if (e.surplus(false)) {
                e.serverExclusive = false;
                out.add(new ServerLock(me.getKey(), false));
            }
            if (e.surplus(true)) {
                e.serverShared = false;
                out.add(new ServerLock(me.getKey(), true));
            }
            if (e.owners.isEmpty() && !e.serverExclusive && !e.serverShared) {
                it.remove();
            }
        }
        return out;
    }

    /** True when no server lock is left that no owner needs (nothing for {@link #surplus} to do). */
    public boolean surplusIsEmpty() {
        for (Entry e : entries.values()) {
            if (e.surplus(false) || e.surplus(true)) {
                return false;
            }
        }
        return true;
    }

    /** True when the holder's backend holds nothing on the server (it may let its server go). */
    public boolean serverHoldsNothing() {
        for (Entry e : entries.values()) {
            if (e.serverExclusive || e.serverShared) {
                return false;
            }
        }
        return true;
    }

    /** Everything is forgotten (the holder's backend is gone, and its locks with it). */
    public void clear() {
        entries.clear();
        waitsFor.clear();
    }

    /**
     * {@code owner} starts waiting for {@code blocker}; true when that closes a cycle of local waiters
     * (a deadlock PostgreSQL would detect and break with 40P01), in which case nothing is recorded.
     */
    public boolean startWaiting(Object owner, Object blocker, AdvisoryKey key) {
        Object o = blocker;
        for (int i = 0; o != null && i <= waitsFor.size(); i++) {
            if (o == owner) {
                return true;
            }
            o = waitsFor.get(o);
        }
        waitsFor.put(owner, blocker);
        entries.computeIfAbsent(key, k -> new Entry()).waiters++;
        return false;
    }

    /** Ends a wait started by {@link #startWaiting}; the caller then applies {@link #surplus} (the wait may have kept a lock). */
    public void stopWaiting(Object owner, AdvisoryKey key) {
        waitsFor.remove(owner);
        Entry e = entries.get(key);
        if (e != null && e.waiters > 0) {
            e.waiters--;
        }
    }

    private void forgetIfEmpty(Entry e, Object owner, Holds h) {
        if (h.isEmpty()) {
            e.owners.remove(owner);
        }
    }
}
