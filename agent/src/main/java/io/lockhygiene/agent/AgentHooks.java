package io.lockhygiene.agent;

import java.sql.Connection;
import java.sql.Driver;
import java.util.Properties;

import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.placement.RawConnect;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;

/**
 * What the advice inlined into pgjdbc and the pools calls. Public and static, loaded by the system class
 * loader with the agent jar, so any application class loader sees it. Nothing here may throw into the
 * service: the advice suppresses our failures and the service runs unprotected.
 */
public final class AgentHooks {
    private static volatile Settings settings;

    private AgentHooks() {
    }

    static void install(Settings s) {
        settings = s;
    }

    /** Exit of org.postgresql.Driver.connect: the connection the service gets. */
    public static Connection onConnect(Connection connection, Driver pgjdbc, String url, Properties info) {
        Settings s = settings;
        if (connection == null || s == null || io.lockhygiene.internal.policy.LockPolicy.off(s)
                || RawConnect.active()) {
            return connection; // a lock holder's, or the jdbc:lockhygiene: driver is wrapping it (once)
        }
        try {
            if (connection.isWrapperFor(LockHygieneConnection.class)) {
                return connection;
            }
            // Only emulate places a lock holder; other modes' connections never ask where they came from.
            HolderRoute holders = io.lockhygiene.internal.policy.LockPolicy.emulates(s) ? RawOpener.route(pgjdbc, url, info) : null;
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
     * thread, so under emulate a lock belongs to the thread that took it, across borrows. Asked under
     * emulate only (the stack trace costs a first connection a millisecond or two).
     */
    private static boolean openedByPool() {
        for (StackTraceElement f : new Throwable().getStackTrace()) { // a loop, not a stream: start-up cost
            if (f.getClassName().startsWith("com.zaxxer.hikari.") || f.getClassName().startsWith("org.apache.commons.dbcp2.")) {
                return true;
            }
        }
        return false;
    }

    /** Opens the lock holder's connection through pgjdbc, left raw. A class, not a lambda: start-up cost. */
    private static final class RawOpener implements HolderRoute.UrlOpener {
        private final Driver pgjdbc;

        RawOpener(Driver pgjdbc) {
            this.pgjdbc = pgjdbc;
        }

        /** emulate's route for a connection the service opened with {@code url} and {@code info}. */
        static HolderRoute route(Driver pgjdbc, String url, Properties info) {
            // here, not in AgentHooks: linking AgentHooks would load UrlOpener to check this assignment
            return HolderRoute.ofUrl(url, info, openedByPool(), new RawOpener(pgjdbc));
        }

        @Override
        public Connection open(String url, Properties props) throws java.sql.SQLException {
            return RawConnect.connect(pgjdbc, url, props);
        }
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
