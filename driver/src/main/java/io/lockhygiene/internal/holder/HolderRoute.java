package io.lockhygiene.internal.holder;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;

import io.lockhygiene.internal.settings.ConnectionUrl;

/**
 * What an application connection tells emulate about where it came from, so that the process's lock
 * holder can be placed: the application's own route (the driver's URL, the agent's pgjdbc call, the wrapped
 * DataSource), and what a direct connection needs (the application's URL and credentials, when known).
 * Credentials stay here: they are never logged, never in a message.
 */
public interface HolderRoute {
    /** What identifies the application's endpoint (URL and user, or the DataSource). */
    Object endpoint();

    /** A connection the way the application gets one (the same pooler); for {@code holderUrl=pooler}. */
    Connection openLikeApplication() throws SQLException;

    /** True when {@link #openLikeApplication} borrows from the application's own pool (the DataSource wrapper). */
    boolean borrowsFromApplicationPool();

    /** True when the application's connections are lent to any thread: locks then belong to threads. */
    boolean threadOwners();

    /** A raw pgjdbc connection to {@code url} with {@code props} (the application's pgjdbc). */
    Connection openUrl(String url, Properties props) throws SQLException;

    /** The application's pgjdbc URL (its query parameters are kept for a direct URL), or null when unknown. */
    String applicationUrl();

    /** The application's user and password ({@code user}, {@code password}), or null when unknown. */
    Properties applicationCredentials();

    /** A route for a connection opened with {@code url} and {@code info} through {@code opener}. */
    static HolderRoute ofUrl(String url, Properties info, boolean threadOwners, UrlOpener opener) {
        // the endpoint names URL (without credentials) and user: one holder per process and database
        String endpoint = ConnectionUrl.redact(url) + " (user "
                + (info == null ? null : info.getProperty("user")) + ")";
        return new HolderRoute() {
            @Override
            public Object endpoint() {
                return endpoint;
            }

            @Override
            public Connection openLikeApplication() throws SQLException {
                return opener.open(url, info);
            }

            @Override
            public boolean borrowsFromApplicationPool() {
                return false;
            }

            @Override
            public boolean threadOwners() {
                return threadOwners;
            }

            @Override
            public Connection openUrl(String u, Properties props) throws SQLException {
                return opener.open(u, props);
            }

            @Override
            public String applicationUrl() {
                return url;
            }

            @Override
            public Properties applicationCredentials() {
                Properties p = new Properties();
                if (info != null) {
                    for (String k : new String[] {"user", "password"}) {
                        if (info.getProperty(k) != null) {
                            p.setProperty(k, info.getProperty(k));
                        }
                    }
                }
                return p;
            }

            @Override
            public String toString() {
                return String.valueOf(endpoint);
            }
        };
    }

    /** Opens a raw pgjdbc connection. */
    @FunctionalInterface
    interface UrlOpener {
        Connection open(String url, Properties props) throws SQLException;
    }
}
