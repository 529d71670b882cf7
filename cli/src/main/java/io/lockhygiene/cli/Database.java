package io.lockhygiene.cli;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;

import io.lockhygiene.internal.settings.ConnectionUrl;
import io.lockhygiene.internal.util.Urls;

/**
 * How doctor and monitor reach the database: with the pgjdbc this jar carries, or another named by
 * {@code --pgjdbc JAR} or the LOCKHYGIENE_PGJDBC environment variable (a server that needs an older or newer one).
 */
final class Database {
    private final Driver driver;
    private final String url;
    private final Properties info = new Properties();

    private Database(Driver driver, String url) {
        this.driver = driver;
        this.url = url;
    }

    /** --url (required), --user, --password, --pgjdbc; PGUSER / PGPASSWORD as fallbacks. */
    static Database from(String url, String givenUser, String givenPassword, String pgjdbc) throws SQLException {
        if (url == null) {
            throw new IllegalArgumentException("--url JDBC_URL is required");
        }
        if (ConnectionUrl.accepts(url)) {
            url = ConnectionUrl.parse(url).targetUrl(); // the tools talk to PostgreSQL plainly
        }
        Database db = new Database(driver(pgjdbc), url);
        String user = Optional.ofNullable(givenUser).orElse(System.getenv("PGUSER"));
        String password = Optional.ofNullable(givenPassword).orElse(System.getenv("PGPASSWORD"));
        if (user != null) {
            db.info.setProperty("user", user);
        }
        if (password != null) {
            db.info.setProperty("password", password);
        }
        return db;
    }

    Connection connect() throws SQLException {
        Connection c = driver.connect(url, info);
        if (c == null) {
            throw new SQLException("pgjdbc does not accept " + Urls.redact(url));
        }
        return c;
    }

    /** The URL as it may be printed. */
    String displayUrl() {
        return Urls.redact(url);
    }

    /**
     * pgjdbc: this jar's own, or another named by --pgjdbc or LOCKHYGIENE_PGJDBC, loaded in a class loader of
     * its own whose parent knows only the JDK (with this jar's loader as parent, the bundled pgjdbc would win).
     */
    private static Driver driver(String explicit) throws SQLException {
        String jar = explicit != null ? explicit : System.getenv("LOCKHYGIENE_PGJDBC");
        if (jar == null) {
            return new org.postgresql.Driver();
        }
        Path path = Paths.get(jar);
        if (!Files.isRegularFile(path)) {
            throw new SQLException("no pgjdbc jar at " + jar + " (--pgjdbc or LOCKHYGIENE_PGJDBC)");
        }
        try {
            URLClassLoader loader = new URLClassLoader(new URL[] {path.toUri().toURL()}, ClassLoader.getPlatformClassLoader());
            return (Driver) Class.forName("org.postgresql.Driver", true, loader).getDeclaredConstructor().newInstance();
        } catch (Exception | LinkageError e) {
            throw new SQLException("cannot load pgjdbc from " + jar + ": " + e);
        }
    }
}
