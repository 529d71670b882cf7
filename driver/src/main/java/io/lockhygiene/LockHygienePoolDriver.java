package io.lockhygiene;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.Properties;
import java.util.logging.Logger;

import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.settings.ConnectionUrl;

/**
 * The driver for a connection pool that is given a driver class by name and the application's own
 * {@code jdbc:postgresql:} URL, and lends its connections to any thread: Agroal, which Quarkus uses
 * ({@code quarkus.datasource.jdbc.driver=io.lockhygiene.LockHygienePoolDriver}; the {@code lockhygiene-quarkus}
 * dependency sets it for you). Each connection is guarded as the {@code jdbc:lockhygiene:} driver guards its
 * own, with one difference: since the pool lends a connection to one thread after another, under emulate a
 * session lock belongs to the thread that took it, across borrows (as with {@link LockHygieneDataSource}), so
 * code that borrows for the lock and again for the unlock works. {@link #returned} is the pool's return: the
 * return check.
 *
 * <p>Never registered with {@code DriverManager} (no service entry, no static registration): plain URLs
 * anywhere else in the process stay pgjdbc's. Accepts {@code jdbc:postgresql:} and {@code jdbc:lockhygiene:postgresql:}
 * URLs; settings come from the URL, the connection Properties, system properties and the environment.
 */
public final class LockHygienePoolDriver implements Driver {
    private static final String PLAIN = "jdbc:postgresql:";

    @Override
    public boolean acceptsURL(String url) {
        return url != null && (url.startsWith(PLAIN) || ConnectionUrl.accepts(url));
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null;
        }
        return LockHygieneDriver.open(ConnectionUrl.parse(ours(url)), info, true);
    }

    /** {@code url} as our URL: a plain PostgreSQL URL gets our prefix. */
    private static String ours(String url) {
        return ConnectionUrl.accepts(url) ? url : ConnectionUrl.PREFIX + url.substring("jdbc:".length());
    }

    /**
     * The pool took {@code pooled} back from the application (a connection of this driver, or a pool's wrapper
     * of one): the return check runs (emulate lets a connection owner's locks go; detect and rewrite check
     * pg_locks for session locks left behind, per {@code lockhygiene.leakCheck}). Never throws: a pool's return
     * path must not fail because of us.
     */
    public static void returned(Connection pooled) {
        try {
            if (pooled != null && !pooled.isClosed() && pooled.isWrapperFor(LockHygieneConnection.class)) {
                pooled.unwrap(LockHygieneConnection.class).checkOnReturn();
            }
        } catch (SQLException | RuntimeException e) {
            io.lockhygiene.internal.log.Log.debug("LockHygiene: no return check for {}: {}", pooled, e.toString());
        }
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
        return new LockHygieneDriver().getPropertyInfo(ours(url), info);
    }

    @Override
    public int getMajorVersion() {
        return LockHygieneDriver.MAJOR_VERSION;
    }

    @Override
    public int getMinorVersion() {
        return LockHygieneDriver.MINOR_VERSION;
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getLogger("io.lockhygiene");
    }
}
