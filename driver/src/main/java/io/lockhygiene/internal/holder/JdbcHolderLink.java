package io.lockhygiene.internal.holder;

import io.lockhygiene.internal.sql.Seals;
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
    /**
     * A dedicated session's own TCP settings on the server, so that the server frees a cut-off holder's locks
     * within {@code tcp_keepalives_idle + interval * count} (20 s) and a wait in its queue notices a gone
     * client within {@code client_connection_check_interval} after that: only those the server has (PostgreSQL
     * 14 added the last), set in the opening round trip.
     */
    static final String SERVER_SIDE_LIVENESS = "(SELECT count(pg_catalog.set_config(v.name, v.value, false)) FROM"
            + " (VALUES ('tcp_keepalives_idle', '5'), ('tcp_keepalives_interval', '5'), ('tcp_keepalives_count', '3'),"
            + " ('tcp_user_timeout', '20000'), ('client_connection_check_interval', '2000')) AS v(name, value)"
            + " JOIN pg_catalog.pg_settings s ON s.name = v.name)";

    private final Connection connection;
    private final int pid;
    private final int seal;
    private volatile Statement running;

    private final SealPlacement placement;

    private JdbcHolderLink(Connection connection, int pid, int seal, SealPlacement placement) {
        this.connection = connection;
        this.pid = pid;
        this.seal = seal;
        this.placement = placement;
    }

    /**
     * Wraps a freshly opened connection: autocommit as given, the network timeout set, its backend pid read;
     * a dedicated session also takes its seal and its server-side liveness settings, in the same round trip.
     * The endpoint's first session also asks where seals go ({@link SealPlacement}): through a pooler in the
     * same round trip, on a dedicated session in one before the seal's. Closes it when any of that fails.
     *
     * @param dedicated a session of its own (autocommit); otherwise a route through the application's pooler
     * @param placement where the endpoint's seals go, learned by its first session
     * @param endpoint what log messages name
     */
    public static JdbcHolderLink of(Connection c, boolean dedicated, SealPlacement placement, Object endpoint)
            throws SQLException {
        try {
            c.setAutoCommit(dedicated);
            c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            int pid = 0;
            int seal = 0;
            try (Statement s = c.createStatement()) {
                boolean liveness = false;
                if (!placement.learned() || !dedicated) {
                    pid = opening(s, c, "SELECT pg_catalog.pg_backend_pid()" + (dedicated ? ", " + SERVER_SIDE_LIVENESS
                            : ""), dedicated, placement, endpoint);
                    liveness = dedicated;
                }
                for (int attempt = 0; dedicated && seal == 0; attempt++) {
                    int candidate = placement.fresh();
                    Pgjdbc.executeSimple(s, "SELECT pg_catalog.pg_backend_pid(), " + Seals.take(candidate) + "::text"
                            + (liveness || attempt > 0 ? "" : ", " + SERVER_SIDE_LIVENESS));
                    try (ResultSet rs = s.getResultSet()) {
                        rs.next();
                        pid = rs.getInt(1);
                        seal = "true".equals(rs.getString(2)) ? candidate : 0; // taken by another session: again
                    }
                }
            }
            if (!dedicated) {
                c.commit(); // the pid query must not leave the server pinned behind a transaction pooler
            }
            return new JdbcHolderLink(c, pid, seal, placement);
        } catch (SQLException | RuntimeException e) {
            try {
                c.close();
            } catch (SQLException | RuntimeException ignored) {
                // the failure to report is the first one
            }
            throw e;
        }
    }

    /**
     * Runs the opening {@code SELECT} (the pid first) and returns the pid; the endpoint's first session asks where
     * seals go in the same round trip. A server that cannot answer that (a PostgreSQL-compatible one without
     * hashtext) gets seals anywhere, said once, and the opening runs as before.
     */
    private static int opening(Statement s, Connection c, String select, boolean dedicated, SealPlacement placement,
                               Object endpoint) throws SQLException {
        if (!placement.learned()) {
            try {
                Pgjdbc.executeSimple(s, select + ", " + Seals.PLACEMENT_COLUMNS);
                try (ResultSet rs = s.getResultSet()) {
                    rs.next();
                    int at = dedicated ? 3 : 2; // after the pid and, on a dedicated session, the liveness count
                    placement.learn(rs.getString(at), rs.getString(at + 1), endpoint);
                    return rs.getInt(1);
                }
            } catch (SQLException e) {
                if (e.getSQLState() != null && e.getSQLState().startsWith("08")) {
                    throw e; // the connection is gone, not the question
                }
                if (!dedicated) {
                    c.rollback(); // the failed question aborted the route's transaction
                }
                placement.cannotLearn(e.getMessage(), endpoint);
            }
        }
        Pgjdbc.executeSimple(s, select);
        try (ResultSet rs = s.getResultSet()) {
            rs.next();
            return rs.getInt(1);
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
    public int seal() {
        return seal;
    }

    @Override
    public int newSeal() {
        return placement.fresh();
    }

    @Override
    public void peek() throws SQLException {
        connection.unwrap(org.postgresql.PGConnection.class).getNotifications(); // no round trip: reads what came
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
            if (running != null) {
                connection.abort(Runnable::run); // a statement waits on it (maybe on a dead socket): no waiting for it
            } else {
                connection.close();
            }
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
