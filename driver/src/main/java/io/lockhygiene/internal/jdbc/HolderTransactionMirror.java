package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * The application transaction's transaction-level calls on a per-connection {@link LockHolder} (when
 * the holder is that transaction's venue), and the mirror of its end and savepoints there (see
 * {@link HolderSavepoints}), so that its xact locks go when PostgreSQL's would.
 */
final class HolderTransactionMirror {
    private final LockHolder holder;

    HolderTransactionMirror(LockHolder holder) {
        this.holder = holder;
    }

    static boolean hasTransactionLevelCall(ScanResult scan) {
        for (io.lockhygiene.internal.sql.AdvisoryCall c : scan.calls()) {
            if (!c.function().isSessionLevel()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The application's xact-level calls while the holder is its transaction's venue (it holds session
     * locks of that holder.connection, which the application's own server would wait for). They run here, after
     * a savepoint: inside an application transaction the savepoint stays until that transaction ends
     * ({@link #endApplicationTransaction}); in autocommit the statement is bracketed by it. Rolling back to
     * the savepoint releases exactly the xact locks taken after it; session locks survive it, as in
     * PostgreSQL. A blocking xact call waits here as it would on the application's server.
     */
    <R> R runTransactionLevel(Connection c, LockHolder.HolderCall<R> call, boolean applicationTransaction)
            throws SQLException {
        String savepoint = applicationTransaction ? HolderSavepoints.APPLICATION_TRANSACTION : "lockhygiene_xact";
        if (applicationTransaction) {
            holder.savepoints.begin(c);
        } else {
            Pgjdbc.executeSimple(c, "SAVEPOINT " + savepoint);
        }
        R result;
        try {
            result = call.run();
        } catch (SQLException | RuntimeException e) {
            holder.recoverFrom(c, e, true, savepoint);
            if (applicationTransaction) {
                holder.savepoints.reset(); // rolled back to it: the transaction's next call sets a new one
                releaseSavepointQuietly(c, savepoint, e);
            }
            throw e;
        }
        if (!applicationTransaction) {
            Pgjdbc.executeSimple(c, "ROLLBACK TO SAVEPOINT " + savepoint + "; RELEASE SAVEPOINT " + savepoint);
        }
        holder.settle(c);
        return result;
    }

    private void releaseSavepointQuietly(Connection c, String savepoint, Exception appFailure) {
        try {
            if (!c.isClosed() && Pgjdbc.inTransaction(c)) {
                Pgjdbc.executeSimple(c, "RELEASE SAVEPOINT " + savepoint);
            }
        } catch (SQLException | RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
    }

    /**
     * The application's transaction ended: the xact locks taken here for it go (back to its savepoint),
     * session locks stay; if nothing is left, the holder's server goes back to the pool.
     */
    void endApplicationTransaction() throws SQLException {
        holder.busy.lock();
        try {
            Connection c = holder.connection;
            if (!holder.savepoints.active() || c == null || c.isClosed() || !Pgjdbc.inTransaction(c)) {
                holder.savepoints.reset();
                return;
            }
            holder.savepoints.end(c);
            holder.settle(c);
        } finally {
            holder.busy.unlock();
        }
    }

    /** A statement of the application's transaction failed: see {@link HolderSavepoints#abortInnermost}. */
    void applicationStatementFailed() throws SQLException {
        holder.busy.lock();
        try {
            Connection c = holder.connection;
            if (!holder.savepoints.active() || c == null || c.isClosed() || !Pgjdbc.inTransaction(c)) {
                return;
            }
            holder.savepoints.abortInnermost(c);
            holder.settle(c);
        } finally {
            holder.busy.unlock();
        }
    }

    /**
     * The application set, rolled back to or released a savepoint (by its name, or its JDBC Savepoint):
     * mirrored, so that a rollback to it releases the xact locks the holder took for it since.
     */
    void applicationSavepoint(TransactionControl.Kind kind, Object savepoint) throws SQLException {
        holder.busy.lock();
        try {
            Connection c = holder.connection;
            if (!holder.savepoints.active() || c == null || c.isClosed()) {
                return;
            }
            switch (kind) {
                case SAVEPOINT:
                    holder.savepoints.savepoint(c, savepoint);
                    break;
                case ROLLBACK_TO:
                    holder.savepoints.rollbackTo(c, savepoint);
                    holder.settle(c);
                    break;
                case RELEASE:
                    holder.savepoints.release(c, savepoint);
                    break;
                default:
                    break;
            }
        } finally {
            holder.busy.unlock();
        }
    }
}
