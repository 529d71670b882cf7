package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;

import io.lockhygiene.internal.emulate.AdvisoryKey;

/**
 * One owner's acquisition on a {@link SharedHolder}: decided in the holder's lock table; a conflict
 * with a local owner waits in the JVM (woken at release, deadlocks answered 40P01); a mode the server
 * must take first is queued for the next shared round trip; another process's hold is polled with
 * backoff, nothing held in between. Takes the holder's locks in its documented order.
 */
final class HolderAcquisition {
    private static final long LOCAL_RECHECK_MILLIS = 50;

    private final SharedHolder holder;

    HolderAcquisition(SharedHolder holder) {
        this.holder = holder;
    }

    /** See {@link SharedHolder#acquire}. */
    boolean acquire(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                    long lockTimeoutMillis, long deadlineNanos) throws SQLException {
        long start = System.nanoTime();
        long backoff = 2;
        boolean waiting = false; // registered as a local waiter of the key (under holder.state)
        while (true) {
            SQLException giveUp = null;
            holder.state.lock();
            try {
                if (waiting) {
                    holder.table.stopWaiting(owner, key); // registered again below while still blocked
                    waiting = false;
                }
                if (owner.isClosed()) {
                    giveUp = new SQLException("This connection has been closed.", "08003");
                } else {
                    Object blocker = holder.table.blocker(owner, key, shared);
                    if (blocker == null) {
                        blocker = holder.handOvers.conflicting(owner, key, shared); // held all along, for PostgreSQL
                    }
                    if (blocker == null) {
                        if (!holder.table.serverNeeds(key, shared)) {
                            holder.table.grant(owner, key, shared, tx, level);
                            return true;
                        }
                    } else if (tryLock) {
                        return false;
                    } else if (holder.table.startWaiting(owner, blocker, key)) {
                        giveUp = new SQLException("deadlock detected (LockHygiene, lockhygiene.mode=emulate: " + owner
                                + " waits for advisory lock " + key + " held by " + blocker + ", which waits for it)",
                                "40P01");
                    } else {
                        waiting = true;
                        try {
                            LocalWait.awaitUntil(holder.released, LOCAL_RECHECK_MILLIS, start, lockTimeoutMillis, deadlineNanos);
                            continue;
                        } catch (SQLException e) {
                            holder.table.stopWaiting(owner, key);
                            waiting = false;
                            giveUp = e;
                        }
                    }
                }
            } finally {
                holder.state.unlock();
            }
            if (giveUp != null) {
                holder.settle(null); // a holder.released lock may have been kept on the server for this waiter
                throw giveUp;
            }
            // the server must take this mode first: one round trip, nothing of the holder.table held meanwhile
            Boolean took = takeOnServer(owner, key, shared, tryLock, tx, level);
            if (took == null) {
                continue; // someone else changed the key meanwhile: decide again
            }
            if (took) {
                return true;
            }
            if (tryLock) {
                return false; // another process holds it
            }
            holder.state.lock();
            try {
                LocalWait.awaitUntil(holder.released, backoff, start, lockTimeoutMillis, deadlineNanos);
            } finally {
                holder.state.unlock();
            }
            backoff = Math.min(backoff * 2, 50);
        }
    }

    /**
     * Takes the mode on the server and grants it (true), or not (false), or must decide again (null). The
     * acquisition is holder.queued; the thread that holds holder.io next sends every holder.queued one (and the releases due) in
     * one round trip, so owners of the process share round trips instead of queueing for them.
     */
    private Boolean takeOnServer(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx,
                                 int level) throws SQLException {
        HolderTake take = new HolderTake(owner, key, shared, tryLock, tx, level);
        holder.state.lock();
        try {
            holder.queued.add(take);
        } finally {
            holder.state.unlock();
        }
        holder.io.lock();
        try {
            if (!take.done) {
                holder.server.flush(take);
            }
        } finally {
            holder.io.unlock();
        }
        if (take.failure != null) {
            throw take.failure;
        }
        return take.result;
    }
}
