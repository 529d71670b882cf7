package io.lockhygiene.internal.placement;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.util.Urls;

/**
 * What the placement asks a server before a holder connects there: who answers on a connection (which
 * database of which cluster, where, and its backend), whether a pooler in front of it pools by transaction,
 * and the holder's connection properties. Every probe is bounded by {@link #PROBE_TIMEOUT_SECONDS}.
 */
final class ServerProbes {
    /** Seconds a probe of the server's own address may take before auto settles for the pooler. */
    static final int PROBE_TIMEOUT_SECONDS = 5;
    static final String APPLICATION_NAME = "lockhygiene lock holder";
    /** The short connections that check where a holder may connect: told apart from the holder's own sessions. */
    static final String PROBE_APPLICATION_NAME = APPLICATION_NAME + " (probe)";
    /** Seconds the probe waits for its second connection before it lets the first go and tries again. */
    static final int SECOND_CONNECTION_SECONDS = 2;

    /** The endpoint had no second connection for the probe now (its pool is taken): let go and try again later. */
    static final class PoolBusy extends SQLException {
        private static final long serialVersionUID = 1L;

        PoolBusy(String message, SQLException cause) {
            super(message, "53300", cause);
        }
    }

    private static final String IDENTITY = "SELECT pg_catalog.host(pg_catalog.inet_server_addr()),"
            + " pg_catalog.current_setting('port'), pg_catalog.current_database(),"
            + " CASE WHEN pg_catalog.has_function_privilege('pg_catalog.pg_control_system()', 'execute')"
            + " THEN (SELECT system_identifier::text FROM pg_catalog.pg_control_system()) END,"
            + " pg_catalog.pg_postmaster_start_time()::text,"
            + " (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())::text,"
            + " pg_catalog.pg_backend_pid()";

    private ServerProbes() {
    }

    /**
     * Whether the pooler behind {@code first} pools by transaction: a second connection takes a server in
     * a transaction; a session pooler keeps {@code first}'s backend for it, a transaction pooler gives
     * {@code first} another one (or, with LIFO reuse, the second gets {@code first}'s former server).
     */
    static boolean transactionPooling(HolderRoute.UrlOpener opener, String url, Properties props,
                                              Connection first) throws SQLException {
        int before = backendPid(first);
        // the second connection is waited for briefly: through a small session-mode entry, processes that each
        // hold a first connection and wait for a second would otherwise take every server and wait for each other
        Properties quick = new Properties();
        quick.putAll(props);
        quick.setProperty("loginTimeout", Integer.toString(SECOND_CONNECTION_SECONDS));
        Connection second;
        try {
            second = opener.open(url, quick);
        } catch (SQLException e) {
            throw new PoolBusy(EmulateMessages.holderPoolFull(Urls.redact(url), e.getMessage()), e);
        }
        try {
            second.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_SECONDS * 1000);
            first.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_SECONDS * 1000);
            second.setAutoCommit(false);
            int other = backendPid(second);
            int after = backendPid(first);
            return after != before || other == before;
        } catch (SQLException e) {
            if (io.lockhygiene.internal.holder.HolderEndpoint.poolFull(e)) {
                throw new SQLException(EmulateMessages.holderPoolFull(Urls.redact(url), e.getMessage()), "53300", e);
            }
            throw new SQLException(EmulateMessages.holderUrlPoolingUnknown(Urls.redact(url),
                    PROBE_TIMEOUT_SECONDS, e.getMessage()), "HY024", e);
        } finally {
            try {
                second.close();
            } catch (SQLException | RuntimeException ignored) {
                // a probe connection
            }
        }
    }

    static int backendPid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_catalog.pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    static Identity probe(HolderRoute.UrlOpener opener, String url, Properties props) throws SQLException {
        Connection c = opener.open(url, props);
        if (c == null) {
            throw new SQLException("no pgjdbc driver accepts " + Urls.redact(url));
        }
        try {
            c.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_SECONDS * 1000);
            return identityOf(c);
        } finally {
            try {
                c.close();
            } catch (SQLException | RuntimeException ignored) {
                // a probe connection
            }
        }
    }

    static Properties holderProperties(Properties credentials, boolean probe) {
        Properties p = new Properties();
        if (credentials != null) {
            p.putAll(credentials);
        }
        p.setProperty("ApplicationName", probe ? PROBE_APPLICATION_NAME : APPLICATION_NAME);
        if (probe) {
            p.setProperty("connectTimeout", Integer.toString(PROBE_TIMEOUT_SECONDS));
            p.setProperty("loginTimeout", Integer.toString(PROBE_TIMEOUT_SECONDS));
        } else {
            p.setProperty("connectTimeout", "10");
            p.setProperty("tcpKeepAlive", "true"); // the client's side; the server's is set by the session itself
        }
        return p;
    }

    /** {@code jdbc:postgresql://addr:port/database} with the application URL's query parameters. */
    static String directUrl(String applicationUrl, Identity server) {
        int q = applicationUrl.indexOf('?');
        String host = server.address.indexOf(':') >= 0 ? "[" + server.address + "]" : server.address;
        return "jdbc:postgresql://" + host + ":" + server.port + "/" + encode(server.database)
                + (q < 0 ? "" : applicationUrl.substring(q));
    }

    private static String encode(String database) {
        try {
            return java.net.URLEncoder.encode(database, "UTF-8").replace("+", "%20");
        } catch (java.io.UnsupportedEncodingException e) {
            return database;
        }
    }

    /** Who answers on a connection: where, which database of which cluster, and its backend. */
    static final class Identity {
        final String address;
        final String port;
        final String database;
        final String systemIdentifier;
        final String started;
        final String databaseOid;
        final int pid;

        Identity(String address, String port, String database, String systemIdentifier, String started,
                 String databaseOid, int pid) {
            this.address = address;
            this.port = port;
            this.database = database;
            this.systemIdentifier = systemIdentifier;
            this.started = started;
            this.databaseOid = databaseOid;
            this.pid = pid;
        }

        /** The same database of the same cluster compare equal. */
        String identity() {
            return (systemIdentifier != null ? "cluster " + systemIdentifier : "server started " + started)
                    + ", database " + database + " (oid " + databaseOid + ")";
        }
    }

    /**
     * True when {@code c} reaches its backend directly (the pid pgjdbc was announced is {@code pg_backend_pid()}):
     * one light query, where {@link #identityOf}'s catalog reads cost a fresh backend about 10 ms.
     */
    static boolean isDirect(Connection c) throws SQLException {
        boolean wasIdle = !Pgjdbc.inTransaction(c);
        boolean autoCommit = c.getAutoCommit();
        try {
            return backendPid(c) == Pgjdbc.backendPid(c);
        } finally {
            rollbackIfOurs(c, wasIdle, autoCommit);
        }
    }

    /** One query on {@code c}; leaves no transaction open that was not open before. */
    static Identity identityOf(Connection c) throws SQLException {
        boolean wasIdle = !Pgjdbc.inTransaction(c);
        boolean autoCommit = c.getAutoCommit();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(IDENTITY)) {
            rs.next();
            return new Identity(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                    rs.getString(6), rs.getInt(7));
        } finally {
            rollbackIfOurs(c, wasIdle, autoCommit);
        }
    }

    /** A query of ours opened a transaction on the application's connection (autocommit off): it is rolled back. */
    private static void rollbackIfOurs(Connection c, boolean wasIdle, boolean autoCommit) throws SQLException {
        if (wasIdle && !autoCommit && Pgjdbc.inTransaction(c)) {
            c.rollback(); // we opened it: nothing of ours stays on the application's connection
        }
    }
}
