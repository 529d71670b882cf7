package io.lockhygiene.jdbc;

import io.lockhygiene.log.Log;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.leak.LeakCheckSql;
import io.lockhygiene.sql.ScanResult;

/**
 * The lock holder of one application connection (lockhygiene.mode=emulate under transaction pooling).
 * Session-level lock and unlock calls run here, as real session locks on the holder's backend, so
 * PostgreSQL itself does the stacking, shared versus exclusive, try results and per-key unlocks. While
 * the holder holds any lock it keeps a transaction open, which is what pins its server behind a
 * transaction pooler; when it holds nothing it commits, after checking pg_locks on that very backend,
 * so the server goes back to the pool clean.
 *
 * <p>Waiting never pins a server: a blocking {@code pg_advisory_lock} is tried with a 1 ms
 * {@code lock_timeout} inside a savepoint, and between tries the holder lets its server go (unless it
 * holds other locks) and backs off, up to {@code lockhygiene.lockTimeout}.
 */
final class LockHolder {
    static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final String COUNT = "SELECT (SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'advisory'"
            + " AND pid = pg_catalog.pg_backend_pid()),"
            // The holder's transaction must outlive server-side idle_in_transaction_session_timeout: set it off
            // for this transaction only, in the same round trip.
            + " pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    private final HolderFactory factory;
    private final String ownerId;
    private final long lockTimeoutMillis;
    /** Told once when the server connection is found gone while the holder held locks. */
    private final Runnable onLost;
    /** Held by whoever talks to the holder's connection: the owner's calls, or the watchdog's check. */
    private final java.util.concurrent.locks.ReentrantLock busy = new java.util.concurrent.locks.ReentrantLock();
    // volatile: close and abort may come from another thread while a call runs (JDBC allows that much)
    private volatile Connection connection;
    private volatile boolean holding;
    private volatile boolean shutDown;
    /** Where the application's transaction and savepoints start on the holder, for its xact locks. */
    private final HolderSavepoints savepoints = new HolderSavepoints();
    private final HolderWatchdog.Watched watch = this::checkAlive;

    LockHolder(HolderFactory factory, String ownerId, long lockTimeoutMillis, Runnable onLost) {
        this.factory = factory;
        this.ownerId = ownerId;
        this.lockTimeoutMillis = lockTimeoutMillis;
        this.onLost = onLost;
    }

    /** Whether it holds locks; only while it does, the watchdog checks that its connection is alive. */
    private void setHolding(boolean now) {
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
            closeQuietly(c);
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
                closeQuietly(c);
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
        if (hasTransactionLevelCall(scan)) {
            return runTransactionLevel(c, call, applicationTransaction);
        }
        if (scan.hasBlockingAcquire()) {
            return acquireBlocking(c, scan, call);
        }
        boolean wasHolding = holding;
        if (wasHolding) {
            execute(c, "SAVEPOINT lockhygiene_stmt"); // a failing statement must not end the pinning transaction
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

    private static boolean hasTransactionLevelCall(ScanResult scan) {
        for (io.lockhygiene.sql.AdvisoryCall c : scan.calls()) {
            if (!c.function().isSessionLevel()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The application's xact-level calls while the holder is its transaction's venue (it holds session
     * locks of that connection, which the application's own server would wait for). They run here, after
     * a savepoint: inside an application transaction the savepoint stays until that transaction ends
     * ({@link #endApplicationTransaction}); in autocommit the statement is bracketed by it. Rolling back to
     * the savepoint releases exactly the xact locks taken after it; session locks survive it, as in
     * PostgreSQL. A blocking xact call waits here as it would on the application's server.
     */
    private <R> R runTransactionLevel(Connection c, HolderCall<R> call, boolean applicationTransaction)
            throws SQLException {
        String savepoint = applicationTransaction ? HolderSavepoints.APPLICATION_TRANSACTION : "lockhygiene_xact";
        if (applicationTransaction) {
            savepoints.begin(c);
        } else {
            execute(c, "SAVEPOINT " + savepoint);
        }
        R result;
        try {
            result = call.run();
        } catch (SQLException | RuntimeException e) {
            recoverFrom(c, e, true, savepoint);
            if (applicationTransaction) {
                savepoints.reset(); // rolled back to it: the transaction's next call sets a new one
                releaseSavepointQuietly(c, savepoint, e);
            }
            throw e;
        }
        if (!applicationTransaction) {
            execute(c, "ROLLBACK TO SAVEPOINT " + savepoint + "; RELEASE SAVEPOINT " + savepoint);
        }
        settle(c);
        return result;
    }

    private void releaseSavepointQuietly(Connection c, String savepoint, Exception appFailure) {
        try {
            if (!c.isClosed() && Pgjdbc.inTransaction(c)) {
                execute(c, "RELEASE SAVEPOINT " + savepoint);
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
        busy.lock();
        try {
            Connection c = connection;
            if (!savepoints.active() || c == null || c.isClosed() || !Pgjdbc.inTransaction(c)) {
                savepoints.reset();
                return;
            }
            savepoints.end(c);
            settle(c);
        } finally {
            busy.unlock();
        }
    }

    /** A statement of the application's transaction failed: see {@link HolderSavepoints#abortInnermost}. */
    void applicationStatementFailed() throws SQLException {
        busy.lock();
        try {
            Connection c = connection;
            if (!savepoints.active() || c == null || c.isClosed() || !Pgjdbc.inTransaction(c)) {
                return;
            }
            savepoints.abortInnermost(c);
            settle(c);
        } finally {
            busy.unlock();
        }
    }

    /**
     * The application set, rolled back to or released a savepoint (by its name, or its JDBC Savepoint):
     * mirrored, so that a rollback to it releases the xact locks the holder took for it since.
     */
    void applicationSavepoint(io.lockhygiene.sql.TransactionControl.Kind kind, Object savepoint) throws SQLException {
        busy.lock();
        try {
            Connection c = connection;
            if (!savepoints.active() || c == null || c.isClosed()) {
                return;
            }
            switch (kind) {
                case SAVEPOINT:
                    savepoints.savepoint(c, savepoint);
                    break;
                case ROLLBACK_TO:
                    savepoints.rollbackTo(c, savepoint);
                    settle(c);
                    break;
                case RELEASE:
                    savepoints.release(c, savepoint);
                    break;
                default:
                    break;
            }
        } finally {
            busy.unlock();
        }
    }

    private <R> R acquireBlocking(Connection c, ScanResult scan, HolderCall<R> call) throws SQLException {
        long start = System.nanoTime();
        long backoff = 2;
        while (true) {
            if (shutDown) {
                throw new SQLException("This connection has been closed.", "08003");
            }
            execute(c, "SAVEPOINT lockhygiene_wait; SET LOCAL lock_timeout = '1ms'");
            try {
                R result = call.run();
                execute(c, "RELEASE SAVEPOINT lockhygiene_wait; SET LOCAL lock_timeout TO DEFAULT;"
                        + " SET LOCAL idle_in_transaction_session_timeout = 0");
                setHolding(true);
                if (releases(scan)) {
                    settle(c); // the same statement also unlocked something
                }
                return result;
            } catch (SQLException e) {
                if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    recoverFrom(c, e, true, "lockhygiene_wait");
                    throw e;
                }
                try {
                    execute(c, "ROLLBACK TO SAVEPOINT lockhygiene_wait");
                    if (!holding) {
                        c.commit(); // wait without pinning a pooled server
                        savepoints.reset();
                    }
                } catch (SQLException ours) {
                    e.addSuppressed(ours);
                    throw e;
                }
            }
            long waited = (System.nanoTime() - start) / 1_000_000;
            if (lockTimeoutMillis > 0 && waited >= lockTimeoutMillis) {
                throw new SQLException("LockHygiene (lockhygiene.mode=emulate): advisory lock not available after "
                        + waited + " ms (lockhygiene.lockTimeout=" + lockTimeoutMillis + "ms)", LOCK_NOT_AVAILABLE);
            }
            sleep(backoff + ThreadLocalRandom.current().nextLong(backoff + 1));
            backoff = Math.min(backoff * 2, 50);
        }
    }

    private static boolean releases(ScanResult scan) {
        for (io.lockhygiene.sql.AdvisoryCall c : scan.calls()) {
            if (c.function().isSessionLevel() && !c.function().isAcquire()) {
                return true;
            }
        }
        return false;
    }

    /**
     * After a statement: does the holder hold anything? Asked on its own backend, in its own transaction;
     * if nothing, COMMIT lets the server go back to the pool clean.
     */
    private void settle(Connection c) throws SQLException {
        long count;
        try (Statement s = c.createStatement()) {
            // simple protocol: the holder goes idle in its transaction after this, holding no snapshot
            Pgjdbc.executeSimple(s, COUNT);
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
    private void recoverFrom(Connection c, Exception appFailure, boolean toSavepoint, String savepoint) {
        try {
            if (c.isClosed()) {
                return; // closed under us (close, abort, a dead server): nothing to recover
            }
            if (toSavepoint && holding) {
                execute(c, "ROLLBACK TO SAVEPOINT " + savepoint);
            } else if (Pgjdbc.inTransaction(c)) {
                execute(c, "ROLLBACK; " + LeakCheckSql.RELEASE);
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
                    boolean rs = s.execute(LeakCheckSql.LIST_AND_RELEASE + "; ROLLBACK");
                    if (rs) {
                        try (ResultSet r = s.getResultSet()) {
                            while (r.next()) {
                                held.add(HeldLock.fromListing(r));
                            }
                        }
                    }
                }
            }
        } catch (SQLException | RuntimeException e) {
            Log.warn("LockHygiene: {} could not release its lock holder's locks cleanly ({}); closing it, which makes the"
                    + " pooler drop that server and PostgreSQL release them", ownerId, e.toString());
        } finally {
            closeQuietly(c);
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
            closeQuietly(c);
        }
        setHolding(false);
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // already gone
        }
    }

    /** The holder's own statements go with the simple protocol (see {@link Pgjdbc#executeSimple}). */
    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            Pgjdbc.executeSimple(s, sql);
        }
    }


    private static void sleep(long millis) throws SQLException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while waiting for an advisory lock", "57014", e);
        }
    }

    /** One execution on a holder statement. */
    @FunctionalInterface
    interface HolderCall<R> {
        R run() throws SQLException;
    }
}
