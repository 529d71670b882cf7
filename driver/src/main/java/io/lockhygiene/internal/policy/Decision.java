package io.lockhygiene.internal.policy;

/** What happens to one statement that calls session-level advisory functions (see {@link LockPolicy}). */
public enum Decision {
    /** Run unchanged. */
    PASS,
    /** Run unchanged inside a transaction LockHygiene opens and closes, so the leak check at its COMMIT
     * runs on the backend that holds the lock (autocommit under transaction pooling). */
    WRAP_IN_TRANSACTION,
    /** Run with session-level names spliced to their {@code _xact_} forms. */
    REWRITE,
    /** Refuse before anything is sent. */
    REJECT,
    /** Decided in the process's lock table, or run on the lock holder (emulate). */
    EMULATE
}
