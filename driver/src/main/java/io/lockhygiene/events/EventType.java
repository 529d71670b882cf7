package io.lockhygiene.events;

/** What LockHygiene saw or did. */
public enum EventType {
    /** A session-level advisory call ran under transaction pooling (detect, or rewrite in autocommit). */
    SESSION_LOCK_CALL,
    /** A session-level call was spliced to its transaction-scoped form. */
    REWRITTEN,
    /** A session-level call ran on the connection's lock holder (emulate). */
    EMULATED,
    /** A session-level lock call was refused before it was sent (strict). */
    REJECTED,
    /** A session lock this connection took was still held at transaction end or return, and was released. */
    LEAK_RELEASED,
    /** A session lock held by our backend that this connection never took was found and released. */
    INHERITED_RELEASED,
    /** FOR UPDATE ... SKIP LOCKED pinned to one row by a unique key: "no row" may mean "row locked". */
    SKIP_LOCKED_SINGLE_KEY,
    /** The leak check could not run (the server went away, say); the reason is in the message. */
    CHECK_FAILED,
    /**
     * emulate: the lock holder's server connection was lost while it held locks (terminated backend,
     * pooler or server restart, timeout): those locks are gone and exclusion is no longer guaranteed. The
     * owning connection's next statement fails with SQLState 08006.
     */
    LOCK_LOST,
    /**
     * pg_advisory_unlock* returned false ("you don't own a lock"): the session that ran it does not hold the
     * lock, usually because the unlock ran on another session than the lock (transaction pooling, a pool
     * borrow). Logged once per call site, with where this process took that key if it did.
     */
    UNLOCK_NOT_HELD,
    /**
     * emulate: the process's lock holder waited longer than a few seconds for a server of the application's
     * transaction pooler (every process's holder takes one while it holds locks). Said once per holder, with
     * the fix: lockhygiene.holderUrl.
     */
    HOLDER_STARVED,
    /**
     * emulate refused a statement it cannot answer as PostgreSQL would (for example a session-level lock
     * whose key is read from rows in a way that depends on the plan); nothing was sent. The message names
     * the shape and the fix.
     */
    REFUSED;

    /**
     * Whether this event fails a CI run: a leaked or inherited lock released, a statement rejected, a
     * single-key SKIP LOCKED statement. The set of {@code lockhygiene.failOnViolation} and of the Maven
     * plugin's {@code verify} goal (the JUnit extension counts SKIP LOCKED only when asked to).
     */
    public boolean isViolation() {
        return this == LEAK_RELEASED || this == INHERITED_RELEASED || this == REJECTED || this == SKIP_LOCKED_SINGLE_KEY;
    }
}
