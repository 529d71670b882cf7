package io.lockhygiene.internal.holder;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.internal.pgjdbc.Pgjdbc;

/**
 * A {@link HolderLink} over a raw pgjdbc connection: every statement with the simple query protocol (a
 * session idle after it holds no snapshot, so CREATE INDEX CONCURRENTLY and VACUUM never wait for a
 * holder), each bounded by a network timeout so that a blackholed server cannot hang the owners queued
 * behind it.
 */
public final class JdbcHolderLink implements HolderLink {
    /** Bounds every holder statement that does not wait for a lock. */
    static final int NETWORK_TIMEOUT_MILLIS = 30_000;

    private final Connection connection;
    private final int pid;
    private volatile Statement running;

    private JdbcHolderLink(Connection connection, int pid) {
        this.connection = connection;
        this.pid = pid;
    }

    /**
     * Wraps a freshly opened connection: autocommit as given, the network timeout set, its backend pid
     * read (one round trip). Closes it when any of that fails.
     */
    public static JdbcHolderLink of(Connection c, boolean autoCommit) throws SQLException {
        try {
            c.setAutoCommit(autoCommit);
            c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            int pid;
            try (Statement s = c.createStatement()) {
                Pgjdbc.executeSimple(s, "SELECT pg_catalog.pg_backend_pid()");
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    pid = rs.getInt(1);
                }
            }
            if (!autoCommit) {
                c.commit(); // the pid query must not leave the server pinned behind a transaction pooler
            }
            return new JdbcHolderLink(c, pid);
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException | RuntimeException ignored) {
                // the failure to report is the first one
            }
            throw e;
        }
    }

    @Override
    public String[] query(String sql, int columns) throws SQLException {
        return run(sql, columns, 0);
    }

    @Override
    public String[] await(String sql, int columns, int timeoutSeconds) throws SQLException {
        connection.setNetworkTimeout(Runnable::run, 0);
        try {
            return run(sql, columns, timeoutSeconds);
        } finally {
            if (!connection.isClosed()) {
                connection.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            }
        }
    }

    private String[] run(String sql, int columns, int timeoutSeconds) throws SQLException {
        try (Statement s = connection.createStatement()) {
            if (timeoutSeconds > 0) {
                s.setQueryTimeout(timeoutSeconds);
            }
            running = s;
            boolean rows = Pgjdbc.executeSimple(s, sql);
            String[] found = null;
            while (true) {
                if (rows) {
                    try (ResultSet rs = s.getResultSet()) {
                        if (found == null && rs.next()) {
                            found = new String[columns];
                            for (int i = 0; i < columns; i++) {
                                found[i] = rs.getString(i + 1);
                            }
                        }
                    }
                } else if (s.getUpdateCount() == -1) {
                    return found;
                }
                rows = s.getMoreResults();
            }
        } finally {
            running = null;
        }
    }

    @Override
    public java.util.List<String[]> rows(String sql, int columns) throws SQLException {
        java.util.List<String[]> out = new java.util.ArrayList<>();
        try (Statement s = connection.createStatement()) {
            running = s;
            Pgjdbc.executeSimple(s, sql);
            try (ResultSet rs = s.getResultSet()) {
                while (rs != null && rs.next()) {
                    String[] row = new String[columns];
                    for (int i = 0; i < columns; i++) {
                        row[i] = rs.getString(i + 1);
                    }
                    out.add(row);
                }
            }
        } finally {
            running = null;
        }
        return out;
    }

    @Override
    public void cancel() {
        Statement s = running;
        if (s != null) {
            try {
                s.cancel();
            } catch (SQLException | RuntimeException ignored) {
                // finished meanwhile, or the link is gone: either way nothing runs any more
            }
        }
    }

    @Override
    public int backendPid() {
        return pid;
    }

    @Override
    public void ping(long timeoutMillis) throws SQLException {
        connection.setNetworkTimeout(Runnable::run, (int) timeoutMillis);
        try {
            query("SELECT 1", 1);
        } finally {
            if (!connection.isClosed()) {
                connection.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            }
        }
    }

    @Override
    public boolean isClosed() {
        try {
            return connection.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (SQLException | RuntimeException ignored) {
            // already gone
        }
    }

    /** For the pooled mode's transaction end. */
    Connection connection() {
        return connection;
    }

    @Override
    public String toString() {
        return "holder backend " + pid;
    }
}
