package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.sql.ScanResult;

/**
 * The lock holder of one application connection (lockhygiene.mode=emulate under transaction pooling).
 * Session-level lock and unlock calls run here, as real session locks on the holder's backend, so
 * PostgreSQL itself does the stacking, shared versus exclusive, try results and per-key unlocks. While
 * the holder holds any lock it keeps a transaction open, which is what pins its server behind a
 * transaction pooler; when it holds nothing it commits, after checking pg_locks on that very backend,
 * so the server goes back to the pool clean.
 *
 * <p>Waiting never pins a server (see {@link HolderBlockingAcquire}). The fields and methods without
 * {@code private} are shared with its two helpers, under {@code busy}.
 */
final class LockHolder {
    static final String LOCK_NOT_AVAILABLE = "55P03";

    private final HolderFactory factory;
    private final String ownerId;
    final long lockTimeoutMillis;
    /** Told once when the server connection is found gone while the holder held locks. */
    private final Runnable onLost;
    /** Held by whoever talks to the holder's connection: the owner's calls, or the watchdog's check. */
    final java.util.concurrent.locks.ReentrantLock busy = new java.util.concurrent.locks.ReentrantLock();
    // volatile: close and abort may come from another thread while a call runs (JDBC allows that much)
    volatile Connection connection;
    volatile boolean holding;
    volatile boolean shutDown;
    /** Where the application's transaction and savepoints start on the holder, for its xact locks. */
    final HolderSavepoints savepoints = new HolderSavepoints();
    private final HolderWatchdog.Watched watch = this::checkAlive;
    private final HolderBlockingAcquire blocking = new HolderBlockingAcquire(this);
    private final HolderTransactionMirror mirror = new HolderTransactionMirror(this);

    LockHolder(HolderFactory factory, String ownerId, long lockTimeoutMillis, Runnable onLost) {
        this.factory = factory;
        this.ownerId = ownerId;
        this.lockTimeoutMillis = lockTimeoutMillis;
        this.onLost = onLost;
    }

    /** Whether it holds locks; only while it does, the watchdog checks that its connection is alive. */
    void setHolding(boolean now) {
        holding = now;
        if (now) {
            HolderWatchdog.watch(watch);
        } else {
            HolderWatchdog.forget(watch);
        }
    }

    /**
     * The watchdog's check: while holding and not in use, one {@code SELECT 1} on the holder's connection.
     * A connection error means the server is gone, and the locks with it.
     */
    void checkAlive() {
        if (!holding || !busy.tryLock()) {
            return;
        }
        try {
            Connection c = connection;
            if (c != null && holding) {
                HolderWatchdog.ping(c); // bounded: through busy, the owner waits for it
            }
        } catch (SQLException e) {
            if (isConnectionLoss(connection, e)) {
                lost(e);
            }
        } finally {
            busy.unlock();
        }
    }

    private static boolean isConnectionLoss(Connection c, SQLException e) {
        String state = e.getSQLState();
        try {
            return (state != null && state.startsWith("08")) || c == null || c.isClosed();
        } catch (SQLException closedCheckFailed) {
            return true;
        }
    }

    /** The server connection is gone while holding: the owner is told, the holder starts afresh on next use. */
    private void lost(Exception cause) {
        boolean held = holding;
        setHolding(false);
        savepoints.reset();
        Connection c = connection;
        connection = null;
        if (c != null) {
            HolderServer.closeQuietly(c);
        }
        if (held && !shutDown) {
            Log.debug("LockHygiene: {} lost its lock holder's connection ({})", ownerId, cause.toString());
            onLost.run();
        }
    }

    /** The holder's pgjdbc connection, opened on first use (autocommit off). */
    Connection connection() throws SQLException {
        if (shutDown) {
            throw new SQLException("This connection has been closed.", "08003");
        }
        Connection c = connection;
        if (c == null || c.isClosed()) {
            c = factory.open();
            c.setAutoCommit(false);
            connection = c;
            setHolding(false);
            Log.debug("LockHygiene: {} opened its lock holder", ownerId);
            if (shutDown) { // closed while we opened it
                HolderServer.closeQuietly(c);
                throw new SQLException("This connection has been closed.", "08003");
            }
        }
        return c;
    }

    /** A pool's return: let go of everything; the application connection lives on. */
    List<HeldLock> release() {
        return closeHolder();
    }

    boolean isHolding() {
        return holding;
    }

    /**
     * Runs one emulated execution on the holder.
     *
     * @param call runs the application's statement on a statement of {@link #connection()}
     */
    <R> R run(ScanResult scan, HolderCall<R> call, boolean applicationTransaction) throws SQLException {
        busy.lock();
        try {
            return runAlone(scan, call, applicationTransaction);
        } catch (SQLException e) {
            if (isConnectionLoss(connection, e)) {
                lost(e);
            }
            throw e;
        } finally {
            busy.unlock();
        }
    }

    private <R> R runAlone(ScanResult scan, HolderCall<R> call, boolean applicationTransaction) throws SQLException {
        Connection c = connection();
        if (HolderTransactionMirror.hasTransactionLevelCall(scan)) {
            return mirror.runTransactionLevel(c, call, applicationTransaction);
        }
        if (scan.hasBlockingAcquire()) {
            return blocking.run(c, scan, call);
        }
        boolean wasHolding = holding;
        if (wasHolding) {
            Pgjdbc.executeSimple(c, "SAVEPOINT lockhygiene_stmt"); // a failing statement must not end the pinning transaction
        }
        R result;
        try {
            result = call.run();
        } catch (SQLException | RuntimeException e) {
            recoverFrom(c, e, wasHolding, "lockhygiene_stmt");
            throw e;
        }
        settle(c);
        return result;
    }

    /**
     * After a statement: does the holder hold anything? Asked on its own backend, in its own transaction;
     * if nothing, COMMIT lets the server go back to the pool clean.
     */
    void settle(Connection c) throws SQLException {
        long count;
        try (Statement s = c.createStatement()) {
            // simple protocol: the holder goes idle in its transaction after this, holding no snapshot
            Pgjdbc.executeSimple(s, PgLocks.OWN_COUNT_FOR_HOLDER); // also keeps its transaction past idle timeouts
            try (ResultSet rs = s.getResultSet()) {
                rs.next();
                count = rs.getLong(1);
            }
        }
        setHolding(count > 0);
        if (!holding) {
            c.commit();
            savepoints.reset();
        }
    }

    /**
     * A failed statement: back to the savepoint when we hold locks (they and the pinning transaction
     * survive); otherwise end the transaction and release whatever the failed statement may have taken,
     * in the same round trip as the ROLLBACK so it runs on the same backend.
     */
    void recoverFrom(Connection c, Exception appFailure, boolean toSavepoint, String savepoint) {
        try {
            if (c.isClosed()) {
                return; // closed under us (close, abort, a dead server): nothing to recover
            }
            if (toSavepoint && holding) {
                Pgjdbc.executeSimple(c, "ROLLBACK TO SAVEPOINT " + savepoint);
            } else if (Pgjdbc.inTransaction(c)) {
                Pgjdbc.executeSimple(c, "ROLLBACK; " + PgLocks.RELEASE);
                setHolding(false);
                savepoints.reset();
            }
        } catch (SQLException | RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
    }

    /**
     * Releases everything at application close and says what was still held. Never throws: the holder's
     * server is let go either way (closing mid-transaction makes PgBouncer drop it).
     */
    List<HeldLock> close() {
        shutDown = true;
        return closeHolder();
    }

    private List<HeldLock> closeHolder() {
        boolean alone = false;
        try {
            // a blocking acquire in progress sees shutDown within its backoff; never wait on it for long
            alone = busy.tryLock(2, java.util.concurrent.TimeUnit.SECONDS);
            return closeHolderAlone();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return closeHolderAlone();
        } finally {
            if (alone) {
                busy.unlock();
            }
        }
    }

    private List<HeldLock> closeHolderAlone() {
        List<HeldLock> held = new ArrayList<>();
        Connection c = connection;
        if (c == null) {
            return held;
        }
        try {
            if (!c.isClosed() && Pgjdbc.inTransaction(c)) {
                try (Statement s = c.createStatement()) {
                    held.addAll(LeakReporter.readHeldLocks(s, s.execute(PgLocks.LIST_AND_RELEASE + "; ROLLBACK")));
                }
            }
        } catch (SQLException | RuntimeException e) {
            Log.warn("LockHygiene: {} could not release its lock holder's locks cleanly ({}); closing it, which makes the"
                    + " pooler drop that server and PostgreSQL release them", ownerId, e.toString());
        } finally {
            HolderServer.closeQuietly(c);
            setHolding(false);
            savepoints.reset();
        }
        return held;
    }

    void abort(java.util.concurrent.Executor executor) {
        shutDown = true;
        Connection c = connection;
        if (c == null) {
            return;
        }
        try {
            c.abort(executor);
        } catch (SQLException | RuntimeException e) {
            HolderServer.closeQuietly(c);
        }
        setHolding(false);
    }


    /** The application's transaction ended (see {@link HolderTransactionMirror}). */
    void endApplicationTransaction() throws SQLException {
        mirror.endApplicationTransaction();
    }

    /** A statement of the application's transaction failed (see {@link HolderTransactionMirror}). */
    void applicationStatementFailed() throws SQLException {
        mirror.applicationStatementFailed();
    }

    /** The application set, rolled back to or released a savepoint (see {@link HolderTransactionMirror}). */
    void applicationSavepoint(io.lockhygiene.internal.sql.TransactionControl.Kind kind, Object savepoint)
            throws SQLException {
        mirror.applicationSavepoint(kind, savepoint);
    }

    /** One execution on a holder statement. */
    @FunctionalInterface
    interface HolderCall<R> {
        R run() throws SQLException;
    }
}
