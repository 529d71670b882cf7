package io.lockhygiene.internal.emulate;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.holder.SessionBounds;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.placement.EndpointResolver;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.shape.BindView;

/**
 * What {@code lockhygiene.mode=emulate} keeps for one application connection, whatever its front end: the
 * process's lock holder its statements' calls are decided in, who owns what it takes (the connection, or the
 * thread a pool lends it to), the open transaction's transaction-level locks in the table
 * ({@link TableTransaction}), where that transaction's advisory calls run ({@link Situation.Venue}), the loss
 * of its locks and the fence of its commits. Every statement's calls go through {@link #execute}, whatever
 * their shape.
 *
 * <p>A JDBC connection ({@link #Emulation(Connection, Settings, String, LeakReporter, Holder, boolean)})
 * gives it the application's own connection, where the server computes what the JVM cannot (expression keys,
 * keys from rows, validation) and where a lost lock rolls the transaction back. An owner without one (an R2DBC
 * connection, {@link #withoutConnection}) gets the shapes the JVM decides alone ({@link #whyNot}); its caller
 * rolls back.
 *
 * <p>Blocking: {@link #execute}, {@link #transactionEnded}, {@link #followSavepoint} and {@link #letGo} may wait
 * for the holder (a round trip, or a lock another owner holds): a reactive caller runs them on a thread that
 * may block, never on an event loop's. One caller at a time (a connection's promise), except {@link #cancel}.
 */
public final class Emulation {
    private final Connection raw;
    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    private final Holder holder;
    /** The holder's lock table, which an owner's hot path asks directly; null when off. */
    private final LockTable table;
    private final boolean threadOwners;
    private final LockOwner connectionOwner;
    /** null when off (every use is behind {@code holder != null}): a class less for most connections to load. */
    private final TableTransaction tableTransaction;
    /** What its executions work with; null when off. */
    private final ExecutionContext context;
    /** Where the open transaction's advisory calls run; null before its first one. */
    private Situation.Venue venue;
    /** The owner whose transaction runs on its own server (to end its count when the transaction ends). */
    private LockOwner venueOwner;
    /** The last fence made, and the seals it checks (one connection's thread uses them). */
    private final Seals.LastFence fences = new Seals.LastFence();
    /** The limits of the execution that waits now, for {@link #cancel}. */
    private volatile Limits waiting;
    /** Where a wait reads the session's own bounds (lock_timeout, statement_timeout); null when off. */
    private final SessionBounds.Source sessionBounds;
    /** The failure the server reports now was followed in the table ({@link #failureToFollow}). */
    private boolean failureFollowed;
    private boolean closed;

    /**
     * @param holder the holder placed for the connection's route ({@link EndpointResolver#resolve}); null when
     *               emulate is off or cannot place one (then the connection behaves as detect)
     * @param threadOwners locks belong to threads, across a pool's borrows ({@link HolderRoute#threadOwners})
     */
    public Emulation(Connection raw, Settings settings, String id, LeakReporter reporter, Holder holder,
                     boolean threadOwners) {
        this(raw, settings, id, reporter, holder, threadOwners, null);
    }

    /**
     * The one way its fields are set: off when {@code holder} is null; with {@code raw}, the session's bounds
     * are read on it, else by {@code sessionBounds} (a front end without a JDBC connection).
     */
    private Emulation(Connection raw, Settings settings, String id, LeakReporter reporter, Holder holder,
                      boolean threadOwners, SessionBounds.Source sessionBounds) {
        this.raw = raw;
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
        this.holder = holder;
        boolean on = holder != null;
        this.table = on ? holder.table() : null;
        this.threadOwners = on && threadOwners;
        this.connectionOwner = on && !this.threadOwners ? LockOwner.ofConnection(id, reporter) : null;
        this.tableTransaction = on ? new TableTransaction() : null;
        this.context = on ? new ExecutionContext(holder, raw, reporter, settings, tableTransaction) : null;
        this.sessionBounds = !on ? null : raw != null ? () -> SessionBounds.readOn(raw) : sessionBounds;
        if (connectionOwner != null) {
            holder.userOpened();
        }
    }

    /**
     * emulate for an owner without a JDBC connection of its own (an R2DBC connection), in {@code holder}.
     *
     * @param sessionBounds reads the connection's own lock_timeout and statement_timeout from its session when a
     *                      wait begins (it may block: waits run where blocking is allowed)
     */
    public static Emulation withoutConnection(Holder holder, Settings settings, String id, LeakReporter reporter,
                                              SessionBounds.Source sessionBounds) {
        return new Emulation(null, settings, id, reporter, holder, false, sessionBounds);
    }

    /**
     * Why the lock table cannot decide {@code shape} for an owner without a JDBC connection, or null when it can: a
     * shape emulate refuses anyway, an answer or validity only the server can tell (keys the JVM cannot read, and
     * keys read from rows, are the server's: {@link #keysToCompute}).
     */
    public static String whyNot(LockShape shape) {
        if (!shape.isSupported()) {
            return shape.unsupported();
        }
        if (shape.needsValidation() || !shape.answeredLocally()) {
            return "its answer is more than the advisory calls' results, which only the server can compute on this"
                    + " connection (R2DBC)";
        }
        return null; // keys the JVM cannot read are computed by the server (keysToCompute)
    }

    /** emulate with a lock holder. */
    public boolean on() {
        return holder != null;
    }

    /** Connections a pool lends to any thread: the thread owns the locks. */
    public boolean threadOwners() {
        return threadOwners;
    }

    /** Who owns the locks this connection's statements take now. */
    LockOwner owner() {
        return threadOwners ? holder.threadOwner(reporter) : connectionOwner;
    }

    /** Where the open transaction's advisory calls run (TABLE until a statement ran them on its own server). */
    public Situation.Venue venue() {
        return venue == null ? Situation.Venue.UNDECIDED : venue;
    }

    /**
     * True when the owner holds anything in the lock table, or has a transaction there, or runs a
     * transaction on its own server through another connection: a statement the table cannot decide would
     * then answer otherwise than PostgreSQL.
     */
    public boolean ownerBusy() {
        LockOwner o = owner();
        // the owner's holding flag mirrors the table (written under its lock): a volatile read, no lock taken
        return tableTransaction.active() || o.holding() || (venue == null && o.hasServerTransaction());
    }

    /** True while the open transaction has emulation state its end must settle. */
    public boolean transactionPending() {
        return holder != null && (tableTransaction.active() || venue != null);
    }

    /**
     * For an owner without a JDBC connection (R2DBC): the keys only the server can compute (the JVM cannot read them,
     * the key cache does not know them), which its front end has computed and hands to {@link #execute}; or null.
     */
    public ServerKeys keysToCompute(LockShape shape, BindView binds) {
        return shape.form() == LockShape.Form.ROWS ? KeyResolution.rowsToRead(shape)
                : KeyResolution.toCompute(shape, binds, holder.keys());
    }

    /**
     * One execution of a statement whose calls the lock table decides (see {@link ShapeExecution}).
     *
     * @param binds a prepared statement's bind values, or null
     * @param inTransaction the statement runs inside a transaction block (as the server says)
     * @param queryTimeoutSeconds the statement's own timeout ({@code setQueryTimeout}), 0 for none
     * @param callSite where the application sent the statement when that is not this thread's stack (a reactive
     *                 chain), or null
     * @param computed the keys the server computed for an owner without a JDBC connection ({@link #keysToCompute}),
     *                 or null
     */
    public Outcome execute(LockShape shape, BindView binds, boolean inTransaction, int queryTimeoutSeconds,
                           Throwable callSite, ServerKeys computed) throws SQLException {
        if (inTransaction && venue == null) {
            venue = Situation.Venue.TABLE;
        }
        Limits limits = new Limits(settings.lockTimeoutMillis(), queryTimeoutSeconds, sessionBounds);
        waiting = limits;
        try {
            return new ShapeExecution(context, owner(), shape, binds, inTransaction, limits, callSite, computed).run();
        } catch (SQLException | RuntimeException e) {
            if (inTransaction && raw != null) {
                failApplicationTransaction(e);
            }
            throw e;
        } finally {
            waiting = null;
        }
    }

    /**
     * The policy let a statement's transaction-level calls run on the application's own server (a shape the
     * table cannot follow, from an owner that holds nothing there): inside a transaction, every later advisory
     * call of it runs there too, until it ends.
     */
    public void ranOnServer(boolean inTransaction) {
        if (inTransaction && venue == null) {
            venue = Situation.Venue.APPLICATION;
            venueOwner = owner();
            venueOwner.serverTransactionOpened();
        }
    }

    /** The application cancels its statement (another thread): a wait of ours in progress ends with 57014. */
    public void cancel() {
        Limits l = waiting;
        if (l != null) {
            l.cancel();
        }
    }

    /**
     * Throws the loss of the holder once, on the statement after it. Inside a transaction that transaction is
     * rolled back first, as it would be had the owner's own session died: nothing it did after its locks
     * were gone commits.
     */
    public void throwIfLockLost() throws SQLException {
        SQLException lost = lostBeforeCommit();
        if (lost != null) {
            throw lost;
        }
    }

    /**
     * The loss of the owner's locks, once, when the holder saw one: its table transaction and venue are
     * forgotten and the loss returned; null otherwise. The caller rolls the open transaction back, as a dead
     * session's would be ({@link #lostBeforeCommit} does it for a JDBC connection).
     */
    public SQLException lossOnce() {
        if (table == null || !table.lossSeen() || !owner().takeLost()) {
            return null;
        }
        tableTransaction.forget();
        forgetVenue();
        return Holder.lostException(owner().toString(), null);
    }

    /**
     * The owner's locks are known lost (the holder said so): its open transaction on the application's
     * connection is rolled back and the loss returned, once; null otherwise. A commit asks this first.
     */
    public SQLException lostBeforeCommit() {
        SQLException lost = lossOnce();
        if (lost == null || raw == null) {
            return lost;
        }
        try {
            if (Pgjdbc.inTransaction(raw)) {
                Pgjdbc.executeSimple(raw, "ROLLBACK");
            }
        } catch (SQLException | RuntimeException e) {
            lost.addSuppressed(e);
        }
        return lost;
    }

    /**
     * True while the owner of this connection's statements holds emulated locks: its commits, explicit or
     * autocommit, are fenced. Two volatile reads while nothing is held in the process.
     */
    public boolean ownerHolds() {
        if (table == null) {
            return false;
        }
        if (table.anyoneHolds() && owner().holding()) {
            return true;
        }
        // an owner whose loss is not told yet counts as holding: a loss marks the owners before the table forgets
        // their locks, so a statement that asked for the loss a moment before and finds nothing held now goes the
        // holding owner's way (fenced), where the loss is asked again (commitSeals, lossOnce) and told, never the
        // way of an owner that holds nothing, unfenced. Asked only after some loss (one more volatile read then).
        return table.lossSeen() && owner().lostUntold();
    }

    /**
     * The seals the owner's commit now must check in its round trip, or null when it holds nothing; the loss of
     * its locks, when the holder saw one, thrown (once) for the commit to be rolled back with. This is the one
     * place of the rule: the seals are read before the loss is asked, since a loss clears the table only after
     * it marked the owner, so a commit that finds nothing to fence because its locks went this moment gets the
     * loss instead, never an unfenced commit.
     */
    public int[] commitSeals() throws SQLException {
        // an owner that holds nothing has no seals: its flag (a volatile read) says so without the table's lock, so
        // a reactive front end may ask on its event loop
        LockOwner o = table == null ? null : owner();
        int[] seals = o == null || !o.holding() ? null : table.commitSeals(o);
        throwIfLockLost();
        return seals;
    }

    /** The fence statement for {@code seals}, made once while they stay the same (a holder session's life). */
    public String fence(int[] seals) {
        return fences.of(seals);
    }

    /**
     * A fence failed on the server (a session the owner's locks lived on is gone; the transaction rolled
     * back): the holder looks at its sessions at once; the application gets 08006 naming the keys, and is not
     * told again on its next statement.
     */
    public SQLException fenceFailed(Throwable serverError) {
        LockOwner o = owner();
        java.util.List<io.lockhygiene.internal.locktable.AdvisoryKey> keys = holder.keysOf(o);
        holder.sessionSuspected(o);
        o.takeLost();
        tableTransaction.forget();
        forgetVenue();
        return new SQLException(EmulateMessages.commitFenced(o, keys), "08006", serverError);
    }

    /** DISCARD ALL ran: as on PostgreSQL, the owner's session-level locks go (transaction-level ones cannot exist). */
    public void discardedAll() throws SQLException {
        if (holder != null) {
            holder.unlockAll(owner());
        }
    }

    /** The application's transaction ended (any way): its transaction-level locks in the table go. */
    public void transactionEnded() {
        if (holder == null) {
            return;
        }
        if (tableTransaction.active()) {
            try {
                tableTransaction.end(holder);
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks of its transaction", e);
            }
        }
        forgetVenue();
    }

    private void forgetVenue() {
        if (venueOwner != null) {
            venueOwner.serverTransactionEnded();
            venueOwner = null;
        }
        venue = null;
    }

    /**
     * The application's statement failed. If that aborted its transaction, PostgreSQL has released the
     * transaction-level locks of the innermost (sub)transaction already: so does the table. Never masks the
     * application's exception.
     */
    public void statementFailed(Exception appFailure) {
        if (holder == null || !tableTransaction.active() || raw == null) {
            return;
        }
        try {
            if (Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.FAILED) {
                tableTransaction.innermostFailed(holder);
            }
        } catch (SQLException | RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
    }

    /**
     * For a front end that learns of a failure from the server's status, not at once (R2DBC, when results end and
     * before the next statement): true once per failure the server reports, and the front end then calls
     * {@link #innermostFailed}; {@code followedNow}: it aborted the transaction itself and follows that now.
     */
    public boolean failureToFollow(boolean serverReportsFailed, boolean followedNow) {
        boolean toFollow = serverReportsFailed && !failureFollowed && !followedNow;
        failureFollowed = serverReportsFailed || followedNow;
        return toFollow;
    }

    /**
     * An error aborted the owner's innermost (sub)transaction, as its caller learned from the server: the
     * transaction-level locks of that depth go. Blocks.
     */
    public void innermostFailed() {
        if (holder == null || !tableTransaction.active()) {
            return;
        }
        try {
            tableTransaction.innermostFailed(holder);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while releasing the locks of a failed transaction level", e);
        }
    }

    /** True while its open transaction has transaction-level locks in the table. */
    public boolean transactionActive() {
        return tableTransaction != null && tableTransaction.active();
    }

    /**
     * A call decided in the table failed inside the application's transaction (a deadlock, a timeout): in
     * PostgreSQL that error aborts the transaction (every later statement gets 25P02 until ROLLBACK, its
     * innermost level's locks go). So the application's transaction is aborted the same way, with a statement
     * that fails on purpose. The application sees its own error, never ours.
     */
    private void failApplicationTransaction(Exception appFailure) {
        try (Statement s = raw.createStatement()) {
            s.execute("ROLLBACK TO SAVEPOINT lockhygiene_statement_failed_in_the_lock_table");
        } catch (SQLException expected) {
            // 3B001 (no such savepoint): the transaction is aborted now, as PostgreSQL would have it
        } catch (RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
        statementFailed(appFailure);
    }

    /**
     * The savepoint commands of a text that ran (SAVEPOINT, ROLLBACK TO, RELEASE, in order), followed in the lock
     * table under their names; for every front end. Blocking, as {@link #followSavepoint}.
     */
    public void followSavepoints(ScanResult scan, String sql) {
        if (scan == null || !scan.hasTransactionControl() || holder == null || !tableTransaction.active()) {
            return;
        }
        for (TransactionControl tc : scan.transactionControls()) {
            TransactionControl.Kind k = tc.kind();
            if (k == TransactionControl.Kind.SAVEPOINT || k == TransactionControl.Kind.ROLLBACK_TO
                    || k == TransactionControl.Kind.RELEASE) {
                followSavepoint(k, "text:" + tc.savepointName(sql));
            }
        }
    }

    /** One savepoint command of the application (a name from text, or a JDBC Savepoint). */
    public void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        if (holder == null || !tableTransaction.active()) {
            return; // a rollback to a savepoint the table never saw releases all its locks, as it should
        }
        try {
            tableTransaction.follow(kind, savepoint, holder);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while following a savepoint of the application in the lock table", e);
        }
    }

    /**
     * Application close (for good) or a pool's return: a connection owner's locks end with it (a close as a
     * session's end on PostgreSQL, said at WARN; a return as a leak, at ERROR with the stack where it was
     * taken); a pooled thread's stay with the thread.
     */
    public void letGo(boolean forGood) {
        if (holder == null) {
            return;
        }
        tableTransaction.forget();
        forgetVenue();
        if (connectionOwner != null) {
            List<HeldLock> owned = holder.releaseOwner(connectionOwner, forGood);
            if (!owned.isEmpty() && forGood) {
                reporter.reportSessionEnded(owned, connectionOwner.calls(), "connection " + id + " (closed)");
            } else if (!owned.isEmpty()) {
                reporter.reportOwnerGone(owned, connectionOwner.calls(), "connection " + id + " (returned to its pool)");
            }
            connectionOwner.calls().clear();
            if (forGood && !closed) {
                closed = true;
                holder.userClosed(); // the last one lets the holder's idle connections go
            }
        }
    }

    /** Application abort: as a close. */
    public void onAbort() {
        letGo(true);
    }

    @Override
    public String toString() {
        return holder == null ? "emulate off" : (connectionOwner != null ? connectionOwner : "thread owners") + " in "
                + holder;
    }
}
