package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.emulate.AdvisoryKey;
import io.lockhygiene.internal.emulate.ServerLock;
import io.lockhygiene.internal.log.Log;

/**
 * The server side of one {@link SharedHolder}: its one connection, the round trip that sends every due
 * release and queued acquisition at once, the transaction that pins its server while it holds anything,
 * the watchdog's look, and the loss of its server. Everything here runs under the holder's {@code io}
 * lock and takes its {@code state} lock only between round trips (the order the holder documents).
 */
final class HolderServer {
    /** Bounds every holder statement: a blackholed network must not hang the owners queued behind it. */
    private static final int NETWORK_TIMEOUT_MILLIS = 30_000;
    private static final String KEEP_IDLE_TRANSACTION =
            ", pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    private final SharedHolder holder;
    private final HolderFactory factory;
    private final HolderWatchdog.Watched watch = this::checkAlive;
    /** Written under io; volatile for {@link SharedHolder#reserve}'s look without it. */
    volatile Connection connection;

    HolderServer(SharedHolder holder, HolderFactory factory) {
        this.holder = holder;
        this.factory = factory;
    }

    /**
     * Under holder.io: one round trip for everything due: the releases of server locks nobody needs, then every
     * holder.queued acquisition (one per key: a second on the same key decides again after this one), in one
     * select list, which PostgreSQL evaluates left to right. With nothing held, nothing holder.queued and no
     * transaction using the holder, the holder ends its transaction instead. A failure fails every
     * acquisition of the batch now (their owners are not told again later).
     */
    void flush(HolderTake caller) throws SQLException {
        List<HolderTake> batch = new ArrayList<>();
        List<ServerLock> surplus;
        boolean nothingLeft;
        boolean wasPinned;
        holder.state.lock();
        try {
            java.util.Set<AdvisoryKey> keys = new java.util.HashSet<>();
            for (HolderTake t; (t = holder.queued.poll()) != null; ) {
                if (t.owner.isClosed()) {
                    t.failure = new SQLException("This connection has been closed.", "08003");
                    t.done = true;
                } else if (!keys.add(t.key) || holder.table.blocker(t.owner, t.key, t.shared) != null
                        || !holder.table.serverNeeds(t.key, t.shared)) {
                    t.done = true; // result null: decide again
                } else {
                    t.grantedAtOnce = !t.tryLock && t.shared && holder.table.serverHoldsExclusive(t.key);
                    batch.add(t);
                }
            }
            surplus = holder.table.surplus();
            wasPinned = holder.pinned;
            nothingLeft = batch.isEmpty() && holder.pinned && holder.table.serverHoldsNothing() && holder.venueTransactions == 0;
        } finally {
            holder.state.unlock();
        }
        if (nothingLeft) {
            // everything goes, whatever the backend holds, and the transaction that holder.pinned its server ends
            runOnServer("SELECT pg_catalog.pg_advisory_unlock_all(); COMMIT", batch);
            unpinned();
            return;
        }
        if (batch.isEmpty() && (surplus.isEmpty() || !wasPinned || connection == null)) {
            return;
        }
        StringBuilder sql = new StringBuilder("SELECT ");
        int column = 0;
        for (ServerLock l : surplus) {
            sql.append(column++ == 0 ? "" : ", ").append(l.shared ? "pg_catalog.pg_advisory_unlock_shared("
                    : "pg_catalog.pg_advisory_unlock(").append(l.key.sqlArguments()).append(")::text");
        }
        for (HolderTake t : batch) {
            sql.append(column++ == 0 ? "" : ", ").append(t.grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared("
                    : t.shared ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(")
                    .append(t.key.sqlArguments()).append(")::text");
        }
        if (!wasPinned) {
            sql.append(KEEP_IDLE_TRANSACTION);
        }
        String[] answers = queryRowOnServer(sql.toString(), column, batch);
        boolean anyTaken = false;
        boolean surplusLeft = false;
        holder.state.lock();
        try {
            for (int i = 0; i < batch.size(); i++) {
                HolderTake t = batch.get(i);
                boolean got = t.grantedAtOnce || "true".equals(answers[surplus.size() + i]);
                if (got) {
                    anyTaken = true;
                    holder.table.serverTook(t.key, t.shared);
                    if (t.owner.isClosed()) {
                        surplusLeft = true; // the server lock nobody holds goes in the flush below
                        t.failure = new SQLException("This connection has been closed.", "08003");
                    } else if (holder.handOvers.conflicting(t.owner, t.key, t.shared) != null) {
                        // taken in the instant another owner's key was between its server and this holder:
                        // that owner holds it, for PostgreSQL; the server lock goes in the flush below
                        surplusLeft = true;
                        t.result = t.tryLock ? Boolean.FALSE : null; // a blocking call decides again (and waits)
                    } else {
                        holder.table.grant(t.owner, t.key, t.shared, t.tx, t.level);
                        t.result = Boolean.TRUE;
                    }
                } else {
                    t.result = Boolean.FALSE;
                }
                t.done = true;
            }
            if (anyTaken && !wasPinned) {
                holder.pinned = true;
            }
        } finally {
            holder.state.unlock();
        }
        if (anyTaken && !wasPinned) {
            HolderWatchdog.watch(watch);
        } else if (!wasPinned) {
            runOnServer("COMMIT", batch); // holds nothing: let the server go while waiting
        }
        if (surplusLeft) {
            flush(null);
        }
    }

    void setPinned(boolean now) {
        holder.state.lock();
        try {
            holder.pinned = now;
        } finally {
            holder.state.unlock();
        }
    }

    void unpinned() {
        setPinned(false);
        HolderWatchdog.forget(watch);
    }

    /** Under holder.io. */
    Connection connection() throws SQLException {
        Connection c = connection;
        if (c == null || c.isClosed()) {
            c = factory.open();
            try {
                c.setAutoCommit(false);
                c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            } catch (SQLException | RuntimeException e) {
                closeQuietly(c);
                throw e;
            }
            connection = c;
            setPinned(false);
            Log.debug("LockHygiene: opened the process's lock holder for {}", holder);
        }
        return c;
    }

    /** One row of {@code columns} text values; a failure is the holder's loss (see {@link #lost}). */
    private String[] queryRowOnServer(String sql, int columns, List<HolderTake> batch) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
            try (ResultSet rs = s.getResultSet()) {
                rs.next();
                String[] row = new String[columns];
                for (int i = 0; i < columns; i++) {
                    row[i] = rs.getString(i + 1);
                }
                return row;
            }
        } catch (SQLException | RuntimeException e) {
            throw lost(e, batch);
        }
    }

    private void runOnServer(String sql, List<HolderTake> batch) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
        } catch (SQLException | RuntimeException e) {
            throw lost(e, batch);
        }
    }

    /**
     * Under holder.io. Any failure of the holder's own statements ends its server connection: a connection loss
     * took the locks with it already, and any other error aborted the transaction that pins the server,
     * which must not go back to the pool with the locks. Closing makes PostgreSQL (or the pooler,
     * mid-transaction) release everything. Every other owner that held a lock is told on its next
     * statement; the caller's own statement fails now, with pgjdbc's exception.
     */
    SQLException lost(Exception cause, List<HolderTake> batch) {
        List<Object> owners;
        boolean wasPinned;
        holder.state.lock();
        try {
            owners = holder.table.owners();
            holder.table.clear();
            wasPinned = holder.pinned;
            holder.pinned = false;
            holder.released.signalAll();
        } finally {
            holder.state.unlock();
        }
        Connection c = connection;
        connection = null;
        HolderWatchdog.forget(watch);
        closeQuietly(c);
        if (wasPinned || !owners.isEmpty()) {
            String message = "LockHygiene (lockhygiene.mode=emulate): the process's lock holder for " + this
                    + " lost its server connection (" + cause + "); the advisory locks it held are holder.released, so other"
                    + " clients may now take them. Whatever they protected is no longer exclusive: stop that work, take"
                    + " the locks again, and start it over.";
            Log.error(message);
            holder.anyLost = true;
            for (Object o : owners) {
                LockOwner owner = (LockOwner) o;
                if (owner != holder.currentOwner && !inBatch(owner, batch)) {
                    owner.markLost(); // the batch's owners fail now, with the same exception
                }
                LeakReporter r = owner.reporter;
                if (r != null) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            }
        }
        SQLException failure = cause instanceof SQLException ? (SQLException) cause // pgjdbc's own
                : lostException(null, cause);
        for (HolderTake t : batch) {
            t.failure = failure;
            t.done = true;
        }
        return failure;
    }

    private static boolean inBatch(LockOwner owner, List<HolderTake> batch) {
        for (HolderTake t : batch) {
            if (t.owner == owner) {
                return true;
            }
        }
        return false;
    }

    /**
     * The watchdog's round, while the holder is holder.pinned: one {@code SELECT 1} (bounded) says whether its
     * server is still there; and the locks of pooled threads that have ended are holder.released and reported.
     */
    void checkAlive() {
        holder.reapGoneThreads();
        if (!holder.io.tryLock()) {
            return; // in use: its owners' statements find out themselves
        }
        try {
            Connection c = connection;
            if (!holder.pinned || c == null) {
                return;
            }
            HolderWatchdog.ping(c);
        } catch (SQLException | RuntimeException e) {
            if (connection != null) {
                lost(e, Collections.emptyList());
            }
        } finally {
            holder.io.unlock();
        }
    }

    /**
     * What an owner's statement gets when the holder lost its server: class 08, as pgjdbc's own
     * connection failures, so retry logic treats it as one.
     *
     * @param whose the owner told (on its next statement), or null for the statement that met the loss
     */
    static SQLException lostException(String whose, Throwable cause) {
        return new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder" + (whose == null ? "" : " of "
                + whose) + " lost its server connection; the advisory locks it held" + (whose == null ? "" : " for it")
                + " are gone. Take them again.", "08006", cause);
    }

    static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // already gone
        }
    }
}
