package io.lockhygiene.internal.policy;

/**
 * The whole plan for one execution of a statement, as {@link LockPolicy#plan} decides it: what runs (the
 * statement unchanged, rewritten, decided in emulate's lock table, or nothing), whether it runs inside a
 * transaction LockHygiene opens so that the leak check at its end runs on the server that held it, and the
 * words of a refusal. The connection guard carries out exactly this.
 */
public final class Plan {
    /** What runs. */
    public enum Action {
        /** Unchanged; nothing of ours. */
        PASS,
        /** Unchanged; its session-level calls are recorded, and the transaction's end checks for leaks. */
        RECORD,
        /** With session-level names spliced to their {@code _xact_} forms (rewrite). */
        REWRITE,
        /** Refused before anything is sent (strict). */
        REJECT,
        /** emulate: every advisory call decided in the lock table, answered as PostgreSQL would. */
        EMULATE,
        /**
         * emulate: transaction-level calls in a shape the table cannot follow, from an owner that holds nothing
         * in it: unchanged on the application's own server (PostgreSQL answers; its locks end with the
         * transaction), and the rest of that transaction's advisory calls run there too.
         */
        ON_SERVER,
        /** emulate: refused before anything is sent; no exact answer is possible (the reason says why). */
        REFUSE,
        /** emulate: a text of several statements, each planned and run on its own, results in order. */
        SPLIT
    }

    public static final Plan PASS = new Plan(Action.PASS, false, null);
    public static final Plan PASS_WRAPPED = new Plan(Action.PASS, true, null);
    public static final Plan RECORD = new Plan(Action.RECORD, false, null);
    public static final Plan RECORD_WRAPPED = new Plan(Action.RECORD, true, null);
    public static final Plan REWRITE = new Plan(Action.REWRITE, false, null);
    public static final Plan REJECT = new Plan(Action.REJECT, false, null);
    public static final Plan EMULATE = new Plan(Action.EMULATE, false, null);
    public static final Plan ON_SERVER = new Plan(Action.ON_SERVER, false, null);
    public static final Plan SPLIT = new Plan(Action.SPLIT, false, null);
    /** A split text in autocommit: its statements run in one transaction of ours. */
    public static final Plan SPLIT_WRAPPED = new Plan(Action.SPLIT, true, null);

    private final Action action;
    private final boolean wrapped;
    private final String refusal;

    private Plan(Action action, boolean wrapped, String refusal) {
        this.action = action;
        this.wrapped = wrapped;
        this.refusal = refusal;
    }

    static Plan refuse(String why) {
        return new Plan(Action.REFUSE, false, why);
    }

    public Action action() {
        return action;
    }

    /**
     * Runs inside a transaction LockHygiene opens and ends around it (autocommit under transaction pooling),
     * so that the leak check at its end runs on the backend that held the statement.
     */
    public boolean wrapped() {
        return wrapped;
    }

    /** REFUSE: why emulate cannot answer it as PostgreSQL would. */
    public String refusal() {
        return refusal;
    }

    @Override
    public String toString() {
        return action + (wrapped ? " wrapped" : "") + (refusal == null ? "" : " (" + refusal + ")");
    }
}
