package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ThreadLocalRandom;

import io.lockhygiene.internal.sql.ScanResult;

/**
 * A blocking session-level acquisition on a per-connection {@link LockHolder}, without pinning a server
 * while it waits: tried with a 1 ms {@code lock_timeout} inside a savepoint; between tries the holder
 * lets its server go (unless it holds other locks) and backs off, up to {@code lockhygiene.lockTimeout}.
 * Runs under the holder's {@code busy} lock.
 */
final class HolderBlockingAcquire {
    private final LockHolder holder;

    HolderBlockingAcquire(LockHolder holder) {
        this.holder = holder;
    }

    <R> R run(Connection c, ScanResult scan, LockHolder.HolderCall<R> call) throws SQLException {
        long start = System.nanoTime();
        long backoff = 2;
        while (true) {
            if (holder.shutDown) {
                throw new SQLException("This holder.connection has been closed.", "08003");
            }
            Pgjdbc.executeSimple(c, "SAVEPOINT lockhygiene_wait; SET LOCAL lock_timeout = '1ms'");
            try {
                R result = call.run();
                Pgjdbc.executeSimple(c, "RELEASE SAVEPOINT lockhygiene_wait; SET LOCAL lock_timeout TO DEFAULT;"
                        + " SET LOCAL idle_in_transaction_session_timeout = 0");
                holder.setHolding(true);
                if (releases(scan)) {
                    holder.settle(c); // the same statement also unlocked something
                }
                return result;
            } catch (SQLException e) {
                if (!LockHolder.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                    holder.recoverFrom(c, e, true, "lockhygiene_wait");
                    throw e;
                }
                try {
                    Pgjdbc.executeSimple(c, "ROLLBACK TO SAVEPOINT lockhygiene_wait");
                    if (!holder.holding) {
                        c.commit(); // wait without pinning a pooled server
                        holder.savepoints.reset();
                    }
                } catch (SQLException ours) {
                    e.addSuppressed(ours);
                    throw e;
                }
            }
            long waited = (System.nanoTime() - start) / 1_000_000;
            if (holder.lockTimeoutMillis > 0 && waited >= holder.lockTimeoutMillis) {
                throw new SQLException("LockHygiene (lockhygiene.mode=emulate): advisory lock not available after "
                        + waited + " ms (lockhygiene.lockTimeout=" + holder.lockTimeoutMillis + "ms)", LockHolder.LOCK_NOT_AVAILABLE);
            }
            sleep(backoff + ThreadLocalRandom.current().nextLong(backoff + 1));
            backoff = Math.min(backoff * 2, 50);
        }
    }

    private static boolean releases(ScanResult scan) {
        for (io.lockhygiene.internal.sql.AdvisoryCall c : scan.calls()) {
            if (c.function().isSessionLevel() && !c.function().isAcquire()) {
                return true;
            }
        }
        return false;
    }

    private static void sleep(long millis) throws SQLException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while waiting for an advisory lock", "57014", e);
        }
    }
}
