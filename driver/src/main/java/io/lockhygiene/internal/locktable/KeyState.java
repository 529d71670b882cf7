package io.lockhygiene.internal.locktable;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One key of the lock table: what each owner holds of it, who waits for it (PostgreSQL's queue among the
 * owners of this process), and which of the holder's backends hold its modes on the server. PostgreSQL's
 * per-key rules live here; {@link LockTable} keeps the keys, the indexes and the lock. Not thread-safe:
 * used under the table's lock only.
 */
final class KeyState {
    /** A transaction-level hold: taken in transaction {@code tx} at savepoint depth {@code level}. */
    static final class XactHold {
        final TransactionId tx;
        int level;
        final boolean shared;

        XactHold(TransactionId tx, int level, boolean shared) {
            this.tx = tx;
            this.level = level;
            this.shared = shared;
        }
    }

    /** What one owner holds of this key. */
    static final class Holds {
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

        boolean holdsIn(TransactionId tx) {
            for (XactHold x : xact) {
                if (x.tx == tx) {
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
    static final class QueuedRequest {
        final LockOwner owner;
        final boolean shared;

        QueuedRequest(LockOwner owner, boolean shared) {
            this.owner = owner;
            this.shared = shared;
        }
    }

    final Map<LockOwner, Holds> owners = new LinkedHashMap<>(2);
    final List<QueuedRequest> queue = new ArrayList<>(0);
    /** The backend that holds the mode on the server, or null; and the seal of its session then. */
    LockTable.Backend serverExclusive;
    LockTable.Backend serverShared;
    int exclusiveSeal;
    int sharedSeal;

    static boolean conflicts(boolean shared, boolean otherShared) {
        return !(shared && otherShared);
    }

    /** Another owner holding a mode that conflicts with {@code shared}, or null. */
    LockOwner conflictingOwner(LockOwner owner, boolean shared) {
        for (Map.Entry<LockOwner, Holds> o : owners.entrySet()) {
            if (o.getKey() != owner && (o.getValue().holds(false) || (!shared && o.getValue().holds(true)))) {
                return o.getKey();
            }
        }
        return null;
    }

    /**
     * The owner a new request must wait for, or null when PostgreSQL grants it now: a conflicting holder,
     * else a conflicting queued request of another owner (PostgreSQL's waitMask), unless {@code owner} holds
     * a mode that queued request waits for: then it goes before it.
     */
    LockOwner blocker(LockOwner owner, boolean shared) {
        LockOwner holder = conflictingOwner(owner, shared);
        if (holder != null) {
            return holder;
        }
        Holds mine = owners.get(owner);
        for (QueuedRequest w : queue) {
            if (w.owner == owner) {
                continue;
            }
            if (mine != null && (mine.holds(false) || (mine.holds(true) && !w.shared))) {
                return null; // it waits for a lock this owner holds: PostgreSQL puts this request first
            }
            if (conflicts(shared, w.shared)) {
                return w.owner;
            }
        }
        return null;
    }

    /** For an owner already queued: whom it still waits for (a holder, or a request ahead of it), or null. */
    LockOwner blockerInQueue(LockOwner owner, boolean shared) {
        LockOwner holder = conflictingOwner(owner, shared);
        if (holder != null) {
            return holder;
        }
        for (QueuedRequest w : queue) {
            if (w.owner == owner) {
                return null;
            }
            if (conflicts(shared, w.shared)) {
                return w.owner;
            }
        }
        return null;
    }

    /** Another owner's queued request conflicting with {@code shared}, or null. */
    LockOwner queuedConflict(LockOwner owner, boolean shared) {
        for (QueuedRequest w : queue) {
            if (w.owner != owner && conflicts(shared, w.shared)) {
                return w.owner;
            }
        }
        return null;
    }

    /** PostgreSQL 15 refuses a try that conflicts with a held lock or with any queued request. */
    LockOwner tryBlocker(LockOwner owner, boolean shared) {
        LockOwner b = conflictingOwner(owner, shared);
        return b != null ? b : queuedConflict(owner, shared);
    }

    /** The owners holding a mode conflicting with {@code shared} (any owner), for reports. */
    List<LockOwner> ownersHolding(boolean shared) {
        List<LockOwner> out = new ArrayList<>(1);
        for (Map.Entry<LockOwner, Holds> o : owners.entrySet()) {
            if (o.getValue().holds(false) || (!shared && o.getValue().holds(true))) {
                out.add(o.getKey());
            }
        }
        return out;
    }

    /** The queued request of {@code owner}, or null. */
    QueuedRequest queued(LockOwner owner) {
        for (QueuedRequest w : queue) {
            if (w.owner == owner) {
                return w;
            }
        }
        return null;
    }

    boolean anyHolds(boolean shared) {
        for (Holds h : owners.values()) {
            if (h.holds(shared)) {
                return true;
            }
        }
        return false;
    }

    LockTable.Backend server(boolean shared) {
        return shared ? serverShared : serverExclusive;
    }

    int seal(boolean shared) {
        return shared ? sharedSeal : exclusiveSeal;
    }

    void setServer(boolean shared, LockTable.Backend on, int seal) {
        if (shared) {
            serverShared = on;
            sharedSeal = seal;
        } else {
            serverExclusive = on;
            exclusiveSeal = seal;
        }
    }

    /**
     * For a take queued for the main session {@code main}, at its batch: whether it still needs the server
     * (see {@link LockTable#stillNeedsServer}).
     */
    Answer.ServerStep serverStep(LockOwner owner, boolean shared, boolean tryLock, boolean queued, boolean probe,
                                    LockTable.Backend main) {
        LockTable.Backend home = server(!shared);
        if (probe) {
            // a session's own lock does not conflict with its own try; a key on a waiting session goes there
            return tryBlocker(owner, shared) == null && server(shared) == null && (home == null || home == main)
                    ? Answer.ServerStep.TRY : Answer.ServerStep.NOT_NEEDED;
        }
        LockOwner blocker = queued ? blockerInQueue(owner, shared) : tryLock ? tryBlocker(owner, shared)
                : blocker(owner, shared);
        if (blocker != null || server(shared) != null || (home != null && home != main)) {
            return Answer.ServerStep.NOT_NEEDED;
        }
        return !tryLock && shared && home == main ? Answer.ServerStep.GRANTED_AT_ONCE : Answer.ServerStep.TRY;
    }

    /** The server holds this mode and no owner needs it (nor a queued owner, who takes it next). */
    boolean surplus(boolean shared) {
        return queue.isEmpty() && server(shared) != null && !anyHolds(shared);
    }

    boolean unused() {
        return owners.isEmpty() && queue.isEmpty() && serverExclusive == null && serverShared == null;
    }
}
