package io.lockhygiene.internal.session;

import java.sql.SQLException;
import java.util.List;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.leak.RecentCalls.RecentStatements;
import io.lockhygiene.internal.sql.Seals;

/**
 * One transaction end as every front end sends it, decided here once and sent by the front end on its own
 * connection (the JDBC guard's {@code TransactionEnds} at once, R2DBC's {@code R2dbcEnds} as a chain): the
 * fence of an owner that holds emulated locks, the leak check when it is due, both in the end's own round trip
 * ({@code <fence>; COMMIT; <list and release>}, one simple-query text, so a transaction pooler keeps the server
 * until all of it ran), what a failure of that text means, and what the connection keeps afterwards. The front
 * end sends {@link #text()}, then tells the end how it went: {@link #succeeded} with the listing, or
 * {@link #failed} with the server's error (then it rolls back what the failure left open and calls
 * {@link OwnerSession#transactionEnded}).
 *
 * <p>The fence's seals come from {@link Emulation#commitSeals}, which keeps the seals-then-loss rule: a loss the
 * holder already saw is thrown instead, once, and the commit becomes a rollback. A rollback asks for nothing: it
 * keeps nothing that a lost lock protected, and a rollback that threw would hide the application's own error
 * (the loss reaches its next statement).
 */
public final class TransactionEnd {
    private final OwnerSession session;
    private final String command;
    private final int[] seals;
    /** Why the leak check rides along ({@link OwnerSession#checkAtTransactionEnd}'s words), or null: it does not. */
    private final String checkedBecause;

    private TransactionEnd(OwnerSession session, String command, int[] seals, String checkedBecause) {
        this.session = session;
        this.command = command;
        this.seals = seals;
        this.checkedBecause = checkedBecause;
    }

    /**
     * @param command COMMIT, ROLLBACK, or the application's own end text
     * @param commitsOpen the end commits a transaction open on the server (a failed transaction's COMMIT is a
     *                    rollback: nothing to fence, and a fence would only fail with 25P02)
     * @param checkedBecause why the leak check is due at this end, on this server, or null: it is not
     * @throws SQLException the loss of the owner's locks (08006), once, when the holder saw it: the transaction is
     *                      not committed (the front end rolls back what is open and calls
     *                      {@link OwnerSession#transactionEnded}); its recorded calls are cleared
     */
    public static TransactionEnd decide(OwnerSession session, String command, boolean commitsOpen,
                                        String checkedBecause) throws SQLException {
        Emulation emulation = session.emulation();
        int[] seals;
        try {
            seals = commitsOpen && emulation != null ? emulation.commitSeals() : null;
        } catch (SQLException lost) {
            session.calls().clear(); // a known loss: the transaction is over, never committed
            throw lost;
        }
        return new TransactionEnd(session, command, seals, checkedBecause);
    }

    /** Nothing of ours rides along: the driver's own commit or rollback does. */
    public boolean plain() {
        return seals == null && checkedBecause == null;
    }

    /** The end carries the fence of the owner's locks. */
    public boolean fenced() {
        return seals != null;
    }

    /** The end carries the leak check: its text returns the listing of leaked locks (then released). */
    public boolean checked() {
        return checkedBecause != null;
    }

    public String command() {
        return command;
    }

    /** The one text sent: the fence, then the end (with the listing and release of leaked locks when checked). */
    public String text() {
        String end = checkedBecause != null ? PgLocks.atTransactionEnd(command) : command;
        return seals == null ? end : session.emulation().fence(seals) + "; " + end;
    }

    /** The fence alone (for a front end that puts it into a text of its own), or null when the end is not fenced. */
    public String fence() {
        return seals == null ? null : session.emulation().fence(seals);
    }

    /**
     * The text went through: the leak check's listing (when it rode along) is reported, and the transaction is over
     * ({@link OwnerSession#transactionEnded}). It may wait for the lock table's lock (an owner's transaction-level
     * locks let go): a front end on an event loop calls it where it may block.
     *
     * @param held the listing the text returned; ignored when the check did not ride along
     * @param pooling transaction pooling, as the front end assumes it now
     * @param recent the connection's last statements, for a lock no recorded call explains; null when not kept
     */
    public void succeeded(List<HeldLock> held, boolean pooling, RecentStatements recent) {
        if (checkedBecause != null) {
            session.checkedAtTransactionEnd(held, command, checkedBecause, recent);
        }
        session.transactionEnded(pooling);
    }

    /**
     * The text failed with {@code serverError}. The transaction is over either way: the calls recorded in it are
     * cleared where the end was ours to check or fence (under session pooling a plain end's calls stay for the
     * check at the return). Returns the loss (08006 naming the keys; the holder looks at its sessions at once, so it
     * may block) when the fence failed; the front end rolls back the transaction it aborted, gives the application
     * the loss and calls {@link OwnerSession#transactionEnded}. Null: the failure is the end's own (a serialization
     * failure, a deferred constraint, a lost connection), exactly what the application's own end would have thrown.
     */
    public SQLException failed(Exception serverError, boolean pooling) {
        if (pooling || checkedBecause != null || seals != null) {
            session.calls().clear();
        }
        return serverError instanceof SQLException ? lossOf((SQLException) serverError) : null;
    }

    /**
     * What a failure of a text the fence rode in means, with nothing else done: the loss (08006 naming the keys;
     * it may block) when the fence failed, else null (the failure is the text's own).
     */
    public SQLException lossOf(SQLException serverError) {
        return seals != null && Seals.isFenceFailure(serverError) ? session.emulation().fenceFailed(serverError) : null;
    }
}
