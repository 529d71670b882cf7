package io.lockhygiene.internal.session;

import java.sql.SQLException;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.sql.Seals;

/**
 * One transaction end as every front end sends it, decided here once and sent by the front end on its own
 * connection (the JDBC guard's {@code TransactionEnds} at once, R2DBC's {@code R2dbcEnds} as a chain): the
 * fence of an owner that holds emulated locks, the leak check when it is due, both in the end's own round trip
 * ({@code <fence>; COMMIT; <list and release>}, one simple-query text, so a transaction pooler keeps the server
 * until all of it ran), and what a failure of that text means.
 *
 * <p>The fence's seals come from {@link Emulation#commitSeals}, which keeps the seals-then-loss rule: a loss the
 * holder already saw is thrown instead, once, and the commit becomes a rollback. A rollback asks for nothing: it
 * keeps nothing that a lost lock protected, and a rollback that threw would hide the application's own error
 * (the loss reaches its next statement).
 */
public final class TransactionEnd {
    private final String command;
    private final int[] seals;
    private final boolean checked;

    private TransactionEnd(String command, int[] seals, boolean checked) {
        this.command = command;
        this.seals = seals;
        this.checked = checked;
    }

    /**
     * @param emulation the connection's emulation, or null (none: nothing is fenced)
     * @param command COMMIT, ROLLBACK, or the application's own end text
     * @param commitsOpen the end commits a transaction open on the server (a failed transaction's COMMIT is a
     *                    rollback: nothing to fence, and a fence would only fail with 25P02)
     * @param check the leak check is due at this end, on this server
     * @throws SQLException the loss of the owner's locks (08006), once, when the holder saw it
     */
    public static TransactionEnd decide(Emulation emulation, String command, boolean commitsOpen, boolean check)
            throws SQLException {
        int[] seals = commitsOpen && emulation != null ? emulation.commitSeals() : null;
        return new TransactionEnd(command, seals, check);
    }

    /** Nothing of ours rides along: the driver's own commit or rollback does. */
    public boolean plain() {
        return seals == null && !checked;
    }

    /** The end carries the fence of the owner's locks. */
    public boolean fenced() {
        return seals != null;
    }

    /** The end carries the leak check: its text returns the listing of leaked locks (then released). */
    public boolean checked() {
        return checked;
    }

    public String command() {
        return command;
    }

    /** The one text sent: the fence, then the end (with the listing and release of leaked locks when checked). */
    public String text(Emulation emulation) {
        String end = checked ? PgLocks.atTransactionEnd(command) : command;
        return seals == null ? end : emulation.fence(seals) + "; " + end;
    }

    /** The fence alone (for a front end that puts it into a text of its own), or null when the end is not fenced. */
    public String fence(Emulation emulation) {
        return seals == null ? null : emulation.fence(seals);
    }

    /**
     * The text failed with {@code serverError}: the loss (08006 naming the keys; the holder looks at its sessions
     * at once, so it may block) when the fence failed, and the transaction, aborted by it, is to be rolled back;
     * else null: the failure is the end's own (a serialization failure, a deferred constraint, a lost
     * connection), exactly what the application's own end would have thrown.
     */
    public SQLException lossOf(Emulation emulation, SQLException serverError) {
        return seals != null && Seals.isFenceFailure(serverError) ? emulation.fenceFailed(serverError) : null;
    }
}
