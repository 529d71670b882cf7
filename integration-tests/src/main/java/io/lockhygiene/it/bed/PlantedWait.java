package io.lockhygiene.it.bed;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A real advisory wait on the direct route: one backend holds a session lock, another waits for it in a
 * thread of its own. Closing it unlocks, lets the waiter take and release the lock, and closes both.
 */
public final class PlantedWait implements AutoCloseable {
    private final Connection holder;
    private final Connection waiter;
    private final String keyArguments;
    private final Thread blocked;
    public final int holderPid;
    public final int waiterPid;

    /**
     * @param keyArguments the lock's arguments as SQL ({@code 980001} or {@code 4711, 9})
     * @param comment appended to the waiter's statement (shows in pg_stat_activity), or empty
     */
    public PlantedWait(TestBed bed, String keyArguments, String comment) throws SQLException {
        this.keyArguments = keyArguments;
        this.holder = bed.connect(Route.DIRECT);
        this.waiter = bed.connect(Route.DIRECT);
        this.holderPid = pid(holder);
        this.waiterPid = pid(waiter);
        try (Statement h = holder.createStatement()) {
            h.execute("SELECT pg_advisory_lock(" + keyArguments + ")");
        }
        this.blocked = new Thread(() -> {
            try (Statement w = waiter.createStatement()) {
                w.execute("SELECT pg_advisory_lock(" + keyArguments + ")" + comment);
                w.execute("SELECT pg_advisory_unlock(" + keyArguments + ")");
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }, "planted-waiter");
        blocked.start();
    }

    /** The holder lets go; the waiter gets the lock and lets go too (within 10 s). */
    public void release() throws SQLException, InterruptedException {
        try (Statement h = holder.createStatement()) {
            h.execute("SELECT pg_advisory_unlock(" + keyArguments + ")");
        }
        blocked.join(10_000);
    }

    @Override
    public void close() throws SQLException, InterruptedException {
        try {
            if (blocked.isAlive()) {
                release();
            }
        } finally {
            holder.close();
            waiter.close();
        }
    }

    private static int pid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
