package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LockCall;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.policy.Decision;
import io.lockhygiene.internal.policy.Situation;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.LockStatement;
import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * What {@code lockhygiene.mode=emulate} adds to one application connection: its lock holder, where the
 * open transaction's advisory calls run (its venue), the locks to move to the holder at the transaction's
 * end, the holder's view of the application's savepoints and errors, and the loss of the holder. The
 * connection guard asks it; in other modes it is inert (no holder).
 */
final class Emulation {
    private final Connection raw;
    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    /** Runs session-level calls; null in other modes or without a way to open it. */
    private final LockHolder holder;
    /** Calls that ran on the holder, for attribution at close. */
    private final RecentCalls emulatedCalls = new RecentCalls();
    /** Where the open application transaction's advisory calls run. */
    private final TransactionVenue transactionVenue;
    /** The holder lost its server while holding locks; the next statement fails (set by the watchdog). */
    private volatile boolean lockLost;
    /** The process's lock holder for this connection's endpoint: lock statements are decided in its table. */
    private final SharedHolder shared;
    /** Owners are threads (a pool lends this connection to any thread), not the connection. */
    private final boolean threadOwners;
    private final LockOwner connectionOwner;
    /** The open transaction in the lock table, once it took a transaction-level lock there. */
    private final TableTransaction tableTransaction = new TableTransaction();
    /** Lock statements decided in the lock table. */
    private final TableExecution tableExecution;
    /** Locks taken on the application's own server that move to the holder at the transaction's end. */
    private final LockAdoption adoption;

    Emulation(Connection raw, Settings settings, String id, LeakReporter reporter, HolderFactory holderFactory) {
        this.raw = raw;
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
        boolean on = settings.mode() == Settings.Mode.EMULATE && holderFactory != null;
        this.holder = on ? new LockHolder(holderFactory, id, settings.lockTimeoutMillis(), this::holderLost) : null;
        this.shared = on ? SharedHolder.of(holderFactory) : null;
        this.transactionVenue = new TransactionVenue(shared);
        this.threadOwners = on && holderFactory.threadOwners();
        this.connectionOwner = on && !threadOwners ? LockOwner.ofConnection(id, reporter) : null;
        this.tableExecution = on ? new TableExecution(this, shared, tableTransaction, settings, reporter) : null;
        this.adoption = new LockAdoption(settings, id, reporter);
        if (connectionOwner != null) {
            shared.userOpened();
        }
    }

    /** emulate with a way to open a holder. */
    boolean available() {
        return holder != null;
    }

    /** emulate on connections a pool lends to any thread: locks belong to threads. */
    boolean threadOwners() {
        return threadOwners;
    }

    /** Who holds the locks this connection's statements take now. */
    LockOwner owner() {
        return threadOwners ? shared.threadOwner(reporter) : connectionOwner;
    }

    boolean holderHolding() {
        return holder != null && (holder.isHolding() || shared.holdsSessionLocks(owner()));
    }

    /**
     * One execution of a lock statement, decided call by call in the process's lock table, as PostgreSQL
     * would for this connection's session (see {@link TableExecution}). Returns null, having done nothing,
     * when a key cannot be known here (a bind type PostgreSQL would treat otherwise, or NULL): the
     * statement then runs as it is.
     */
    LocalResult runTable(LockStatement statement, ScanResult scan, String sql, Object[] binds, Statement appStatement,
                         boolean inTransaction) throws SQLException {
        return tableExecution.run(statement, scan, sql, binds, appStatement, inTransaction);
    }

    /** See {@link TableExecution#refusedByHandOver}; null in other modes. */
    LocalResult refusedByHandOver(LockStatement statement, Object[] binds, Statement appStatement) throws SQLException {
        return tableExecution == null ? null : tableExecution.refusedByHandOver(statement, binds, appStatement);
    }

    /** Before a transaction's end: its locks that will move are registered as handed over (see {@link LockAdoption}). */
    List<HeldLock> beginHandOver() {
        return shared == null ? java.util.Collections.emptyList() : adoption.beginHandOver(raw, shared, owner());
    }

    /** After it: they are no longer on their way. */
    void endHandOver(List<HeldLock> moving) {
        adoption.endHandOver(moving, shared, owner());
    }


    /** Where the next statement's advisory calls run (see {@link Situation.Venue}). */
    Situation.Venue venue(Situation.TransactionStatus status, boolean autoCommit) {
        Situation.Venue venue = transactionVenue.get();
        if (venue == null || (status == Situation.TransactionStatus.IDLE && autoCommit)) {
            venue = holderHolding() ? Situation.Venue.HOLDER : Situation.Venue.UNDECIDED;
        }
        return venue;
    }

    /** True while the open transaction has emulation state that its end must settle. */
    boolean transactionPending() {
        return adoption.pending() || transactionVenue.decided() || tableTransaction.active();
    }

    /** True when locks taken on the application's server may have to move to the holder at the end. */
    boolean hasAdoptable() {
        return adoption.pending();
    }

    /** The last {@code n} calls recorded ran on the application's own server: their locks may move. */
    void adoptable(RecentCalls calls, int n) {
        adoption.add(calls, n);
    }

    /** Remembers a call that ran on the holder, for attribution. */
    void ranOnHolder(LockCall call) {
        emulatedCalls.add(call);
    }

    /**
     * At the transaction's end (its listing just read): locks this connection took on its own server move
     * to the holder; returns the ones to report (inherited, not ours).
     */
    List<HeldLock> moveToHolder(List<HeldLock> held, String command) {
        return adoption.moveToHolder(held, command, shared, owner());
    }

    /** The transaction ended without a listing (a failed end, a plain commit): nothing is left to move. */
    void forgetAdoptable() {
        adoption.clear();
    }

    /** The server says no transaction is open any more (in autocommit): the venue is settled. */
    void transactionGoneOnServer() {
        if (transactionVenue.decided()) {
            applicationTransactionEnded();
        }
    }

    /** Throws the loss of the holder once, on the statement after it. */
    void throwIfLockLost() throws SQLException {
        if (lockLost) {
            lockLost = false; // thrown once; the connection is usable again after it
            throw HolderServer.lostException(id, null);
        }
        if (shared != null && shared.lossSeen() && owner().takeLost()) {
            transactionVenue.gone();
            tableTransaction.forget();
            throw HolderServer.lostException(owner().toString(), null);
        }
    }

    /** Application close (for good) or a pool's return: the holder lets go of everything, reported. */
    void letGo(boolean forGood) {
        if (holder == null) {
            return;
        }
        List<HeldLock> held = forGood ? holder.close() : holder.release();
        if (!held.isEmpty()) {
            reporter.report(held, emulatedCalls, "by the lock holder when the application connection closed");
        }
        emulatedCalls.clear();
        tableTransaction.forget();
        boolean first = forGood && transactionVenue.close();
        transactionVenue.gone();
        if (connectionOwner != null) {
            // a connection's locks end with it, or with its return to a pool (a pooled thread's stay with the thread)
            List<HeldLock> owned = shared.releaseOwner(connectionOwner, forGood);
            if (!owned.isEmpty()) {
                reporter.reportOwnerGone(owned, connectionOwner.calls, "connection " + id
                        + (forGood ? " (closed)" : " (returned to its pool)"));
            }
            connectionOwner.calls.clear();
            if (first) {
                shared.userClosed(); // the last one lets the holder's idle connection go
            }
        }
    }

    /**
     * emulate: the lock holder's server connection is gone, and with it every lock it held for this
     * connection. Said at once (event, ERROR), and as an SQLException of class 08 on the connection's next
     * statement, so that exclusion is never lost silently.
     */
    private void holderLost() {
        String message = "LockHygiene (lockhygiene.mode=emulate): " + id + " lost the connection of its lock holder"
                + " (terminated backend, pooler or server restart, timeout); the advisory locks it held for this"
                + " connection are released, so other clients may now take them. Whatever they protected is no"
                + " longer exclusive: stop that work, take the locks again, and start it over.";
        Log.error(message);
        reporter.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
        transactionVenue.gone();
        lockLost = true;
    }

    /** emulate: the first advisory call of an application transaction fixes where the rest run. */
    void noteVenue(Situation where, Decision d) {
        if (holder != null && !transactionVenue.decided() && where.statementRunsInTransaction()) {
            transactionVenue.note(d == Decision.EMULATE);
        }
    }

    /** The application's transaction ended (any way): its xact locks on the holder go, its venue is forgotten. */
    void applicationTransactionEnded() {
        if (tableTransaction.active()) {
            try {
                tableTransaction.end(shared);
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks of its transaction", e);
            }
        }
        if (holder != null) {
            try {
                holder.endApplicationTransaction();
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks its lock holder took for it", e);
            }
        }
        transactionVenue.gone();
    }

    /**
     * The application's statement failed. If that aborted its transaction, PostgreSQL has released the
     * locks of the innermost (sub)transaction already (at the error, not at the ROLLBACK that follows): so
     * do the xact locks its lock holder took for it there. Never masks the application's exception.
     */
    void afterFailure(Exception appFailure) {
        if ((!transactionVenue.isHolder() && !tableTransaction.active()) || holder == null) {
            return;
        }
        try {
            if (Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.FAILED) {
                tableTransaction.innermostFailed(shared);
                holder.applicationStatementFailed();
            }
        } catch (SQLException | RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
    }

    /** emulate: one savepoint command of the application (a name from text, or a JDBC Savepoint). */
    void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        if ((!transactionVenue.isHolder() && !tableTransaction.active()) || holder == null) {
            return;
        }
        try {
            if (tableTransaction.active()) {
                tableTransaction.follow(kind, savepoint, shared);
            }
            holder.applicationSavepoint(kind, savepoint);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while following a savepoint of the application on its lock holder", e);
        }
    }

    /** The holder's connection, for preparing emulated statements on it. */
    Connection holderConnection() throws SQLException {
        return holder.connection();
    }

    /** Runs an emulated execution on the holder and records it. */
    <R> R runOnHolder(ScanResult scan, String sql, Statement executedOn, boolean inTransaction,
                      LockHolder.HolderCall<R> call) throws SQLException {
        Throwable stack = CallSite.capture("session-level advisory lock call sent here");
        for (AdvisoryCall c : scan.calls()) {
            if (c.function().isSessionLevel()) {
                LockCall emulated = new LockCall(c.function(), sql, c.argumentText(sql), stack);
                emulatedCalls.add(emulated);
                UnlockWatch.taken(emulated);
            }
        }
        reporter.publish(EventType.EMULATED, scan.calls().get(0).function().sqlName(), null, null, sql,
                "ran on the lock holder of " + id, stack);
        try {
            R result = holder.run(scan, call, inTransaction);
            UnlockWatch.check(executedOn, scan, sql, reporter, settings);
            return result;
        } catch (SQLException | RuntimeException appFailure) {
            if (inTransaction) {
                failApplicationTransaction(appFailure);
            }
            throw appFailure;
        }
    }

    /**
     * A statement of the application's transaction failed on the lock holder: in PostgreSQL that error
     * would have aborted the transaction (every later statement gets 25P02 until ROLLBACK, and its locks
     * are gone). So the application's own transaction is aborted the same way, with a statement that fails
     * on purpose, and the holder lets go of the transaction's xact locks. The application sees its own
     * error, never ours.
     */
    void failApplicationTransaction(Exception appFailure) {
        try (Statement s = raw.createStatement()) {
            s.execute("ROLLBACK TO SAVEPOINT lockhygiene_statement_failed_on_the_lock_holder");
        } catch (SQLException expected) {
            // 3B001 (no such savepoint): the transaction is aborted now, as PostgreSQL would have it
        } catch (RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
        afterFailure(appFailure);
    }

    /** Application abort: the holder goes too, its locks with it. */
    void onAbort(java.util.concurrent.Executor executor) {
        if (holder != null) {
            holder.abort(executor);
        }
        tableTransaction.forget();
        boolean first = transactionVenue.close();
        transactionVenue.gone();
        if (connectionOwner != null) {
            shared.releaseOwner(connectionOwner, true);
            if (first) {
                shared.userClosed();
            }
        }
    }
}
