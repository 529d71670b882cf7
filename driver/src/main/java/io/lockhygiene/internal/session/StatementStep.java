package io.lockhygiene.internal.session;

import java.sql.SQLException;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * What a statement without advisory calls needs of a front end that sends a text as one statement and decides at
 * execution (R2DBC; a third front end of its kind, such as Vert.x's {@code SqlClient}): whether it is looked at
 * ({@link #looksAtUnflagged}), what it needs ({@link #decide}), and when a text that ends its transaction carries the
 * leak check after its end ({@link #checkAfterTextEnd}); the front end carries it out. The rules are the core's, over
 * the connection's {@link OwnerSession}. JDBC reaches the same answers its own way,
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

    /**
     * A statement the prefilter passed must still be looked at when it runs: under emulate while the owner holds
     * emulated locks or its open transaction has emulation state; under transaction pooling, a text that may end a
     * transaction whose leak check is due (recorded calls, or {@code leakCheck=always}), and with
     * {@code leakCheck=always} an autocommit statement (its own transaction to check). For a front end that decides
     * at execution (R2DBC); JDBC's hot path asks {@link OwnerSession#watchesEveryStatement} and {@link OwnerSession#ownerHolds} itself.
     *
     * @param inTransaction the application's transaction is open (begun, even if not sent yet)
     * @param assumesPooling transaction pooling unless known otherwise
     */
    public static boolean looksAtUnflagged(OwnerSession session, String sql, boolean inTransaction, boolean assumesPooling) {
        if (session.off()) {
            return false;
        }
        Emulation emulation = session.emulation();
        if (emulation != null && (emulation.transactionPending() || emulation.ownerHolds())) {
            return true;
        }
        if (!assumesPooling) {
            return false;
        }
        boolean checksEveryEnd = LockPolicy.checksEveryTransaction(session.settings());
        if (!inTransaction) {
            return checksEveryEnd;
        }
        // the first word first: the rest is asked only of a text that may end a transaction
        return sql != null && (TransactionControl.mayStartWithEnd(sql) || sql.indexOf(';') >= 0)
                && (checksEveryEnd || session.watchesEveryStatement(true));
    }

    /**
     * What a statement without advisory calls needs of a front end that sends a text as one statement (R2DBC), once
     * it could not pass as it is ({@link StatementStep}). In order: an autocommit statement the sample took (or every
     * end checked) runs in a transaction of ours whose COMMIT carries the check; without emulation, under transaction
     * pooling inside a transaction, an end as text carries the check when due (alone: in its own round trip; after
     * other statements: after it in the same text), and an end inside the text is said once it ended unchecked;
     * under emulate, the one rule for an owner's statement ({@link LockPolicy#ownerStep}). Everything else as it is.
     *
     * @param sampled the leak check's sample took this statement's turn ({@link OwnerSession#autocommitSampleTurn})
     * @throws SQLException refused by the policy (strict)
     */
    public static StatementStep decide(OwnerSession session, String sql, ScanResult scan, Situation where, boolean sampled)
            throws SQLException {
        if (sql == null) {
            return of(Kind.AS_IS);
        }
        boolean inTransaction = where.statementRunsInTransaction();
        if ((sampled || LockPolicy.checksEveryTransaction(session.settings())) && !inTransaction
                && !session.ownerHolds()) {
            // the turn is taken only by a statement PostgreSQL runs in a transaction block as it would alone (never
            // VACUUM or CREATE INDEX CONCURRENTLY); else it passes, as JDBC's does
            boolean taken = sampled && SqlScanner.runsInTransactionBlockAsAlone(sql);
            if (session.plan(sql, scan, null, LockPolicy.Form.TEXT, taken, where).wrapped()) {
                if (taken) {
                    session.sampleNextEnd();
                }
                return of(Kind.WRAPPED);
            }
        }
        if (!session.emulates() && inTransaction && where.transactionPooling()) {
            if (TransactionControl.isSoleEnd(scan, sql)) {
                return of(Kind.ENDS_BY_TEXT); // the end's own text decides the check
            }
            String why = checkAfterTextEnd(session, scan, where);
            if (why != null) {
                return checkedText(why);
            }
            if (scan.hasTransactionControl()) {
                return of(Kind.ENDS_UNCHECKED);
            }
        }
        if (session.emulates()) {
            switch (session.ownerStep(LockPolicy.OwnerText.of(sql, scan), inTransaction)) {
                case LETS_GO_AFTER:
                    return of(Kind.LETS_GO_AFTER);
                case FENCED:
                    return of(Kind.FENCED);
                case ENDS_TRANSACTION:
                    // alone, the end carries the fence in its own round trip; after other statements it rides in the text
                    return of(TransactionControl.isSoleEnd(scan, sql) ? Kind.ENDS_BY_TEXT
                            : Kind.FENCED_TEXT);
                case FENCES_IN_TEXT:
                    return of(Kind.FENCED_TEXT);
                default:
                    break;
            }
        }
        return of(Kind.AS_IS);
    }

    /**
     * Without emulation, under transaction pooling: a text of several statements whose last one ends the transaction
     * it runs in (or opens itself) carries the leak check after that end, in the same text, when the check is due;
     * why, in its report's words, or null. For a front end that sends a text as one statement (JDBC runs the end on
     * its own instead); asked after the text's calls were recorded ({@link OwnerSession#beforeSend}).
     */
    public static String checkAfterTextEnd(OwnerSession session, ScanResult scan, Situation where) {
        if (session.emulates() || !where.transactionPooling() || scan.statementCount() < 2) {
            return null;
        }
        TransactionControl end = scan.finalTransactionEnd();
        if (end == null || !(where.statementRunsInTransaction() || scan.opensTransactionBefore(end))) {
            return null;
        }
        return session.checkAtTransactionEnd(true);
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
