package io.lockhygiene.internal.session;

/**
 * What a statement without advisory calls needs of a front end that sends a text as one statement (R2DBC; a third
 * front end of its kind, such as Vert.x's {@code SqlClient}), once it could not pass as it is: decided by
 * {@link OwnerSession#withoutCalls}, carried out by the front end. JDBC reaches the same answers its own way,
 * because it can split a text and send its pieces at once (see docs/architecture.md).
 */
public final class StatementStep {
    /** What to send. */
    public enum Kind {
        /** As it is. */
        AS_IS,
        /**
         * An autocommit statement the leak check's sample took, or every end is checked ({@code leakCheck=always}):
         * in a transaction of ours whose COMMIT carries the check on the server that ran it.
         */
        WRAPPED,
        /**
         * The text is one transaction end (COMMIT, ROLLBACK, END, ABORT, chained or not): sent as the API's commit or
         * rollback sends its end, the fence and the leak check in its round trip when due, the lock table following.
         */
        ENDS_BY_TEXT,
        /**
         * Several statements whose last ends the transaction while the leak check is due under transaction pooling:
         * the check goes after the end in the same text, so it runs on the server that held the transaction
         * ({@link #checkWhy()} says why it is due).
         */
        CHECKED_TEXT,
        /**
         * A text with transaction control in a transaction under transaction pooling, whose end the check cannot ride
         * (a COMMIT or ROLLBACK before its last statement, or no check due): as it is, then
         * {@link OwnerSession#transactionEndedUnchecked} once the server reports the transaction over (its server is
         * no longer the connection's; said only when calls were recorded in it).
         */
        ENDS_UNCHECKED,
        /** emulate: DISCARD ALL in autocommit: as it is, then the owner's session-level locks are let go. */
        LETS_GO_AFTER,
        /** emulate: an owner's autocommit statement is its own commit: fenced. */
        FENCED,
        /**
         * emulate: a text of several statements whose commits keep work: the fence goes into the text before each
         * such point and at its end (as it is when nothing is to be fenced).
         */
        FENCED_TEXT
    }

    private static final StatementStep[] SHARED = new StatementStep[Kind.values().length];

    static {
        for (Kind k : Kind.values()) {
            SHARED[k.ordinal()] = new StatementStep(k, null);
        }
    }

    private final Kind kind;
    private final String checkWhy;

    private StatementStep(Kind kind, String checkWhy) {
        this.kind = kind;
        this.checkWhy = checkWhy;
    }

    /** A step without a leak check of its own (one shared instance per kind). */
    static StatementStep of(Kind kind) {
        return SHARED[kind.ordinal()];
    }

    /** {@link Kind#CHECKED_TEXT}, the check due for {@code why}. */
    static StatementStep checkedText(String why) {
        return new StatementStep(Kind.CHECKED_TEXT, why);
    }

    public Kind kind() {
        return kind;
    }

    /**
     * {@link Kind#CHECKED_TEXT}: why the check is due, in its report's words ({@link OwnerSession#checkAtTransactionEnd});
     * null for every other kind.
     */
    public String checkWhy() {
        return checkWhy;
    }

    @Override
    public String toString() {
        return kind.name();
    }
}
