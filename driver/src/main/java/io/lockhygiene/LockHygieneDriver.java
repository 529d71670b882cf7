package io.lockhygiene;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.Properties;
import java.util.logging.Logger;

import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.placement.RawConnect;
import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.settings.LockHygieneProperty;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.util.Urls;

/**
 * The JDBC driver for {@code jdbc:lockhygiene:postgresql:} URLs; for Spring Boot's
 * {@code spring.datasource.driver-class-name} use {@code io.lockhygiene.LockHygieneDriver}. It strips
 * the leading {@code lockhygiene:} and our own parameters and hands the rest to pgjdbc, found through
 * DriverManager (the application's own pgjdbc, never a copy of ours).
 */
public final class LockHygieneDriver implements Driver {
    /** The version both of our drivers report (this one and {@link LockHygienePoolDriver}). */
    static final int MAJOR_VERSION = 0;
    static final int MINOR_VERSION = 1;

    static {
        try {
            DriverManager.registerDriver(new LockHygieneDriver());
        } catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Override
    public boolean acceptsURL(String url) {
        return ConnectionUrl.accepts(url);
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!acceptsURL(url)) {
            return null; // the DriverManager contract: not ours
        }
        return open(ConnectionUrl.parse(url), info, false);
    }

    /**
     * Opens and guards a connection to {@code parsed}'s target; {@code threadOwners}: a pool opens it and lends
     * it to any thread, so under emulate a lock belongs to the thread that took it, across borrows.
     */
    static Connection open(ConnectionUrl parsed, Properties info, boolean threadOwners) throws SQLException {
        Settings settings = settings(parsed, info);
        Driver pgjdbc = pgjdbcFor(parsed.targetUrl());
        Properties pgProps = ConnectionUrl.withoutOurKeys(info);
        Connection raw = RawConnect.connect(pgjdbc, parsed.targetUrl(), pgProps); // the agent leaves the wrapping to us
        if (raw == null) {
            throw new SQLException("pgjdbc did not accept " + Urls.redact(parsed.targetUrl()), "08001");
        }
        if (io.lockhygiene.internal.policy.LockPolicy.off(settings)) {
            return raw;
        }
        // emulate's lock holder: one per process and database, placed from where this connection goes
        return LockHygieneConnection.wrap(raw, settings, HolderRoute.ofUrl(parsed.targetUrl(), pgProps, threadOwners,
                (u, p) -> RawConnect.connect(pgjdbcFor(u), u, p))); // a holder stays raw, also under the agent
    }

    static Settings settings(ConnectionUrl parsed, Properties info) throws SQLException {
        try {
            return SettingsReader.readForConnection(parsed.ourKeys(info), System.getProperties(), System::getenv);
        } catch (IllegalArgumentException e) {
            throw new SQLException(e.getMessage(), "HY024", e);
        }
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
        ConnectionUrl parsed = ConnectionUrl.parse(url);
        List<DriverPropertyInfo> all = new ArrayList<>(Arrays.asList(
                pgjdbcFor(parsed.targetUrl()).getPropertyInfo(parsed.targetUrl(), ConnectionUrl.withoutOurKeys(info))));
        for (LockHygieneProperty s : LockHygieneProperty.values()) {
            String given = parsed.ourKeys(info).get(s.key());
            DriverPropertyInfo p = new DriverPropertyInfo(s.key(), given != null ? given : s.defaultValue());
            p.description = s.description();
            p.choices = s.allowedValues();
            all.add(p);
        }
        return all.toArray(new DriverPropertyInfo[0]);
    }

    /** pgjdbc's registered driver for the stripped URL; loads it once if nobody has yet. */
    static Driver pgjdbcFor(String targetUrl) throws SQLException {
        Driver d = registeredFor(targetUrl);
        if (d == null) {
            for (ClassLoader cl : new ClassLoader[] {Thread.currentThread().getContextClassLoader(),
                    LockHygieneDriver.class.getClassLoader()}) {
                try {
                    Class.forName("org.postgresql.Driver", true, cl);
                    break;
                } catch (ClassNotFoundException | LinkageError ignored) {
                    // try the next loader
                }
            }
            d = registeredFor(targetUrl);
        }
        if (d == null) {
            throw new SQLException("No JDBC driver accepts " + Urls.redact(targetUrl)
                    + ": LockHygiene wraps pgjdbc and needs org.postgresql:postgresql on the classpath", "08001");
        }
        return d;
    }

    private static Driver registeredFor(String targetUrl) {
        Enumeration<Driver> drivers = DriverManager.getDrivers();
        while (drivers.hasMoreElements()) {
            Driver d = drivers.nextElement();
            try {
                if (!(d instanceof LockHygieneDriver) && d.acceptsURL(targetUrl)) {
                    return d;
                }
            } catch (SQLException ignored) {
                // a driver that cannot answer is not the one
            }
        }
        return null;
    }

    @Override
    public int getMajorVersion() {
        return MAJOR_VERSION;
    }

    @Override
    public int getMinorVersion() {
        return MINOR_VERSION;
    }

    @Override
    public boolean jdbcCompliant() {
        return false; // we are as compliant as the pgjdbc underneath; we claim nothing of our own
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getLogger("io.lockhygiene");
    }
}
