package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * A local owner's wait for an advisory lock, bounded as PostgreSQL bounds a waiting statement: by
 * {@code lockhygiene.lockTimeout} (55P03), the query timeout (57014), or an interrupt (57014).
 */
final class LocalWait {
    private LocalWait() {
    }

    /** Waits (the condition's lock let go) for a release or a retry, within the statement's limits. Caller holds the lock. */
    static void awaitUntil(Condition released, long millis, long start, long lockTimeoutMillis, long deadlineNanos)
            throws SQLException {
        long now = System.nanoTime();
        long wait = TimeUnit.MILLISECONDS.toNanos(millis);
        if (lockTimeoutMillis > 0) {
            long left = start + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis) - now;
            if (left <= 0) {
                throw new SQLException("canceling statement due to lock timeout (LockHygiene, lockhygiene.mode=emulate:"
                        + " advisory lock not available within lockhygiene.lockTimeout=" + lockTimeoutMillis + "ms)",
                        "55P03");
            }
            wait = Math.min(wait, left);
        }
        if (deadlineNanos != 0) {
            long left = deadlineNanos - now;
            if (left <= 0) {
                throw new SQLException("canceling statement due to user request", "57014");
            }
            wait = Math.min(wait, left);
        }
        try {
            released.awaitNanos(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("canceling statement due to user request (interrupted while waiting for an"
                    + " advisory lock)", "57014", e);
        }
    }
}
