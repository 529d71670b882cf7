package io.lockhygiene.agent;

import java.sql.Connection;
import java.sql.Driver;
import java.util.Properties;

import io.lockhygiene.LockHygieneDriver;
import io.lockhygiene.internal.holder.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;

/**
 * What the advice inlined into pgjdbc and the pools calls. Public and static, loaded by the system class
 * loader with the agent jar, so any application class loader sees it. Nothing here may throw into the
 * service: the advice suppresses our failures and the service runs unprotected.
 */
public final class AgentHooks {
    private static volatile Settings settings;
    /** Set while the agent opens a lock holder: that connection must stay raw. */
    private static final ThreadLocal<Boolean> OPENING_HOLDER = new ThreadLocal<>();

    private AgentHooks() {
    }

    static void install(Settings s) {
        settings = s;
    }

    /** Exit of org.postgresql.Driver.connect: the connection the service gets. */
    public static Connection onConnect(Connection connection, Driver pgjdbc, String url, Properties info) {
        Settings s = settings;
        if (connection == null || s == null || io.lockhygiene.internal.policy.LockPolicy.off(s)
                || OPENING_HOLDER.get() != null || LockHygieneDriver.isConnecting()) {
            return connection; // not ours, or the jdbc:lockhygiene: driver is wrapping it (once)
        }
        try {
            if (connection.isWrapperFor(LockHygieneConnection.class)) {
                return connection;
            }
            String endpoint = io.lockhygiene.internal.settings.ConnectionUrl.redact(url) + " (user "
                    + (info == null ? null : info.getProperty("user")) + ")";
            HolderRoute holders = HolderRoute.ofUrl(endpoint, url, info, openedByPool(), (u, p) -> {
                OPENING_HOLDER.set(Boolean.TRUE);
                try {
                    return pgjdbc.connect(u, p);
                } finally {
                    OPENING_HOLDER.remove();
                }
            });
            Connection castable = PgConnectionSubclass.wrap(connection, s, holders);
            return castable != null ? castable : LockHygieneConnection.wrap(connection, s, holders);
        } catch (java.sql.SQLException e) {
            if ("HY024".equals(e.getSQLState()) || "08001".equals(e.getSQLState())) {
                // a setting that cannot work as configured (lockhygiene.holderUrl): said loudly, the service runs
                Log.error("LockHygiene agent could not guard a pgjdbc connection as configured; it runs unprotected: {}",
                        e.getMessage());
            } else {
                Log.warn("LockHygiene agent could not guard a pgjdbc connection ({}); it runs unprotected", e.toString());
            }
            return connection;
        } catch (Exception | LinkageError e) {
            Log.warn("LockHygiene agent could not guard a pgjdbc connection ({}); it runs unprotected", e.toString());
            return connection;
        }
    }

    /**
     * True when a connection pool (HikariCP, DBCP2) is opening this connection: it will be lent to any
     * thread, so under emulate a lock belongs to the thread that took it, across borrows.
     */
    private static boolean openedByPool() {
        return java.util.Arrays.stream(new Throwable().getStackTrace()).anyMatch(f ->
                f.getClassName().startsWith("com.zaxxer.hikari.") || f.getClassName().startsWith("org.apache.commons.dbcp2."));
    }

    /** Enter of a pool's close() of a borrowed connection: the return event. */
    public static void onPoolReturn(Connection pooled) {
        try {
            if (pooled != null && !pooled.isClosed() && pooled.isWrapperFor(LockHygieneConnection.class)) {
                pooled.unwrap(LockHygieneConnection.class).checkOnReturn();
            }
        } catch (Exception | LinkageError e) {
            Log.debug("LockHygiene agent: no return check for {}: {}", pooled, e.toString());
        }
    }
}
