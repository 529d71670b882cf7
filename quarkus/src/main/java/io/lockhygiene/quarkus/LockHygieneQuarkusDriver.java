package io.lockhygiene.quarkus;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import java.util.logging.Logger;

import io.lockhygiene.LockHygienePoolDriver;
import io.lockhygiene.settings.LockHygieneProperty;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The driver Agroal is given for the default datasource ({@code META-INF/microprofile-config.properties} of this
 * jar names it in {@code quarkus.datasource.jdbc.driver}; the application's own setting wins): a PostgreSQL URL
 * goes to {@link LockHygienePoolDriver} (a lock belongs to the thread that took it, across borrows), with the
 * {@code lockhygiene.*} keys of the application's configuration (application.properties, and above it system
 * properties and the environment, as MicroProfile Config orders them) under the datasource's own
 * {@code additional-jdbc-properties}. Any other URL goes to the driver DriverManager has for it, untouched.
 */
public final class LockHygieneQuarkusDriver implements Driver {
    private final LockHygienePoolDriver guarded = new LockHygienePoolDriver();

    @Override
    public boolean acceptsURL(String url) {
        if (guarded.acceptsURL(url)) {
            return true;
        }
        try {
            return DriverManager.getDriver(url) != null;
        } catch (SQLException noDriver) {
            return false; // the Driver contract: false, not an exception, for a URL nobody takes
        }
    }

    @Override
    public Connection connect(String url, Properties info) throws SQLException {
        if (!guarded.acceptsURL(url)) {
            return DriverManager.getDriver(url).connect(url, info); // not PostgreSQL: not ours to guard
        }
        return guarded.connect(url, withConfiguredKeys(info));
    }

    /**
     * {@code info} with each connection-level {@code lockhygiene.*} key the configuration has and {@code info}
     * lacks. JVM-wide keys (the report file, the exit status) stay with system properties and the environment,
     * where the driver reads them itself.
     */
    static Properties withConfiguredKeys(Properties info) {
        Properties merged = new Properties();
        if (info != null) {
            merged.putAll(info);
        }
        Config config = ConfigProvider.getConfig();
        for (LockHygieneProperty s : LockHygieneProperty.values()) {
            if (s.isJvmWide() || merged.getProperty(s.key()) != null) {
                continue;
            }
            Optional<String> v = config.getOptionalValue(s.key(), String.class);
            v.ifPresent(value -> merged.setProperty(s.key(), value));
        }
        return merged;
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
        return guarded.acceptsURL(url) ? guarded.getPropertyInfo(url, info) : DriverManager.getDriver(url).getPropertyInfo(url, info);
    }

    @Override
    public int getMajorVersion() {
        return guarded.getMajorVersion();
    }

    @Override
    public int getMinorVersion() {
        return guarded.getMinorVersion();
    }

    @Override
    public boolean jdbcCompliant() {
        return false;
    }

    @Override
    public Logger getParentLogger() {
        return guarded.getParentLogger();
    }
}
