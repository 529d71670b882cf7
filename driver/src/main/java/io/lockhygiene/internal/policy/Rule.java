package io.lockhygiene.internal.policy;

/**
 * The rules LockHygiene checks, with their words: one home for what the driver says at run time and
 * what {@code scan} says about source files, so both tell a user the same problem and the same fix.
 */
public enum Rule {
    SESSION_ADVISORY_LOCK("session-advisory-lock", "Session-level advisory lock call"),
    SKIP_LOCKED_SINGLE_KEY("skip-locked-single-key", "SKIP LOCKED pinned to one key");

    private final String id;
    private final String title;

    Rule(String id, String title) {
        this.id = id;
        this.title = title;
    }

    /** The stable identifier (SARIF ruleId, JSON "rule"). */
    public String id() {
        return id;
    }

    public String title() {
        return title;
    }

    /** What is wrong with a session-level acquisition behind a transaction pooler. */
    public static String sessionLockProblem(String function) {
        return "session-level " + function + " outlives its transaction; behind a transaction pooler the next client"
                + " of the same server inherits the lock while others wait forever.";
    }

    /** What is wrong with a session-level unlock behind a transaction pooler. */
    public static String sessionUnlockProblem(String function) {
        return "session-level " + function + " behind a transaction pooler usually runs on another server than the"
                + " lock and releases nothing.";
    }

    /** The fix for a session-level call: its transaction-level form, or emulate. */
    public static String sessionLockFix(String xactForm) {
        return "Fix: call " + xactForm + " inside a transaction (BEGIN ... COMMIT), or use lockhygiene.mode=emulate to"
                + " keep session-lock code working.";
    }

    /** What is wrong with SKIP LOCKED on one row; {@code pinned} says how the row is pinned. */
    public static String skipLockedProblem(String pinned) {
        return "FOR UPDATE ... SKIP LOCKED " + pinned + ": when that row is merely locked by another transaction this"
                + " returns no row, and the caller reads \"no such job\". SKIP LOCKED is for claiming any of many rows.";
    }

    public static final String SKIP_LOCKED_FIX = "Fix: wait with plain FOR UPDATE, or use NOWAIT and handle the"
            + " lock_not_available error (SQLState 55P03).";
}
