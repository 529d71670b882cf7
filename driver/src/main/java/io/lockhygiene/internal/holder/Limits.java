package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.internal.emulate.EmulateMessages;

/**
 * How long one statement's blocking advisory call may wait, as PostgreSQL bounds it: by
 * {@code lockhygiene.lockTimeout} (55P03, PostgreSQL's lock_timeout), by the statement's query timeout and
 * by {@link #cancel} (57014, as a cancel request). One per execution; {@code Statement.cancel()} of the
 * application reaches it from another thread.
 */
public final class Limits {
    private final long lockTimeoutMillis;
    private final long deadlineNanos;
    private final long startNanos = System.nanoTime();
    private volatile boolean cancelled;
    private volatile Runnable onCancel;

    /**
     * @param lockTimeoutMillis 0 for none
     * @param queryTimeoutSeconds the statement's query timeout, 0 for none
     */
    public Limits(long lockTimeoutMillis, int queryTimeoutSeconds) {
        this.lockTimeoutMillis = lockTimeoutMillis;
        this.deadlineNanos = queryTimeoutSeconds > 0 ? startNanos + TimeUnit.SECONDS.toNanos(queryTimeoutSeconds) : 0;
    }

    /** No limit but a cancel. */
    public static Limits none() {
        return new Limits(0, 0);
    }

    public long lockTimeoutMillis() {
        return lockTimeoutMillis;
    }

    /** The application cancels the statement: a wait in progress ends with 57014. */
    public void cancel() {
        cancelled = true;
        Runnable r = onCancel;
        if (r != null) {
            r.run();
        }
    }

    boolean cancelled() {
        return cancelled;
    }

    /** What cancels the wait in progress (a server statement's cancel, a wake-up), or null. */
    void whileWaiting(Runnable cancelAction) {
        onCancel = cancelAction;
        if (cancelAction != null && cancelled) {
            cancelAction.run();
        }
    }

    /** Nanoseconds a wait may last from now (at most {@code cap}); throws when a limit is reached. */
    long remainingNanos(long cap) throws SQLException {
        long now = System.nanoTime();
        long wait = cap;
        if (cancelled || Thread.currentThread().isInterrupted()) {
            throw cancelledException();
        }
        if (lockTimeoutMillis > 0) {
            long left = startNanos + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis) - now;
            if (left <= 0) {
                throw new SQLException(EmulateMessages.lockTimeout(lockTimeoutMillis), "55P03");
            }
            wait = Math.min(wait, left);
        }
        if (deadlineNanos != 0) {
            long left = deadlineNanos - now;
            if (left <= 0) {
                throw cancelledException();
            }
            wait = Math.min(wait, left);
        }
        return wait;
    }

    /** The lock timeout left, in milliseconds, for a server's lock_timeout (0: none; at least 1). */
    long lockTimeoutLeftMillis() {
        if (lockTimeoutMillis <= 0) {
            return 0;
        }
        long left = lockTimeoutMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        return Math.max(1, left);
    }

    /** The query timeout left, in whole seconds rounded up (0: none). */
    int queryTimeoutLeftSeconds() {
        if (deadlineNanos == 0) {
            return 0;
        }
        long left = deadlineNanos - System.nanoTime();
        return (int) Math.max(1, (left + 999_999_999L) / 1_000_000_000L);
    }

    static SQLException cancelledException() {
        return new SQLException(EmulateMessages.CANCELLED, "57014");
    }
}
