package io.lockhygiene.policy;

/**
 * "Where are we" for one statement, computed in one place (the connection guard) from what the server
 * reported, and the only input the decision table needs besides the statement's scan. The transaction
 * status is the one the server sent with its last ReadyForQuery (pgjdbc tracks it), never what the JDBC
 * API was told: a transaction opened with BEGIN as text is open although autocommit is on.
 */
public final class Situation {
    /** The server's transaction status: ReadyForQuery's I, T and E. */
    public enum TransactionStatus { IDLE, OPEN, FAILED }

    private final TransactionStatus status;
    private final boolean autoCommit;
    private final boolean transactionPooling;
    private final boolean holderHolding;

    public Situation(TransactionStatus status, boolean autoCommit, boolean transactionPooling, boolean holderHolding) {
        this.status = status;
        this.autoCommit = autoCommit;
        this.transactionPooling = transactionPooling;
        this.holderHolding = holderHolding;
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
                + (holderHolding ? ", holder holding" : "") + "]";
    }
}
