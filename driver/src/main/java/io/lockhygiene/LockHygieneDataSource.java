package io.lockhygiene;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

import io.lockhygiene.internal.holder.HolderRoute;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.settings.Setting;
import io.lockhygiene.settings.Settings;

/**
 * Wraps any DataSource of pgjdbc connections (a HikariCP pool, a {@code PGSimpleDataSource}) so that
 * every borrowed connection is guarded and its {@code close()} (the return to the pool) runs the
 * return leak check. Settings come from the given Properties, then system properties and environment
 * variables, as for the driver.
 *
 * <pre>DataSource ds = new LockHygieneDataSource(hikariDataSource);</pre>
 *
 * <p>Under emulate, locks belong to the thread that took them (a pool lends its connections to any
 * thread), and the process's lock holder connects on its own (the server's own address, or
 * {@code lockhygiene.holderUrl}) with the pool's URL and credentials, read from the wrapped DataSource's
 * {@code getUser()}/{@code getUsername()} and {@code getPassword()}; it borrows from the wrapped pool only when
 * it cannot.
 */
public final class LockHygieneDataSource implements DataSource {
    private final DataSource delegate;
    private final Settings settings;
    /** The wrapped pool's pgjdbc URL, read from its first connection (for the lock holder). */
    private volatile String url;

    public LockHygieneDataSource(DataSource delegate) {
        this(delegate, new Properties());
    }

    /** @param lockhygieneSettings {@code lockhygiene.*} keys, e.g. lockhygiene.mode=rewrite */
    public LockHygieneDataSource(DataSource delegate, Properties lockhygieneSettings) {
        this.delegate = delegate;
        Map<String, String> keys = new LinkedHashMap<>();
        for (String name : lockhygieneSettings.stringPropertyNames()) {
            if (!name.startsWith(Setting.PREFIX)) {
                throw new IllegalArgumentException("Not a LockHygiene setting: " + name);
            }
            keys.put(name, lockhygieneSettings.getProperty(name));
        }
        this.settings = SettingsReader.readForConnection(keys, System.getProperties(), System::getenv);
    }

    public Settings settings() {
        return settings;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return guard(delegate.getConnection(), route(this, null, null));
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return guard(delegate.getConnection(username, password), route(java.util.Arrays.asList(this, username),
                username, password));
    }

    private HolderRoute route(Object endpoint, String user, String password) {
        LockHygieneDataSource self = this;
        return new HolderRoute() {
            @Override
            public Object endpoint() {
                return endpoint;
            }

            @Override
            public Connection openLikeApplication() throws SQLException {
                return user == null ? delegate.getConnection() : delegate.getConnection(user, password);
            }

            @Override
            public boolean borrowsFromApplicationPool() {
                return true;
            }

            @Override
            public boolean threadOwners() {
                return true;
            }

            @Override
            public Connection openUrl(String u, Properties props) throws SQLException {
                return LockHygieneDriver.pgjdbcFor(u).connect(u, props);
            }

            @Override
            public String applicationUrl() {
                return url;
            }

            @Override
            public Properties applicationCredentials() {
                String u = user != null ? user : property("getUser", "getUsername");
                String p = user != null ? password : property("getPassword");
                if (u == null || p == null) {
                    return null;
                }
                Properties props = new Properties();
                props.setProperty("user", u);
                props.setProperty("password", p);
                return props;
            }

            @Override
            public String toString() {
                return String.valueOf(self);
            }
        };
    }

    /** A String bean property of the wrapped DataSource (HikariCP, PGSimpleDataSource, DBCP2 name them so), or null. */
    private String property(String... getters) {
        for (String name : getters) {
            try {
                Method m = delegate.getClass().getMethod(name);
                Object v = m.invoke(delegate);
                if (v instanceof String) {
                    return (String) v;
                }
            } catch (ReflectiveOperationException | RuntimeException | LinkageError ignored) {
                // not this DataSource's property
            }
        }
        return null;
    }

    /**
     * @param route emulate's lock holder connects from this route; locks belong to threads, as in a pool
     */
    private Connection guard(Connection borrowed, HolderRoute route) throws SQLException {
        if (LockPolicy.off(settings)) {
            return borrowed;
        }
        if (borrowed.isWrapperFor(LockHygieneConnection.class)) {
            // The pool already hands out our connections (jdbc:lockhygiene: URL): statements are guarded
            // once, there; we only add the return event the inner connection cannot see.
            LockHygieneConnection inner = borrowed.unwrap(LockHygieneConnection.class);
            return (Connection) Proxy.newProxyInstance(LockHygieneDataSource.class.getClassLoader(),
                    new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                        if ("close".equals(method.getName()) && method.getParameterCount() == 0) {
                            inner.checkOnReturn();
                        }
                        try {
                            return method.invoke(borrowed, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
        if (url == null) {
            try {
                url = borrowed.getMetaData().getURL();
            } catch (SQLException | RuntimeException e) {
                url = null; // the holder then goes through the pool
            }
        }
        return LockHygieneConnection.wrap(borrowed, settings, route);
    }

    /** The wrapped DataSource. */
    public DataSource getDelegate() {
        return delegate;
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || delegate.isWrapperFor(iface);
    }

    @Override
    public String toString() {
        return "LockHygieneDataSource[" + delegate + "]";
    }
}
