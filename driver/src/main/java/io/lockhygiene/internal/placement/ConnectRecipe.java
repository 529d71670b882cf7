package io.lockhygiene.internal.placement;

import java.util.Properties;

import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.util.Urls;

/**
 * How to open a connection like the application's: a pgjdbc URL, its properties (user and password among
 * them) and where that was learned (the driver's URL, a pool's configuration, the application's own words),
 * for the lock holder's connections. The password stays here: {@link #toString} never shows it.
 */
public final class ConnectRecipe {
    private final String url;
    private final Properties properties;
    private final String source;

    /**
     * @param url a {@code jdbc:postgresql:} URL (its query parameters are kept for the holder)
     * @param properties pgjdbc properties (copied)
     * @param source where this was learned, for the start-up line ("HikariCP's configuration")
     */
    public ConnectRecipe(String url, Properties properties, String source) {
        this.url = url;
        this.properties = new Properties();
        if (properties != null) {
            for (String k : properties.stringPropertyNames()) {
                this.properties.setProperty(k, properties.getProperty(k));
            }
        }
        this.source = source;
    }

    public String url() {
        return url;
    }

    /** A copy: the caller may add to it. */
    public Properties properties() {
        Properties p = new Properties();
        p.putAll(properties);
        return p;
    }

    public String source() {
        return source;
    }

    /** True when a password is known (in the properties or the URL). */
    public boolean hasPassword() {
        return properties.getProperty("password") != null || url.matches("(?i).*[?&]password=.*");
    }

    /** The URL without credentials, the user, and the source; never a password. */
    @Override
    public String toString() {
        return Urls.redact(url) + " (user " + properties.getProperty("user") + ", from " + source + ")";
    }
}
