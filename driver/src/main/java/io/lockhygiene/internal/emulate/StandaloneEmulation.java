package io.lockhygiene.internal.emulate;

import java.sql.SQLException;
import java.util.List;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.shape.KeyArg;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.Node;
import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.shape.BindView;

/**
 * emulate for an owner LockHygiene reaches without a JDBC connection of its own (an R2DBC connection): the
 * process's lock holder and lock table that {@link Emulation} uses, the connection as the owner, its open
 * transaction's transaction-level locks in the table, its commits fenced. It decides the shapes the JVM can
 * answer alone ({@link #whyNot}): calls with keys from integer literals and integer binds, answered as one
 * row made here; anything the server would have to compute is refused, never guessed.
 *
 * <p>Blocking: {@link #execute}, {@link #transactionEnded}, {@link #followSavepoint} and {@link #letGo} may
 * wait for the holder (a round trip, or a lock another owner holds). A reactive caller runs them on a thread
 * that may block, never on an event loop's. One caller at a time (an R2DBC connection's operations are
 * sequential), except {@link #cancel}.
 */
public final class StandaloneEmulation {
    private final Holder holder;
    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    private final LockOwner owner;
    private final TableTransaction tableTransaction = new TableTransaction();
    private final ExecutionContext context;
    private final Seals.LastFence fences = new Seals.LastFence();
    private volatile Limits waiting;
    private boolean closed;

    public StandaloneEmulation(Holder holder, Settings settings, String id, LeakReporter reporter) {
        this.holder = holder;
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
        this.owner = LockOwner.ofConnection(id, reporter);
        this.context = new ExecutionContext(holder, null, reporter, settings, tableTransaction);
        holder.userOpened();
    }

    /**
     * Why the lock table cannot decide {@code shape} without asking the server, or null when it can: a shape
     * emulate refuses anyway, keys read from rows, expression keys, and statements whose answer or validity
     * only the server can tell.
     */
    public static String whyNot(LockShape shape) {
        if (!shape.isSupported()) {
            return shape.unsupported();
        }
        if (shape.form() == LockShape.Form.ROWS) {
            return "its keys are read from rows of a table, which only the server can do on this connection (R2DBC)";
        }
        if (shape.needsValidation() || !shape.answeredLocally()) {
            return "its answer is more than the advisory calls' results, which only the server can compute on this"
                    + " connection (R2DBC)";
        }
        for (Node.Call c : shape.calls()) {
            for (KeyArg a : c.args()) {
                if (a.kind() == KeyArg.Kind.EXPRESSION) {
                    return "a key of " + c.function().sqlName() + " is an expression, which only the server can"
                            + " compute on this connection (R2DBC)";
                }
            }
        }
        return null;
    }

    /**
     * One execution of a statement {@link #whyNot} accepts: every call decided by the holder for this owner, the
     * answer made here. Blocks (see the class comment).
     *
     * @param inTransaction the statement runs inside a transaction block (as the server says)
     * @param queryTimeoutSeconds the statement's timeout, 0 for none
     * @param callSite where the application sent the statement (its stack is not this thread's)
     */
    public Outcome execute(LockShape shape, BindView binds, boolean inTransaction, int queryTimeoutSeconds,
                           Throwable callSite) throws SQLException {
        Limits limits = new Limits(settings.lockTimeoutMillis(), queryTimeoutSeconds);
        waiting = limits;
        try {
            return new ShapeExecution(context, owner, shape, binds, inTransaction, limits, callSite).run();
        } finally {
            waiting = null;
        }
    }

    /** A wait of {@link #execute} in progress ends with 57014 (another thread). */
    public void cancel() {
        Limits l = waiting;
        if (l != null) {
            l.cancel();
        }
    }

    /** True while the owner holds emulated locks: its commits are fenced. Two volatile reads when nothing is held. */
    public boolean ownerHolds() {
        return holder.table().anyoneHolds() && owner.holding();
    }

    /** True while its open transaction has transaction-level locks in the table. */
    public boolean transactionActive() {
        return tableTransaction.active();
    }

    /**
     * The loss of the owner's locks, once, when the holder saw one (its open transaction must be rolled back
     * by the caller, as a dead session's would be); null otherwise.
     */
    public SQLException lossOnce() {
        if (!holder.table().lossSeen() || !owner.takeLost()) {
            return null;
        }
        tableTransaction.forget();
        return Holder.lostException(owner.toString(), null);
    }

    /**
     * The seals the owner's commit now must check in its round trip, or null when it holds nothing; the loss of
     * its locks, when the holder saw one, as the exception the commit must be rolled back with (once). The seals
     * are read before the loss is asked: a loss clears the table only after it marked the owner, so a commit that
     * finds nothing to fence because its locks went this moment gets the loss instead, never an unfenced commit.
     */
    public int[] commitSeals() throws SQLException {
        int[] seals = holder.table().commitSeals(owner);
        SQLException lost = lossOnce();
        if (lost != null) {
            throw lost;
        }
        return seals;
    }

    /** The fence statement for {@code seals} (see {@link Seals#fence}), made once while they stay the same. */
    public String fence(int[] seals) {
        return fences.of(seals);
    }

    /**
     * A fence failed on the server (a session the owner's locks lived on is gone, its transaction undone): the
     * holder looks at its sessions at once; returns the error for the application (08006, naming the keys).
     */
    public SQLException fenceFailed(Throwable serverError) {
        List<AdvisoryKey> keys = holder.keysOf(owner);
        holder.sessionSuspected(owner);
        owner.takeLost();
        tableTransaction.forget();
        return new SQLException(EmulateMessages.commitFenced(owner, keys), "08006", serverError);
    }

    /** The owner's transaction ended (any way): its transaction-level locks go. Blocks. */
    public void transactionEnded() {
        if (!tableTransaction.active()) {
            return;
        }
        try {
            tableTransaction.end(holder);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while releasing the transaction-level locks of its transaction", e);
        }
    }

    /** An error aborted the owner's innermost (sub)transaction: its transaction-level locks of that depth go. Blocks. */
    public void innermostFailed() {
        if (!tableTransaction.active()) {
            return;
        }
        try {
            tableTransaction.innermostFailed(holder);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while releasing the locks of a failed transaction level", e);
        }
    }

    /** One savepoint command of the owner (its name). Blocks. */
    public void followSavepoint(TransactionControl.Kind kind, String name) {
        if (!tableTransaction.active()) {
            return;
        }
        try {
            tableTransaction.follow(kind, name, holder);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while following a savepoint in the lock table", e);
        }
    }

    /** DISCARD ALL ran: the owner's session-level locks go, as PostgreSQL's do. Blocks. */
    public void discardedAll() throws SQLException {
        holder.unlockAll(owner);
    }

    /** The connection closed: the owner's locks go, each reported with where it was taken. Blocks. */
    public void letGo() {
        if (closed) {
            return;
        }
        closed = true;
        tableTransaction.forget();
        List<HeldLock> owned = holder.releaseOwner(owner, true);
        if (!owned.isEmpty()) {
            reporter.reportOwnerGone(owned, owner.calls(), "connection " + id + " (closed)");
        }
        owner.calls().clear();
        holder.userClosed();
    }

    @Override
    public String toString() {
        return owner + " in " + holder;
    }
}
