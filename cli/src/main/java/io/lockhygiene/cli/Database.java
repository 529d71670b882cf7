package io.lockhygiene.cli;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.stream.Stream;

import io.lockhygiene.internal.settings.ConnectionUrl;

/**
 * How doctor and monitor reach the database: {@code --pgjdbc JAR} or the LOCKHYGIENE_PGJDBC environment
 * variable (another pgjdbc, for a server that needs one), else the class path: lockhygiene-cli.jar carries
 * pgjdbc. Run from the thin cli jar (tests, a build tool), a postgresql*.jar next to it or the newest one
 * in ~/.m2 is used.
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
            throw new SQLException("pgjdbc does not accept " + ConnectionUrl.redact(url));
        }
        return c;
    }

    /** The URL as it may be printed. */
    String displayUrl() {
        return ConnectionUrl.redact(url);
    }

    private static Driver driver(String explicit) throws SQLException {
        List<Path> candidates = new java.util.ArrayList<>();
        if (explicit != null) {
            candidates.add(Paths.get(explicit));
        } else if (System.getenv("LOCKHYGIENE_PGJDBC") != null) {
            candidates.add(Paths.get(System.getenv("LOCKHYGIENE_PGJDBC")));
        } else {
            try {
                return (Driver) Class.forName("org.postgresql.Driver").getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException | LinkageError notOnClassPath) {
                // look for a jar
            }
            nextToThisJar().ifPresent(candidates::add);
            newestInMavenRepository().ifPresent(candidates::add);
        }
        for (Path jar : candidates) {
            if (Files.isRegularFile(jar)) {
                try {
                    URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, Database.class.getClassLoader());
                    return (Driver) Class.forName("org.postgresql.Driver", true, loader).getDeclaredConstructor().newInstance();
                } catch (Exception | LinkageError e) {
                    throw new SQLException("cannot load pgjdbc from " + jar + ": " + e);
                }
            }
        }
        throw new SQLException("no pgjdbc found: pass --pgjdbc path/to/postgresql.jar (or set LOCKHYGIENE_PGJDBC, or put"
                + " postgresql-*.jar next to this jar)");
    }

    private static Optional<Path> nextToThisJar() {
        try {
            Path dir = Paths.get(Database.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent();
            try (Stream<Path> files = Files.list(dir)) {
                return files.filter(p -> p.getFileName().toString().matches("postgresql-.*\\.jar")).findFirst();
            }
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private static Optional<Path> newestInMavenRepository() {
        Path repo = Paths.get(System.getProperty("user.home"), ".m2", "repository", "org", "postgresql", "postgresql");
        if (!Files.isDirectory(repo)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(repo)) {
            return versions.filter(Files::isDirectory)
                    .sorted(Comparator.comparing((Path p) -> versionKey(p.getFileName().toString())).reversed())
                    .map(v -> v.resolve("postgresql-" + v.getFileName() + ".jar"))
                    .filter(Files::isRegularFile).findFirst();
        } catch (Exception e) {
            return Optional.empty();
        }
    }

    private static String versionKey(String v) {
        StringBuilder sb = new StringBuilder();
        for (String part : v.split("[.-]")) {
            sb.append(String.format("%08d", part.matches("\\d+") ? Integer.parseInt(part) : 0));
        }
        return sb.toString();
    }
}
