package io.lockhygiene;

import java.io.PrintWriter;
import java.lang.ref.Cleaner;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;
import javax.sql.DataSource;

import io.lockhygiene.internal.placement.ConnectRecipe;
import io.lockhygiene.internal.placement.EndpointResolver;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.placement.PoolRoutes;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.placement.RawConnect;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.settings.LockHygieneProperty;
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
 * thread), and the process's lock holder opens connections of its own, never one of the wrapped pool's:
 * where to is learned from the pool's own configuration through its public API (HikariCP's
 * {@code HikariConfig}, DBCP2's {@code BasicDataSource}, pgjdbc's DataSources, any pool with
 * {@code getJdbcUrl}/{@code getUrl}, {@code getUsername} and {@code getPassword}), or from
 * {@link #connectsTo}. Only when nothing can be learned does it keep one connection of the pool, borrowed
 * before the application's first.
 *
 * <p>Nothing of ours keeps the wrapper alive: a wrapper that is dropped (or {@linkplain #close closed})
 * lets its lock holder go.
 */
public final class LockHygieneDataSource implements DataSource, AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create(r -> {
        Thread t = new Thread(r, "lockhygiene-datasource-cleaner");
        t.setDaemon(true);
        return t;
    });

    private final DataSource delegate;
    private final Settings settings;
    /** What the application said of how the pool connects ({@link #connectsTo}), or null. */
    private final AtomicReference<ConnectRecipe> told = new AtomicReference<>();
    /** The routes of this DataSource: getConnection() and one per user of getConnection(user, password). */
    private final PoolRoutes routes;
    private final Cleaner.Cleanable cleanable;

    public LockHygieneDataSource(DataSource delegate) {
        this(delegate, new Properties());
    }

    /** @param lockhygieneSettings {@code lockhygiene.*} keys, e.g. lockhygiene.mode=rewrite */
    public LockHygieneDataSource(DataSource delegate, Properties lockhygieneSettings) {
        this.delegate = delegate;
        Map<String, String> keys = new LinkedHashMap<>();
        for (String name : lockhygieneSettings.stringPropertyNames()) {
            if (!name.startsWith(LockHygieneProperty.PREFIX)) {
                throw new IllegalArgumentException("Not a LockHygiene setting: " + name);
            }
            keys.put(name, lockhygieneSettings.getProperty(name));
        }
        this.settings = SettingsReader.readForConnection(keys, System.getProperties(), System::getenv);
        this.routes = new PoolRoutes(delegate, told,
                (u, p) -> RawConnect.connect(LockHygieneDriver.pgjdbcFor(u), u, p));
        this.cleanable = CLEANER.register(this, routes);
    }

    public Settings settings() {
        return settings;
    }

    /**
     * Tells emulate's lock holder how the wrapped pool connects, for pools whose configuration it cannot read:
     * a {@code jdbc:postgresql:} URL and its user and password (kept for the holder's connections, never
     * logged). Tried before what the pool's configuration says. Call it before the first connection.
     *
     * @return this wrapper
     */
    public LockHygieneDataSource connectsTo(String jdbcUrl, String user, String password) {
        if (jdbcUrl == null || !jdbcUrl.startsWith("jdbc:postgresql:")) {
            throw new IllegalArgumentException("connectsTo needs a jdbc:postgresql: URL");
        }
        Properties p = new Properties();
        if (user != null) {
            p.setProperty("user", user);
        }
        if (password != null) {
            p.setProperty("password", password);
        }
        told.set(new ConnectRecipe(jdbcUrl, p, "what the application told (connectsTo)"));
        return this;
    }

    @Override
    public Connection getConnection() throws SQLException {
        PoolRoutes.PoolRoute route = routes.of(null, null);
        Connection first = place(route);
        return guard(first != null ? first : delegate.getConnection(), route);
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        PoolRoutes.PoolRoute route = routes.of(username, password);
        Connection first = place(route);
        return guard(first != null ? first : delegate.getConnection(username, password), route);
    }

    /**
     * emulate: the route's lock holder is placed before the application's first borrow is handed out, with
     * that borrow. So a holder that must share the pool keeps its connection from the start, taken while no
     * thread of ours keeps one, instead of later, when every connection may be held by threads that wait for
     * it. Returns the borrow when the application may have it (the holder did not keep it), else null.
     */
    private Connection place(PoolRoutes.PoolRoute route) throws SQLException {
        if (!LockPolicy.emulates(settings) || route.poolIsOurs() || EndpointResolver.placed(route, settings)
                || EndpointResolver.awaitPlacement(route, settings)) {
            return null;
        }
        Connection first = route.openLikeApplication();
        try {
            if (first.isWrapperFor(LockHygieneConnection.class)) {
                route.poolIsOurs(true); // the pool hands out the driver's connections: they place their holder
                return first;
            }
            if (EndpointResolver.withoutHolder(route, settings, first) != null) {
                return first; // the default on sessions of their own: no holder (the guard decides the same)
            }
            return EndpointResolver.place(route, settings, first) ? null : first;
        } catch (SQLException | RuntimeException e) {
            try {
                first.close();
            } catch (SQLException | RuntimeException ours) {
                e.addSuppressed(ours);
            }
            throw e;
        }
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
        return LockHygieneConnection.wrap(borrowed, settings, route);
    }

    /** The wrapped DataSource. */
    public DataSource getDelegate() {
        return delegate;
    }

    /**
     * Lets emulate's lock holder of this DataSource go (a holder shared with other DataSources stays for them)
     * and closes the wrapped DataSource when it can be closed (HikariCP, DBCP2): the wrapper stands for the
     * pool, as the frameworks that close a DataSource expect.
     */
    @Override
    public void close() throws SQLException {
        cleanable.clean();
        if (delegate instanceof AutoCloseable) {
            try {
                ((AutoCloseable) delegate).close();
            } catch (SQLException | RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new SQLException("closing " + delegate + " failed: " + e, e);
            }
        }
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
