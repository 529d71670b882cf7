package io.lockhygiene.internal.policy;

/**
 * "Where are we" for one statement, computed in one place (the connection guard) from what the server
 * reported, and the only input the decision table needs besides the statement itself. The transaction
 * status is the one the server sent with its last ReadyForQuery (pgjdbc tracks it), never what the JDBC
 * API was told: a transaction opened with BEGIN as text is open although autocommit is on.
 */
public final class Situation {
    /** The server's transaction status: ReadyForQuery's I, T and E. */
    public enum TransactionStatus { IDLE, OPEN, FAILED }

    /**
     * emulate: where the open transaction's advisory calls run. In the lock table, unless a statement whose
     * shape the table cannot follow ran its transaction-level calls on the application's own server: then the
     * rest of that transaction's calls run there too, so that it never waits for itself across two backends.
     */
    public enum Venue { UNDECIDED, TABLE, APPLICATION }

    private final TransactionStatus status;
    private final boolean autoCommit;
    private final boolean transactionPooling;
    private final boolean emulating;
    private final Venue venue;
    private final boolean ownerBusy;

    public Situation(TransactionStatus status, boolean autoCommit, boolean transactionPooling) {
        this(status, autoCommit, transactionPooling, false, Venue.UNDECIDED, false);
    }

    /**
     * @param emulating emulate with a lock holder
     * @param ownerBusy emulate: the owner holds something in the lock table (or has a transaction there)
     */
    public Situation(TransactionStatus status, boolean autoCommit, boolean transactionPooling, boolean emulating,
                     Venue venue, boolean ownerBusy) {
        this.status = status;
        this.autoCommit = autoCommit;
        this.transactionPooling = transactionPooling;
        this.emulating = emulating;
        this.venue = venue;
        this.ownerBusy = ownerBusy;
    }

    public TransactionStatus status() {
        return status;
    }

    public boolean autoCommit() {
        return autoCommit;
    }

    public boolean transactionPooling() {
        return transactionPooling;
    }

    /** emulate with a lock holder. */
    public boolean emulating() {
        return emulating;
    }

    /** emulate: where the open transaction's advisory calls run (see {@link Venue}). */
    public Venue venue() {
        return venue;
    }

    /** emulate: the owner holds something in the lock table. */
    public boolean ownerBusy() {
        return ownerBusy;
    }

    /**
     * True when the next statement runs inside a transaction block: one is open on the server, or pgjdbc
     * opens one before it (autocommit off).
     */
    public boolean statementRunsInTransaction() {
        return status != TransactionStatus.IDLE || !autoCommit;
    }

    @Override
    public String toString() {
        return "Situation[" + status + (autoCommit ? ", autocommit" : "") + (transactionPooling ? ", transaction pooling" : "")
                + (emulating ? ", emulating, venue " + venue + (ownerBusy ? ", owner busy" : "") : "") + "]";
    }
}
