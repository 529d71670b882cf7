package io.lockhygiene.internal.holder;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

import io.lockhygiene.internal.emulate.EmulateMessages;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.settings.Settings;

/**
 * Places the process's lock holder for an application endpoint, once per endpoint and setting
 * ({@code lockhygiene.holderUrl}):
 * <ul>
 * <li>{@code auto} (the default): behind a pooler, the server's own address as the application's backend
 * reports it ({@code inet_server_addr()}, the {@code port} setting, the database), used when it answers
 * with the application's credentials and is the same database of the same cluster; otherwise the pooler,
 * said once at WARN with the arithmetic and the fix. Direct applications keep their route.</li>
 * <li>{@code pooler}: the application's own route (as before holderUrl existed).</li>
 * <li>a pgjdbc URL: checked at the first connection of the endpoint: it must answer, reach the same
 * database of the same cluster, and not be a transaction pooler; otherwise {@code connect()} fails with
 * a message that says which and what to do.</li>
 * </ul>
 * The same database of the same cluster: {@code pg_control_system().system_identifier} and the database's
 * oid, or, where the user may not read the control data, the postmaster's start time and the oid.
 */
public final class EndpointResolver {
    /** Seconds a probe of the server's own address may take before auto settles for the pooler. */
    static final int PROBE_TIMEOUT_SECONDS = 5;
    static final String APPLICATION_NAME = "lockhygiene lock holder";
    private static final ConcurrentHashMap<List<Object>, FutureTask<HolderEndpoint>> RESOLVED = new ConcurrentHashMap<>();

    private static final String IDENTITY = "SELECT pg_catalog.host(pg_catalog.inet_server_addr()),"
            + " pg_catalog.current_setting('port'), pg_catalog.current_database(),"
            + " CASE WHEN pg_catalog.has_function_privilege('pg_catalog.pg_control_system()', 'execute')"
            + " THEN (SELECT system_identifier::text FROM pg_catalog.pg_control_system()) END,"
            + " pg_catalog.pg_postmaster_start_time()::text,"
            + " (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())::text,"
            + " pg_catalog.pg_backend_pid()";

    private EndpointResolver() {
    }

    /**
     * The holder's endpoint for {@code route}, resolved at the endpoint's first connection ({@code app} is
     * that connection, raw, used for one query) and then remembered for the life of the process.
     *
     * @throws SQLException when an explicit {@code holderUrl} is unusable (said in the message)
     */
    public static HolderEndpoint resolve(HolderRoute route, Settings settings, Connection app) throws SQLException {
        List<Object> key = Arrays.asList(route.endpoint(), settings.holderUrl());
        FutureTask<HolderEndpoint> task = RESOLVED.get(key);
        if (task == null) {
            FutureTask<HolderEndpoint> mine = new FutureTask<>(() -> compute(route, settings.holderUrl(), app));
            task = RESOLVED.putIfAbsent(key, mine);
            if (task == null) {
                task = mine;
                mine.run();
            }
        }
        try {
            return task.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while placing the lock holder", "57014", e);
        } catch (ExecutionException e) {
            RESOLVED.remove(key, task); // a refused setting is refused again next time, with the same words
            Throwable cause = e.getCause();
            if (cause instanceof SQLException) {
                throw (SQLException) cause;
            }
            throw new SQLException("LockHygiene could not place the lock holder: " + cause, "08001", cause);
        }
    }

    /** Forgets every placement (tests start afresh). */
    public static void forgetAll() {
        RESOLVED.clear();
    }

    private static HolderEndpoint compute(HolderRoute route, String holderUrl, Connection app) throws SQLException {
        if (Settings.HOLDER_POOLER.equals(holderUrl)) {
            return applicationRoute(route, route.endpoint());
        }
        Identity appSide = identityOf(app);
        boolean appThroughPooler = Pgjdbc.backendPid(app) != appSide.pid;
        if (!Settings.HOLDER_AUTO.equals(holderUrl)) {
            return explicit(route, holderUrl, appSide);
        }
        if (!appThroughPooler && !route.borrowsFromApplicationPool()) {
            // a direct application: its own route is a session of its own already
            return new HolderEndpoint(HolderEndpoint.Kind.DIRECT, String.valueOf(route.endpoint()) + " (direct)",
                    appSide.identity(), route::openLikeApplication);
        }
        String reason;
        if (appSide.address == null) {
            reason = "is not known (the pooler reaches the server through a Unix socket)";
        } else if (route.applicationUrl() == null || route.applicationCredentials() == null) {
            reason = "cannot be used: the application's URL or credentials are not known here";
        } else {
            String direct = directUrl(route.applicationUrl(), appSide);
            Properties props = holderProperties(route.applicationCredentials(), true);
            try {
                Identity holderSide = probe(route, direct, props);
                if (holderSide.identity().equals(appSide.identity())) {
                    Log.info("{}", EmulateMessages.holderOnServer(route.endpoint(), appSide.address, appSide.port));
                    return new HolderEndpoint(HolderEndpoint.Kind.DIRECT, ConnectionUrl.redact(direct) + " (auto)",
                            appSide.identity(), () -> route.openUrl(direct, holderProperties(
                                    route.applicationCredentials(), false)));
                }
                reason = "answers for another database (" + holderSide.identity() + ", the application's is "
                        + appSide.identity() + ")";
            } catch (SQLException | RuntimeException e) {
                reason = "did not accept the holder's connection (" + e.getMessage() + ")";
            }
        }
        Log.warn("{}", EmulateMessages.holderThroughPooler(route.endpoint(),
                appSide.address == null ? null : appSide.address + ":" + appSide.port, reason));
        return applicationRoute(route, appSide.identity());
    }

    private static HolderEndpoint applicationRoute(HolderRoute route, Object identity) {
        return new HolderEndpoint(HolderEndpoint.Kind.APPLICATION_ROUTE, String.valueOf(route.endpoint())
                + (route.borrowsFromApplicationPool() ? " (borrowed from the application's pool)" : " (through the pooler)"),
                Arrays.asList(identity, route.endpoint()), route::openLikeApplication);
    }

    private static HolderEndpoint explicit(HolderRoute route, String url, Identity appSide) throws SQLException {
        String shown = ConnectionUrl.redact(url);
        Properties props = holderProperties(credentialsFor(url, route), false);
        Connection first;
        try {
            first = route.openUrl(url, props);
        } catch (SQLException e) {
            throw new SQLException(EmulateMessages.holderUrlUnreachable(shown, e.getMessage()), "08001", e);
        }
        if (first == null) {
            throw new SQLException(EmulateMessages.holderUrlNoDriver(shown), "HY024");
        }
        try {
            Identity holderSide = identityOf(first);
            if (!holderSide.identity().equals(appSide.identity())) {
                throw new SQLException(EmulateMessages.holderUrlOtherDatabase(shown, holderSide.identity(),
                        appSide.identity()), "HY024");
            }
            boolean pooler = Pgjdbc.backendPid(first) != holderSide.pid;
            if (pooler && transactionPooling(route, url, props, first)) {
                throw new SQLException(EmulateMessages.holderUrlTransactionPooler(shown), "HY024");
            }
            return new HolderEndpoint(pooler ? HolderEndpoint.Kind.SESSION_POOLER : HolderEndpoint.Kind.DIRECT, shown,
                    appSide.identity(), () -> route.openUrl(url, props));
        } finally {
            try {
                first.close();
            } catch (SQLException | RuntimeException ignored) {
                // a probe connection
            }
        }
    }

    /**
     * Whether the pooler behind {@code first} pools by transaction: a second connection takes a server in
     * a transaction; a session pooler keeps {@code first}'s backend for it, a transaction pooler gives
     * {@code first} another one (or, with LIFO reuse, the second gets {@code first}'s former server).
     */
    private static boolean transactionPooling(HolderRoute route, String url, Properties props, Connection first)
            throws SQLException {
        int before = backendPid(first);
        Connection second = route.openUrl(url, props);
        try {
            second.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_SECONDS * 1000);
            first.setNetworkTimeout(Runnable::run, PROBE_TIMEOUT_SECONDS * 1000);
            second.setAutoCommit(false);
            int other = backendPid(second);
            int after = backendPid(first);
            return after != before || other == before;
        } catch (SQLException e) {
            throw new SQLException(EmulateMessages.holderUrlPoolingUnknown(ConnectionUrl.redact(url),
                    PROBE_TIMEOUT_SECONDS, e.getMessage()), "HY024", e);
        } finally {
            try {
                second.close();
            } catch (SQLException | RuntimeException ignored) {
                // a probe connection
            }
        }
    }

    private static int backendPid(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_catalog.pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static Identity probe(HolderRoute route, String url, Properties props) throws SQLException {
        Connection c = route.openUrl(url, props);
        if (c == null) {
            throw new SQLException("no pgjdbc driver accepts " + ConnectionUrl.redact(url));
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

    /** The user and password named in the URL win; otherwise the application's own. */
    private static Properties credentialsFor(String url, HolderRoute route) {
        Properties p = new Properties();
        boolean urlHasUser = url.matches("(?i).*[?&]user=.*");
        Properties app = route.applicationCredentials();
        if (!urlHasUser && app != null) {
            p.putAll(app);
        }
        return p;
    }

    private static Properties holderProperties(Properties credentials, boolean probe) {
        Properties p = new Properties();
        if (credentials != null) {
            p.putAll(credentials);
        }
        p.setProperty("ApplicationName", APPLICATION_NAME);
        if (probe) {
            p.setProperty("connectTimeout", Integer.toString(PROBE_TIMEOUT_SECONDS));
            p.setProperty("loginTimeout", Integer.toString(PROBE_TIMEOUT_SECONDS));
        } else {
            p.setProperty("connectTimeout", "10");
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

    /** One query on {@code c}; leaves no transaction open that was not open before. */
    static Identity identityOf(Connection c) throws SQLException {
        boolean wasIdle = !Pgjdbc.inTransaction(c);
        boolean autoCommit = c.getAutoCommit();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(IDENTITY)) {
            rs.next();
            return new Identity(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                    rs.getString(6), rs.getInt(7));
        } finally {
            if (wasIdle && !autoCommit && Pgjdbc.inTransaction(c)) {
                c.rollback(); // we opened it: nothing of ours stays on the application's connection
            }
        }
    }
}
