package io.lockhygiene;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

import io.lockhygiene.internal.jdbc.HolderFactory;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
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
 */
public final class LockHygieneDataSource implements DataSource {
    private final DataSource delegate;
    private final Settings settings;
    /** emulate: whether the wrapped pool lends the driver's own connections; null until the first borrow. */
    private volatile Boolean innerGuarded;

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
        return borrow(HolderFactory.of(this, true, delegate::getConnection));
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return borrow(HolderFactory.of(java.util.Arrays.asList(this, username), true,
                () -> delegate.getConnection(username, password)));
    }

    /**
     * emulate: the holder's connection is reserved from the wrapped pool before the application's borrow
     * (see LockHygieneConnection#reserveHolder), unless the pool lends the driver's own connections, which
     * bring their own holder: the first borrow tells, and is given back before any reservation, so that
     * nothing is held while the holder waits for the pool.
     */
    private Connection borrow(HolderFactory holders) throws SQLException {
        if (settings.mode() == Settings.Mode.EMULATE && innerGuarded == null) {
            Connection first = holders.open();
            boolean inner = first.isWrapperFor(LockHygieneConnection.class);
            innerGuarded = inner;
            if (inner) {
                return guard(first, holders);
            }
            first.close();
        }
        if (!Boolean.TRUE.equals(innerGuarded)) {
            LockHygieneConnection.reserveHolder(settings, holders);
        }
        return guard(holders.open(), holders);
    }

    /**
     * @param holders emulate's lock holder borrows from the same DataSource, one connection while it holds
     *                anything (a pool needs room for it); its owners are threads, as in a pool
     */
    private Connection guard(Connection borrowed, HolderFactory holders) throws SQLException {
        if (settings.mode() == Settings.Mode.OFF) {
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
        return LockHygieneConnection.wrap(borrowed, settings, holders);
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
