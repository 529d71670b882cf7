package io.lockhygiene.policy;

/** What happens to one statement that calls session-level advisory functions. */
public enum Decision {
    /** Run unchanged. */
    PASS(false),
    /** Run unchanged inside a transaction LockHygiene opens and closes, so the leak check at its COMMIT
     * runs on the backend that holds the lock (autocommit under transaction pooling). */
    WRAP_IN_TRANSACTION(true),
    /** Run with session-level names spliced to their {@code _xact_} forms. */
    REWRITE(false),
    /** Refuse before anything is sent. */
    REJECT(false),
    /** Run on the connection's lock holder, which keeps a transaction (and so its server) while it holds locks. */
    EMULATE(false);

    private final boolean wraps;

    Decision(boolean wraps) {
        this.wraps = wraps;
    }

    public boolean wrapsInTransaction() {
        return wraps;
    }
}
