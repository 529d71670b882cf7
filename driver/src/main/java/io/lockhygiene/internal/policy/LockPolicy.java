package io.lockhygiene.internal.policy;

import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * The one decision table: (what the statement calls and whether emulate can follow its shape, where we
 * are, the settings) to the whole {@link Plan}. Session locks are legitimate under session pooling and
 * direct connections; only transaction pooling (or connections a pool lends to any thread, under emulate)
 * changes anything. Pure; the connection guard carries out exactly what it returns.
 */
public final class LockPolicy {

    private LockPolicy() {
    }

    /** True when connections of these settings need a lock holder (the only reader of the mode besides this table). */
    public static boolean emulates(Settings settings) {
        return settings.mode() == Settings.Mode.EMULATE;
    }

    /** True when session calls inside transactions become their transaction-level forms. */
    public static boolean rewrites(Settings settings) {
        return settings.mode() == Settings.Mode.REWRITE;
    }

    /** True when these settings do nothing at all (the driver hands out pgjdbc's own connection). */
    public static boolean off(Settings settings) {
        return settings.mode() == Settings.Mode.OFF;
    }

    /** How the statement reaches us: a Statement's text, or prepared (its parameters are bound), or callable. */
    public enum Form { TEXT, PREPARED, CALLABLE }

    /** What a statement's shape is to emulate. */
    public enum Shape {
        /** Not asked (not emulate, or no advisory call). */
        NONE,
        /** The lock table can decide every call. */
        SUPPORTED,
        /** A text of several statements. */
        SEVERAL,
        /** Something the table cannot follow exactly. */
        UNSUPPORTED,
        /** Bind parameters in a plain Statement's text: pgjdbc answers that itself. */
        UNBOUND
    }

    /** What the shape of a statement reaching us as {@code form} is to emulate (NONE without a shape). */
    public static Shape shapeOf(LockShape shape, Form form) {
        if (shape == null) {
            return Shape.NONE;
        }
        if (shape.isSupported()) {
            if (form == Form.TEXT && shape.parameterCount() > 0) {
                return Shape.UNBOUND;
            }
            return (form == Form.CALLABLE) != (shape.form() == LockShape.Form.CALL_ESCAPE) ? Shape.UNSUPPORTED
                    : Shape.SUPPORTED;
        }
        return shape.unsupported().startsWith(ShapeParser.SEVERAL_STATEMENTS) ? Shape.SEVERAL : Shape.UNSUPPORTED;
    }

    /** The plan of one execution (see the other {@code plan}), with the mode and leak check of {@code settings}. */
    public static Plan plan(ScanResult scan, LockShape shape, Form form, boolean sampled, Situation where,
                            Settings settings) {
        return plan(scan, shape, form, sampled, where, settings.mode(), settings.leakCheck());
    }

    /**
     * @param scan what the text calls
     * @param shape emulate: the shape of its calls (null when none was read)
     * @param sampled the leak check sample took this autocommit statement's end (and the statement is one
     *                that may run inside a transaction block): under transaction pooling it is wrapped so that
     *                its COMMIT carries the check, as with leakCheck=always
     */
    public static Plan plan(ScanResult scan, LockShape shape, Form form, boolean sampled, Situation where,
                            Settings.Mode mode, Settings.LeakCheck leakCheck) {
        if (mode == Settings.Mode.OFF) {
            return Plan.PASS;
        }
        boolean checked = leakCheck != Settings.LeakCheck.NEVER;
        if (scan.calls().isEmpty()) {
            // leakCheck=always: under transaction pooling every autocommit statement ends a transaction whose
            // server must be checked
            return (leakCheck == Settings.LeakCheck.ALWAYS || sampled) && wraps(where, scan) ? Plan.PASS_WRAPPED : Plan.PASS;
        }
        if (where.status() == Situation.TransactionStatus.FAILED) {
            return Plan.PASS; // PostgreSQL answers 25P02 to anything but the transaction's end: nothing of ours
        }
        if (!where.transactionPooling()) {
            // a session is a session there: its session locks are legitimate, and checked when it is returned
            return scan.hasSessionLevelCall() ? Plan.RECORD : Plan.PASS;
        }
        if (mode == Settings.Mode.EMULATE && where.emulating()) {
            return emulate(scan, shape, form, where);
        }
        if (!scan.hasSessionLevelCall()) {
            return Plan.PASS; // transaction-level calls are hygienic
        }
        switch (mode) {
            case STRICT:
                if (scan.hasSessionAcquire()) {
                    return Plan.REJECT;
                }
                break; // unlocks alone take nothing: as detect
            case REWRITE:
                if (anyCallInTransaction(scan, where)) {
                    return Plan.REWRITE; // never wrapped: a call in a transaction means no transaction of ours
                }
                break; // in autocommit an xact lock would end with the statement: keep the session form
            default:
                break;
        }
        return checked && wraps(where, scan) ? Plan.RECORD_WRAPPED : Plan.RECORD;
    }

    /**
     * A statement PostgreSQL refuses inside a transaction block, or whose meaning one would change
     * ({@code SqlScanner.refusesTransactionBlock}: VACUUM, CREATE INDEX CONCURRENTLY, a CALL whose procedure may
     * commit, ...), runs as it is where the plan would wrap it in a transaction of ours for the leak check
     * ({@code leakCheck=always}, the sample, a recorded call in autocommit): the check cannot ride in its end, and
     * LockHygiene must not break or change the statement. A text of several statements is one implicit transaction
     * on PostgreSQL already: its plan stays.
     */
    public static Plan asItIsWhereRefused(Plan p, boolean refusesTransactionBlock) {
        if (!refusesTransactionBlock) {
            return p;
        }
        return p == Plan.PASS_WRAPPED ? Plan.PASS : p == Plan.RECORD_WRAPPED ? Plan.RECORD : p;
    }

    /**
     * One text of a batch (its calls' answers are never read: a batch's results are update counts): recorded
     * and wrapped as a Statement's text, but refused under emulate when it has session-level calls.
     */
    public static Plan inBatch(ScanResult sentScan, LockShape shape, Situation where, Settings settings) {
        if (shape != null && shape.hasSessionLevelCall() && emulates(settings) && where.emulating()
                && where.transactionPooling()) {
            return Plan.refuse("session-level advisory calls in a batch (a batch's results are update counts, so"
                    + " the calls' answers could not be read anyway)");
        }
        return plan(sentScan, null, Form.TEXT, false, where, settings);
    }

    /** An empty batch (addBatch texts that all passed unchecked): wrapped when every end is checked. */
    public static boolean wrapsBatch(Situation where, Settings settings) {
        return plan(ScanResult.NOTHING, null, Form.TEXT, false, where, settings).wrapped();
    }

    /**
     * emulate: what a statement without advisory calls needs of ours while its owner holds emulated locks or keeps a
     * transaction in the lock table (asked by every front end; they differ only in how they send it).
     */
    public enum OwnerStep {
        /** As it is: inside a transaction its end is fenced; in autocommit it commits nothing to fence. */
        AS_IS,
        /** DISCARD ALL in autocommit: as it is, then the owner's session-level locks are let go, as on PostgreSQL. */
        LETS_GO_AFTER,
        /**
         * Its own commit (autocommit): it runs with the fence in its round trip, or in a transaction of ours whose
         * COMMIT carries the fence.
         */
        FENCED,
        /**
         * Its last statement ends the transaction it runs in (COMMIT, ROLLBACK, END, ABORT, PREPARE TRANSACTION as
         * text, or a COMMIT or ROLLBACK AND CHAIN): that end goes as the API's commit or rollback does, with the fence of an owner holding emulated
         * locks (and the leak check) in its round trip, and the lock table follows it.
         */
        ENDS_TRANSACTION,
        /**
         * A text of several statements of an owner holding emulated locks that keeps work before its last statement
         * (a COMMIT, END or PREPARE TRANSACTION in its middle; an INSERT after its COMMIT, which PostgreSQL commits
         * at the text's end): the fence goes before each such point ({@link TextFences#points}), each front end in its
         * way (R2DBC in the one text, JDBC by running the text in pieces cut there).
         */
        FENCES_IN_TEXT
    }

    /**
     * What {@link #ownerStep} needs to know of a text, each asked only when the rule reaches it (an owner's repeated
     * autocommit statement is read once by a front end that keeps the answers, and never scanned).
     */
    public interface OwnerText {
        /** Its transaction control as the scanner found it. */
        ScanResult scan();

        /** {@code DISCARD ALL} alone. */
        boolean discardsAll();

        /** One ordinary statement that runs inside a transaction block as it would alone. */
        boolean runsInTransactionBlockAsAlone();

        /** A text whose answers nobody keeps: each read when asked. */
        static OwnerText of(String sql, ScanResult scan) {
            return new OwnerText() {
                @Override
                public ScanResult scan() {
                    return scan;
                }

                @Override
                public boolean discardsAll() {
                    return SqlScanner.discardsAll(sql);
                }

                @Override
                public boolean runsInTransactionBlockAsAlone() {
                    return SqlScanner.runsInTransactionBlockAsAlone(sql);
                }
            };
        }
    }

    /**
     * The one rule for an owner's statement without advisory calls (see {@link OwnerStep}), for every front end.
     *
     * @param inTransaction the statement runs inside a transaction block, as the server reports
     * @param ownerHolds the owner holds emulated locks now
     */
    public static OwnerStep ownerStep(OwnerText text, boolean inTransaction, boolean ownerHolds) {
        if (!inTransaction && ownerHolds) {
            if (text.runsInTransactionBlockAsAlone()) {
                return OwnerStep.FENCED; // one ordinary statement: no transaction control in it
            }
            if (text.discardsAll()) {
                return OwnerStep.LETS_GO_AFTER;
            }
        }
        ScanResult scan = text.scan();
        if (!inTransaction && ownerHolds && scan.statementCount() > 1 && !scan.hasTransactionControl()) {
            return OwnerStep.FENCED; // several statements in autocommit: one implicit transaction, one commit
        }
        TransactionControl end = scan.finalEnd(); // AND CHAIN too: it commits, and the table's transaction ends
        // in autocommit a text of its own BEGIN ... COMMIT is a transaction too: its COMMIT is fenced
        if (end != null && (inTransaction || scan.opensTransactionBefore(end))) {
            return OwnerStep.ENDS_TRANSACTION;
        }
        return ownerHolds && scan.statementCount() > 1 && TextFences.points(scan, inTransaction, false).length > 0
                ? OwnerStep.FENCES_IN_TEXT : OwnerStep.AS_IS;
    }

    /**
     * emulate: an autocommit batch of an owner holding emulated locks commits in a transaction of ours whose COMMIT
     * carries the fence, as a single statement's does; a batch with a text that begins or ends a transaction itself
     * cannot have one of ours around it.
     *
     * @param controlsTransactions a text of the batch is transaction control (BEGIN, COMMIT, SAVEPOINT, ...)
     */
    public static boolean fencesBatch(boolean inTransaction, boolean ownerHolds, boolean controlsTransactions) {
        return ownerHolds && !inTransaction && !controlsTransactions;
    }

    private static Plan emulate(ScanResult scan, LockShape shape, Form form, Situation where) {
        if (where.venue() == Situation.Venue.APPLICATION) {
            if (scan.hasSessionLevelCall()) {
                return Plan.refuse("a session-level advisory call in a transaction whose transaction-level advisory"
                        + " locks are on its own server (taken earlier in it by a statement the lock table cannot"
                        + " follow)");
            }
            return Plan.ON_SERVER;
        }
        switch (shapeOf(shape, form)) {
            case SUPPORTED:
                return Plan.EMULATE;
            case SEVERAL:
                if (form != Form.TEXT) {
                    return Plan.refuse("several statements in one prepared statement");
                }
                // in autocommit a text without BEGIN or COMMIT of its own runs in one transaction of ours, as
                // PostgreSQL runs such a text in one implicit transaction (a failure undoes all of it)
                return !where.statementRunsInTransaction() && !scan.hasTransactionControl() ? Plan.SPLIT_WRAPPED
                        : Plan.SPLIT;
            case UNBOUND:
                return Plan.PASS;
            default:
                break;
        }
        if (!scan.hasSessionLevelCall() && !where.ownerBusy()) {
            return Plan.ON_SERVER;
        }
        String why = shape == null ? null : shape.unsupported();
        return Plan.refuse(why == null ? "a statement emulate cannot follow" : why);
    }

    /** Where a leak check can run: a transaction's end (API or text), or a connection's return. */
    public enum CheckPoint {
        TRANSACTION_END,
        RETURN
    }

    /**
     * The check at the end: whether the leak check runs at {@code at}. Under transaction pooling it runs at
     * every transaction end, on the server that held the transaction (between transactions no server is the
     * connection's); under session pooling or direct it runs at the return, where the session ends for the
     * application. {@code tracked}: the SQL of this transaction or session called session-level functions;
     * {@code sampled}: the leak check sample took this transaction end (only transaction ends are sampled:
     * there the check rides in the end's own round trip, at a return it would be a round trip of its own).
     */
    public static boolean checkDue(CheckPoint at, Settings.LeakCheck leakCheck, boolean tracked, boolean transactionPooling) {
        return checkDue(at, leakCheck, tracked, transactionPooling, false);
    }

    public static boolean checkDue(CheckPoint at, Settings.LeakCheck leakCheck, boolean tracked, boolean transactionPooling,
                                   boolean sampled) {
        boolean sampledEnd = sampled && at == CheckPoint.TRANSACTION_END;
        if (leakCheck == Settings.LeakCheck.NEVER || (leakCheck == Settings.LeakCheck.TRACKED && !tracked && !sampledEnd)) {
            return false;
        }
        return at == CheckPoint.TRANSACTION_END ? transactionPooling : !transactionPooling;
    }

    /** True when every transaction end is checked, whatever its SQL (so every statement must be looked at). */
    public static boolean checksEveryTransaction(Settings settings) {
        return !off(settings) && settings.leakCheck() == Settings.LeakCheck.ALWAYS;
    }

    /**
     * A statement that runs while no transaction is open on the server is wrapped in one of ours, so the leak
     * check at its COMMIT runs on the server that held it; a text with its own BEGIN or COMMIT never is
     * (our transaction would swallow or end theirs).
     */
    private static boolean wraps(Situation where, ScanResult scan) {
        return where.transactionPooling() && !where.statementRunsInTransaction() && !scan.hasTransactionControl();
    }

    private static boolean anyCallInTransaction(ScanResult scan, Situation where) {
        boolean[] in = scan.callsInTransaction(where.statementRunsInTransaction());
        for (int i = 0; i < in.length; i++) {
            if (in[i] && scan.calls().get(i).function().isSessionLevel()) {
                return true;
            }
        }
        return false;
    }

    /**
     * "Where are we" for one statement, computed in one place (the connection guard) from what the server
     * reported, and the only input the decision table needs besides the statement itself. The transaction
     * status is the one the server sent with its last ReadyForQuery (pgjdbc tracks it), never what the JDBC
     * API was told: a transaction opened with BEGIN as text is open although autocommit is on.
     */
    public static final class Situation {
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
}
