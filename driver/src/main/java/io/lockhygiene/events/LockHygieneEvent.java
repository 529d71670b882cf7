package io.lockhygiene.events;

import java.time.Instant;

/**
 * One thing LockHygiene saw or did, as handed to listeners. SQL is already cut to the configured
 * {@code logSql} form; no credentials are ever part of an event. Made by LockHygiene only: there is no
 * public constructor, so an event a listener receives is always one LockHygiene published.
 */
public final class LockHygieneEvent {
    private final EventType type;
    private final Instant time;
    private final String connectionId;
    private final String function;
    private final String key;
    private final String lockMode;
    private final String sql;
    private final String message;
    private final Throwable takenAt;

    private LockHygieneEvent(EventType type, String connectionId, String function, String key, String lockMode,
                             String sql, String message, Throwable takenAt) {
        this.type = type;
        this.time = Instant.now();
        this.connectionId = connectionId;
        this.function = function;
        this.key = key;
        this.lockMode = lockMode;
        this.sql = sql;
        this.message = message;
        this.takenAt = takenAt;
    }

    public EventType type() {
        return type;
    }

    public Instant time() {
        return time;
    }

    /**
     * Our id for the application connection the event is about ({@code lh-12}; not a backend pid); null for an
     * event about the process's lock holder rather than one connection (its message names the holder).
     */
    public String connectionId() {
        return connectionId;
    }

    /** The advisory function involved, when known. */
    public String function() {
        return function;
    }

    /** The lock key: "42" for a bigint key, "(7742, -12345)" for two int keys; null when not known. */
    public String key() {
        return key;
    }

    /** PostgreSQL's lock mode (ExclusiveLock, ShareLock), when known. */
    public String lockMode() {
        return lockMode;
    }

    /** The SQL involved, cut as configured; null when none. */
    public String sql() {
        return sql;
    }

    /** The operator-facing message that was logged. */
    public String message() {
        return message;
    }

    /** The stack where the lock was taken, when LockHygiene saw it taken; null otherwise. */
    public Throwable takenAt() {
        return takenAt;
    }

    @Override
    public String toString() {
        return type + " " + message;
    }
}
