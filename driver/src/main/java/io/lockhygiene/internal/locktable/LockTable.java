package io.lockhygiene.internal.locktable;

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
 * <p>Owners that wait form a queue per key, as PostgreSQL's: a request that conflicts with a queued
 * request waits behind it (a try fails), except that an owner holding a mode a queued request waits for
 * goes before that request (PostgreSQL's rule against self-made deadlocks).
 *
 * <p>The table also knows which modes the holder's backends hold on the server for each key, and on which
 * backend: exactly the modes some owner holds or a queued owner will take next, so that other processes see
 * PostgreSQL's exclusion. Callers ask {@link #serverNeeds} before a grant and apply {@link #surplus}
 * after a release.
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

    /** A queued request. */
    private static final class Waiting {
        final Object owner;
        final boolean shared;

        Waiting(Object owner, boolean shared) {
            this.owner = owner;
            this.shared = shared;
        }
    }

    /** One key: its owners' holds, its queue, and what the holder's backends hold on the server. */
    private static final class Entry {
        final Map<Object, Holds> owners = new LinkedHashMap<>(2);
        final List<Waiting> queue = new ArrayList<>(0);
        /** The backend that holds the mode on the server, or null. */
        Object serverExclusive;
        Object serverShared;

        boolean anyHolds(boolean shared) {
            for (Holds h : owners.values()) {
                if (h.holds(shared)) {
                    return true;
                }
            }
            return false;
        }

        /** The server holds this mode and no owner needs it (nor a queued owner, who takes it next). */
        boolean surplus(boolean shared) {
            return queue.isEmpty() && (shared ? serverShared : serverExclusive) != null && !anyHolds(shared);
        }

        boolean unused() {
            return owners.isEmpty() && queue.isEmpty() && serverExclusive == null && serverShared == null;
        }
    }

    private final Map<AdvisoryKey, Entry> entries = new HashMap<>();
    /**
     * owner -> the key it is queued for (an owner waits for one lock at a time). Whom it waits for is always
     * computed from the table as it is now ({@link #waitingFor}), never remembered: a remembered edge goes
     * stale the moment its owner lets go, and a stale edge is a deadlock that is not there.
     */
    private final Map<Object, AdvisoryKey> queuedOn = new HashMap<>();

    private static boolean conflicts(boolean shared, boolean otherShared) {
        return !(shared && otherShared);
    }

    private Object conflictingHolder(Entry e, Object owner, boolean shared) {
        for (Map.Entry<Object, Holds> o : e.owners.entrySet()) {
            if (o.getKey() != owner && (o.getValue().holds(false) || (!shared && o.getValue().holds(true)))) {
                return o.getKey();
            }
        }
        return null;
    }

    /**
     * The owner a new request of {@code owner} must wait for, or null when PostgreSQL grants it now: another
     * owner holding a conflicting mode, else a queued request of another owner that conflicts (PostgreSQL's
     * waitMask), unless {@code owner} holds a mode that queued request waits for: then it goes before it.
     */
    public Object blocker(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        Object holder = conflictingHolder(e, owner, shared);
        if (holder != null) {
            return holder;
        }
        Holds mine = e.owners.get(owner);
        for (Waiting w : e.queue) {
            if (w.owner == owner) {
                continue;
            }
            if (mine != null && ((mine.holds(false)) || (mine.holds(true) && !w.shared))) {
                return null; // it waits for a lock this owner holds: PostgreSQL puts this request first
            }
            if (conflicts(shared, w.shared)) {
                return w.owner;
            }
        }
        return null;
    }

    /**
     * For an owner already queued: the owner it still waits for (a conflicting holder, or a conflicting
     * request ahead of it), or null when its turn has come.
     */
    public Object blockerInQueue(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        Object holder = conflictingHolder(e, owner, shared);
        if (holder != null) {
            return holder;
        }
        for (Waiting w : e.queue) {
            if (w.owner == owner) {
                return null;
            }
            if (conflicts(shared, w.shared)) {
                return w.owner;
            }
        }
        return null;
    }

    /** Another owner holding {@code key} in a mode conflicting with {@code shared}, or null. */
    public Object heldConflict(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        return e == null ? null : conflictingHolder(e, owner, shared);
    }

    /** Another owner's queued request conflicting with {@code shared} (PostgreSQL's waitMask), or null. */
    public Object queuedConflict(Object owner, AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        if (e != null) {
            for (Waiting w : e.queue) {
                if (w.owner != owner && conflicts(shared, w.shared)) {
                    return w.owner;
                }
            }
        }
        return null;
    }

    /** True when {@code owner} holds {@code key} in any mode, at any level. */
    public boolean holdsKey(Object owner, AdvisoryKey key) {
        Entry e = entries.get(key);
        return e != null && e.owners.containsKey(owner);
    }

    /** The owners that hold {@code key} in a mode conflicting with {@code shared} (any owner), for reports. */
    public List<Object> holders(AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        List<Object> out = new ArrayList<>(1);
        if (e != null) {
            for (Map.Entry<Object, Holds> o : e.owners.entrySet()) {
                if (o.getValue().holds(false) || (!shared && o.getValue().holds(true))) {
                    out.add(o.getKey());
                }
            }
        }
        return out;
    }

    /**
     * Queues {@code owner}'s request behind the others; true when waiting for {@code blocker} closes a cycle
     * of waiting owners (a deadlock PostgreSQL would detect and break with 40P01), in which case nothing is
     * recorded.
     */
    public boolean enqueue(Object owner, AdvisoryKey key, boolean shared, Object blocker) {
        if (blocker != null && closesCycle(owner, blocker)) {
            return true;
        }
        Entry e = entries.computeIfAbsent(key, k -> new Entry());
        e.queue.add(new Waiting(owner, shared));
        queuedOn.put(owner, key);
        return false;
    }

    /** True when {@code owner} waiting for {@code blocker} closes a cycle of owners waiting for each other. */
    public boolean closesCycle(Object owner, Object blocker) {
        Object o = blocker;
        for (int i = 0; o != null && i <= queuedOn.size() + 1; i++) {
            if (o == owner) {
                return true;
            }
            o = waitingFor(o);
        }
        return false;
    }

    /**
     * The owner {@code owner} waits for now: a conflicting holder, or a conflicting request ahead of it in
     * its key's queue; null when it waits for nobody here (its turn has come, or it waits for another process).
     */
    public Object waitingFor(Object owner) {
        AdvisoryKey key = queuedOn.get(owner);
        if (key == null) {
            return null;
        }
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        for (Waiting w : e.queue) {
            if (w.owner == owner) {
                return blockerInQueue(owner, key, w.shared);
            }
        }
        return null;
    }

    /** Leaves the queue (granted, or given up); the caller then applies {@link #surplus}. */
    public void dequeue(Object owner, AdvisoryKey key) {
        queuedOn.remove(owner, key);
        Entry e = entries.get(key);
        if (e != null) {
            e.queue.removeIf(w -> w.owner == owner);
        }
    }

    /** True when some owner is queued for {@code key}. */
    public boolean hasQueue(AdvisoryKey key) {
        Entry e = entries.get(key);
        return e != null && !e.queue.isEmpty();
    }

    /** True when the holder's backends must take this mode on the server before the grant. */
    public boolean serverNeeds(AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        return e == null || (shared ? e.serverShared : e.serverExclusive) == null;
    }

    /** The backend that holds this mode of {@code key} on the server, or null. */
    public Object serverHolder(AdvisoryKey key, boolean shared) {
        Entry e = entries.get(key);
        return e == null ? null : shared ? e.serverShared : e.serverExclusive;
    }

    /** The holder's backend {@code on} now holds this mode on the server. */
    public void serverTook(AdvisoryKey key, boolean shared, Object on) {
        Entry e = entries.computeIfAbsent(key, k -> new Entry());
        if (shared) {
            e.serverShared = on;
        } else {
            e.serverExclusive = on;
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
            e.getValue().queue.removeIf(w -> w.owner == owner);
            if (h != null) {
                if (h.sessionExclusive > 0) {
                    held.add(new SessionHold(e.getKey(), false, h.sessionExclusive));
                }
                if (h.sessionShared > 0) {
                    held.add(new SessionHold(e.getKey(), true, h.sessionShared));
                }
            }
        }
        queuedOn.remove(owner);
        return held;
    }

    /** True when the owner holds any session-level lock. */
    public boolean holdsSessionLocks(Object owner) {
        for (Entry e : entries.values()) {
            Holds h = e.owners.get(owner);
            if (h != null && (h.sessionExclusive > 0 || h.sessionShared > 0)) {
                return true;
            }
        }
        return false;
    }

    /** True when the owner holds anything, session- or transaction-level. */
    public boolean holdsAnything(Object owner) {
        for (Entry e : entries.values()) {
            if (e.owners.containsKey(owner)) {
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
     * backends named. Keys nobody holds are forgotten.
     */
    public List<ServerLock> surplus() {
        List<ServerLock> out = new ArrayList<>(1);
        Iterator<Map.Entry<AdvisoryKey, Entry>> it = entries.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<AdvisoryKey, Entry> me = it.next();
            Entry e = me.getValue();
            // a queued owner takes a released lock next, as PostgreSQL grants it to its queue
            if (e.surplus(false)) {
                out.add(new ServerLock(me.getKey(), false, e.serverExclusive));
                e.serverExclusive = null;
            }
            if (e.surplus(true)) {
                out.add(new ServerLock(me.getKey(), true, e.serverShared));
                e.serverShared = null;
            }
            if (e.unused()) {
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

    /** True when the holder's backends hold nothing on the server. */
    public boolean serverHoldsNothing() {
        for (Entry e : entries.values()) {
            if (e.serverExclusive != null || e.serverShared != null) {
                return false;
            }
        }
        return true;
    }

    /** True when backend {@code on} holds some mode of some key on the server. */
    public boolean backendHolds(Object on) {
        for (Entry e : entries.values()) {
            if (e.serverExclusive == on || e.serverShared == on) {
                return true;
            }
        }
        return false;
    }

    /** Everything is forgotten (the holder's backends are gone, and their locks with them). */
    public void clear() {
        entries.clear();
        queuedOn.clear();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("LockTable[");
        for (Map.Entry<AdvisoryKey, Entry> me : entries.entrySet()) {
            Entry e = me.getValue();
            b.append(me.getKey()).append(": holders ");
            for (Map.Entry<Object, Holds> o : e.owners.entrySet()) {
                b.append(o.getKey()).append('(').append(o.getValue().sessionExclusive).append('/')
                        .append(o.getValue().sessionShared).append('/').append(o.getValue().xact.size()).append(") ");
            }
            b.append("queue");
            for (Waiting w : e.queue) {
                b.append(' ').append(w.owner).append(w.shared ? "(s)" : "");
            }
            b.append("; ");
        }
        return b.append("queued ").append(queuedOn).append(']').toString();
    }

    private void forgetIfEmpty(Entry e, Object owner, Holds h) {
        if (h.isEmpty()) {
            e.owners.remove(owner);
        }
    }
}
