package io.lockhygiene.internal.placement;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import javax.sql.DataSource;

import org.postgresql.ds.common.BaseDataSource;

/**
 * Where a wrapped DataSource connects, as its own public API says, so that emulate's lock holder can open
 * connections of its own instead of borrowing the pool's. Tried in this order; each gives a recipe only
 * when it names a {@code jdbc:postgresql:} URL:
 * <ol>
 * <li>pgjdbc's own DataSources ({@code PGSimpleDataSource}, {@code PGConnectionPoolDataSource}), also inside a
 * pool that unwraps to one (HikariCP with {@code dataSourceClassName} or {@code setDataSource}):
 * {@code getUrl()}, {@code getUser()}, {@code getPassword()};</li>
 * <li>a pool's bean getters: {@code getJdbcUrl()} or {@code getUrl()}, {@code getUsername()} or {@code getUser()},
 * {@code getPassword()}; HikariCP's {@code getDataSourceProperties()} and credentials provider; DBCP2's
 * {@code BasicDataSource}, Tomcat's pool and Spring's {@code SimpleDriverDataSource} have the same names.</li>
 * </ol>
 * Only public methods of public types are called (no field is read); a getter that throws is skipped.
 * What no getter shows (DBCP2's connection properties) is not known.
 */
public final class PoolConfig {
    private PoolConfig() {
    }

    /** The recipes {@code ds} tells, best first (often one, sometimes none). */
    public static List<ConnectRecipe> of(DataSource ds) {
        List<ConnectRecipe> out = new ArrayList<>(1);
        ConnectRecipe pgjdbc = pgjdbcDataSource(ds);
        if (pgjdbc != null) {
            out.add(pgjdbc); // the most exact; its own bean getters would say the same again
            return out;
        }
        ConnectRecipe pool = beanGetters(ds);
        if (pool != null) {
            out.add(pool);
        }
        return out;
    }

    /**
     * The application's first connection's own URL and user, without a password: enough where the server
     * trusts the client or pgjdbc finds a password file (or the URL carries the password).
     */
    public static ConnectRecipe ofConnection(Connection c) {
        try {
            DatabaseMetaData md = c.getMetaData();
            String url = md.getURL();
            if (url == null || !url.startsWith("jdbc:postgresql:")) {
                return null;
            }
            Properties p = new Properties();
            if (md.getUserName() != null) {
                p.setProperty("user", md.getUserName());
            }
            return new ConnectRecipe(url, p, "the connection's own URL and user, without a password");
        } catch (SQLException | RuntimeException e) {
            return null;
        }
    }

    private static ConnectRecipe pgjdbcDataSource(DataSource ds) {
        BaseDataSource pg;
        try {
            if (ds instanceof BaseDataSource) {
                pg = (BaseDataSource) ds;
            } else if (ds.isWrapperFor(BaseDataSource.class)) {
                pg = ds.unwrap(BaseDataSource.class);
            } else {
                return null;
            }
        } catch (SQLException | RuntimeException | LinkageError e) {
            return null;
        }
        String url;
        try {
            url = pg.getUrl();
        } catch (RuntimeException e) {
            return null;
        }
        Properties p = new Properties();
        putIfSet(p, "user", pg.getUser());
        putIfSet(p, "password", pg.getPassword());
        return new ConnectRecipe(url, p, "pgjdbc's " + pg.getClass().getSimpleName()
                + (pg == ds ? "" : " inside " + ds.getClass().getSimpleName()));
    }

    private static ConnectRecipe beanGetters(DataSource ds) {
        String url = string(ds, "getJdbcUrl", "getUrl", "getURL");
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            return null;
        }
        Properties p = new Properties();
        Object dsProps = call(ds, "getDataSourceProperties"); // HikariCP: what it hands pgjdbc with the URL
        if (dsProps instanceof Properties) {
            Properties given = (Properties) dsProps;
            for (String k : given.stringPropertyNames()) {
                p.setProperty(k, given.getProperty(k));
            }
        }
        Object credentials = null;
        Object provider = call(ds, "getCredentialsProvider"); // HikariCP 6+: a provider, when one is set, wins
        if (provider != null) {
            credentials = call(provider, "getCredentials");
        }
        if (credentials != null) {
            putIfSet(p, "user", string(credentials, "getUsername"));
            putIfSet(p, "password", string(credentials, "getPassword"));
        } else {
            putIfSet(p, "user", string(ds, "getUsername", "getUser", "getUserName"));
            putIfSet(p, "password", string(ds, "getPassword"));
        }
        return new ConnectRecipe(url, p, describe(ds));
    }

    private static String describe(DataSource ds) {
        String name = ds.getClass().getName();
        if (name.startsWith("com.zaxxer.hikari.")) {
            return "HikariCP's configuration";
        }
        if (name.startsWith("org.apache.commons.dbcp2.")) {
            return "DBCP2's " + ds.getClass().getSimpleName();
        }
        return ds.getClass().getSimpleName() + "'s getters";
    }

    private static void putIfSet(Properties p, String key, String value) {
        if (value != null) {
            p.setProperty(key, value);
        }
    }

    /** The first of the named public no-argument getters that returns a String. */
    private static String string(Object target, String... getters) {
        for (String g : getters) {
            Object v = call(target, g);
            if (v instanceof String) {
                return (String) v;
            }
        }
        return null;
    }

    /** A public no-argument method of a public type that {@code target} is, or null. */
    private static Object call(Object target, String name) {
        try {
            Method m = publicMethod(target.getClass(), name);
            return m == null ? null : m.invoke(target);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null; // not this object's property, or it refused
        }
    }

    /** {@code name()} as declared by the first public class or interface up the hierarchy that has it. */
    private static Method publicMethod(Class<?> type, String name) {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            Method m = publicMethodOf(c, name);
            if (m != null) {
                return m;
            }
            for (Class<?> i : c.getInterfaces()) {
                m = publicMethodOf(i, name);
                if (m != null) {
                    return m;
                }
            }
        }
        return null;
    }

    private static Method publicMethodOf(Class<?> c, String name) {
        if (!Modifier.isPublic(c.getModifiers())) {
            return null;
        }
        try {
            Method m = c.getDeclaredMethod(name);
            return Modifier.isPublic(m.getModifiers()) ? m : null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
