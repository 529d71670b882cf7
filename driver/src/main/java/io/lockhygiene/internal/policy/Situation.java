package io.lockhygiene.internal.policy;

/**
 * "Where are we" for one statement, computed in one place (the connection guard) from what the server
 * reported, and the only input the decision table needs besides the statement's scan. The transaction
 * status is the one the server sent with its last ReadyForQuery (pgjdbc tracks it), never what the JDBC
 * API was told: a transaction opened with BEGIN as text is open although autocommit is on.
 */
public final class Situation {
    /** The server's transaction status: ReadyForQuery's I, T and E. */
    public enum TransactionStatus { IDLE, OPEN, FAILED }

    /**
     * emulate: where this transaction's advisory calls run. Chosen at its first advisory call and kept
     * to its end, so that one transaction never waits for itself across two servers: on the lock holder
     * when it held locks already (the application's xact locks then go there too, released at the
     * transaction's end), on the application's own server otherwise (session locks still held at the
     * end move to the holder).
     */
    public enum Venue { UNDECIDED, HOLDER, APPLICATION }

    private final TransactionStatus status;
    private final boolean autoCommit;
    private final boolean transactionPooling;
    private final boolean holderHolding;
    private final Venue venue;

    public Situation(TransactionStatus status, boolean autoCommit, boolean transactionPooling, boolean holderHolding) {
        this(status, autoCommit, transactionPooling, holderHolding, holderHolding ? Venue.HOLDER : Venue.UNDECIDED);
    }

    public Situation(TransactionStatus status, boolean autoCommit, boolean transactionPooling, boolean holderHolding,
                     Venue venue) {
        this.status = status;
        this.autoCommit = autoCommit;
        this.transactionPooling = transactionPooling;
        this.holderHolding = holderHolding;
        this.venue = venue;
    }

    /** emulate: where advisory calls run now (see {@link Venue}). */
    public Venue venue() {
        return venue;
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

    /** emulate: the connection's lock holder holds at least one lock now. */
    public boolean holderHolding() {
        return holderHolding;
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
                + (holderHolding ? ", holder holding" : "") + ", venue " + venue + "]";
    }
}
