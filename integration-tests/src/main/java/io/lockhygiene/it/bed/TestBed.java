package io.lockhygiene.it.bed;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;

/**
 * A real PostgreSQL with a transaction-mode and a session-mode PgBouncer in front, shared by every test,
 * the demo and the benchmarks of one JVM. Sources, first that applies:
 * <ol>
 *   <li>environment variables naming servers the user already runs ({@link EnvironmentBed});</li>
 *   <li>Testcontainers, when a Docker engine answers ({@link ContainerBed});</li>
 *   <li>local binaries ({@link LocalBinariesBed}).</li>
 * </ol>
 * Nothing is skipped silently: a missing prerequisite fails with the command that installs it.
 * The bed is torn down at the end of the run (JUnit's root store, or a shutdown hook), also after a
 * failure; a bed left by a killed run is cleaned up by the next one.
 */
public final class TestBed implements AutoCloseable {
    /** Where the local-binary bed keeps its servers; relative to the working directory. */
    public static final String DIR_PROPERTY = "testbed.dir";
    /** Set to {@code local} to skip the Docker probe. */
    public static final String SOURCE_PROPERTY = "testbed.source";

    private static TestBed shared;

    private final RunningBed running;
    private final Thread shutdownHook;
    private boolean closed;

    private TestBed(RunningBed running) {
        this.running = running;
        this.shutdownHook = new Thread(this::closeQuietly, "lockhygiene-testbed-shutdown");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** The bed of this JVM, started on first use. */
    public static synchronized TestBed shared() {
        if (shared == null || shared.closed) {
            shared = start();
        }
        return shared;
    }

    public static TestBed start() {
        long t0 = System.nanoTime();
        RunningBed running = provision();
        TestBed bed = new TestBed(running);
        BedEndpoints e = running.endpoints();
        System.out.printf("[lockhygiene test bed] source: %s%n[lockhygiene test bed] %s; %s; ready in %d ms%n"
                        + "[lockhygiene test bed] direct %s | transaction pool %s | session pool %s%n",
                e.source(), e.postgresVersion(), e.pgbouncerVersion(), (System.nanoTime() - t0) / 1_000_000,
                e.url(Route.DIRECT), e.url(Route.TRANSACTION_POOL), e.url(Route.SESSION_POOL));
        return bed;
    }

    /** Where the bed writes what it ran on (for docs/compatibility.md's generated table); unset: nowhere. */
    public static final String RECORD_PROPERTY = "testbed.record";

    /**
     * Writes, when the bed closes, {@code <testbed.record>/<testbed.recordName>.properties} (by default {@code
     * postgres-<major or system>}): the server's version and those of the PgBouncers that ran, pgjdbc's and Java's, as this run saw them, the client
     * the tests ran ({@code testbed.client}, e.g. a Spring Boot version; empty for the suite itself) and where
     * their reports go ({@code testbed.reports}). {@code CompatibilityTable} turns a run's records and reports into
     * docs/compatibility.md's tables, so that they say only what a run proved.
     */
    private static void record(TestBed bed) {
        String dir = System.getProperty(RECORD_PROPERTY);
        if (dir == null || dir.isBlank()) {
            return;
        }
        Properties p = new Properties();
        BedEndpoints e = bed.endpoints();
        p.setProperty("postgres", e.postgresVersion());
        p.setProperty("binaries", PostgresBinaries.requestedMajor().map(m -> "Maven Central (" + PostgresBinaries.GROUP
                + ":" + PostgresBinaries.ARTIFACT + ")").orElse("the machine's own"));
        p.setProperty("pgbouncer", e.pgbouncerVersion());
        String current = bed.currentPgBouncerVersion();
        boolean ran = !(bed.running instanceof LocalBinariesBed) || ((LocalBinariesBed) bed.running).currentPgBouncerStarted();
        p.setProperty("pgbouncerCurrent", current == null || !ran ? "" : current);
        p.setProperty("pgjdbc", org.postgresql.util.DriverInfo.DRIVER_VERSION);
        p.setProperty("java", System.getProperty("java.specification.version"));
        p.setProperty("client", System.getProperty("testbed.client", ""));
        p.setProperty("reports", System.getProperty("testbed.reports", ""));
        try {
            java.nio.file.Path out = Paths.get(dir);
            java.nio.file.Files.createDirectories(out);
            String name = System.getProperty("testbed.recordName", "postgres-" + PostgresBinaries.requestedMajor().orElse("system"));
            java.nio.file.Path file = out.resolve(name + ".properties");
            if (!ran && java.nio.file.Files.exists(file)) {
                // an earlier JVM of the same tests (a fork per class) may have run the current PgBouncer: kept
                Properties earlier = new Properties();
                try (java.io.Reader r = java.nio.file.Files.newBufferedReader(file)) {
                    earlier.load(r);
                }
                if (p.getProperty("reports").equals(earlier.getProperty("reports"))
                        && !earlier.getProperty("pgbouncerCurrent", "").isEmpty()) {
                    p.setProperty("pgbouncerCurrent", earlier.getProperty("pgbouncerCurrent"));
                }
            }
            try (java.io.Writer w = java.nio.file.Files.newBufferedWriter(file)) {
                p.store(w, null);
            }
        } catch (java.io.IOException ex) {
            throw new BedException("Could not write the bed's record into " + dir + ": " + ex.getMessage(), ex);
        }
    }

    private static RunningBed provision() {
        Optional<EnvironmentBed> fromEnv = EnvironmentBed.fromEnvironment(System::getenv);
        if (fromEnv.isPresent()) {
            if (PostgresBinaries.requestedMajor().isPresent()) {
                throw new BedException(PostgresBinaries.PROPERTY + " names a PostgreSQL major, and " + EnvironmentBed.DIRECT
                        + " names servers of your own: unset one of them");
            }
            return fromEnv.get();
        }
        // a named major runs from PostgreSQL's binaries on Maven Central, never a container's image
        if (PostgresBinaries.requestedMajor().isEmpty() && !"local".equals(System.getProperty(SOURCE_PROPERTY))
                && ContainerBed.dockerAnswers()) {
            return new ContainerBed();
        }
        Optional<String> missing = LocalBinariesBed.missingPrerequisites();
        if (missing.isPresent()) {
            throw new BedException("No test bed: no " + EnvironmentBed.DIRECT + " (and friends) set, no Docker engine"
                    + " answers, and the local binaries are " + missing.get());
        }
        Path dir = Paths.get(System.getProperty(DIR_PROPERTY, "target/testbed"));
        return LocalBinariesBed.start(dir);
    }

    public BedEndpoints endpoints() {
        return running.endpoints();
    }

    public String url(Route route) {
        return route == Route.PREPARED_TRANSACTION_POOL ? running.preparedPoolUrl() : running.endpoints().url(route);
    }

    /** user and password, for DriverManager and DataSources. */
    public Properties credentials() {
        Properties p = new Properties();
        p.setProperty("user", running.endpoints().user());
        p.setProperty("password", running.endpoints().password());
        return p;
    }

    /** A plain-pgjdbc connection over the given route. */
    public Connection connect(Route route) throws SQLException {
        return DriverManager.getConnection(url(route), credentials());
    }

    /** The version line of the PgBouncer of {@link Route#PREPARED_TRANSACTION_POOL} (started if need be). */
    public String preparedPoolVersion() {
        url(Route.PREPARED_TRANSACTION_POOL);
        return running.preparedPoolVersion();
    }

    /**
     * The route's URL for the LockHygiene driver: {@code jdbc:lockhygiene:postgresql:...} with the given
     * {@code lockhygiene.*} parameters (e.g. "lockhygiene.mode=rewrite") appended.
     */
    public String lockHygieneUrl(Route route, String... params) {
        StringBuilder url = new StringBuilder("jdbc:lockhygiene:" + url(route).substring("jdbc:".length()));
        for (String p : params) {
            url.append(url.indexOf("?") < 0 ? '?' : '&').append(p);
        }
        return url.toString();
    }

    /** A LockHygiene-driver connection over the given route. */
    public Connection connectLockHygiene(Route route, String... params) throws SQLException {
        return DriverManager.getConnection(lockHygieneUrl(route, params), credentials());
    }

    /**
     * The transaction-mode PgBouncer's small session-mode entry for lock holders (4 servers): the capped fleet
     * setup, a pgjdbc URL.
     */
    public String cappedHolderUrl() {
        return url(Route.TRANSACTION_POOL).replace("/" + LocalBinariesBed.DATABASE + "?",
                "/" + PgBouncerConfig.CAPPED_HOLDER_ENTRY + "?");
    }

    /**
     * The transaction-mode PgBouncer's session-mode database entry for lock holders
     * ({@code lockhygiene.holderUrl}), a pgjdbc URL.
     */
    public String sessionHolderUrl() {
        return url(Route.TRANSACTION_POOL).replace("/" + LocalBinariesBed.DATABASE + "?", "/" + PgBouncerConfig.HOLDER_ENTRY + "?");
    }

    /**
     * A transaction-mode PgBouncer of four servers with PgBouncer's default server checks (the worker-pool
     * benchmark's), started on first use: a pgjdbc URL.
     *
     * @param current a PgBouncer of 1.21 or later ({@link #currentPgBouncerVersion}); else the system's
     */
    public String workerPoolUrl(boolean current) {
        return running.workerPoolUrl(current);
    }

    /** The version of the PgBouncer of 1.21 or later this bed can start; null when it has none. */
    public String currentPgBouncerVersion() {
        return running.currentPgBouncerVersion();
    }

    /** A second PostgreSQL cluster (local-binaries bed only), started on first use; its direct URL. */
    public String secondClusterUrl() {
        if (!(running instanceof LocalBinariesBed)) {
            throw new BedException("a second PostgreSQL cluster needs the local-binaries test bed (this one is "
                    + running.endpoints().source() + ")");
        }
        return ((LocalBinariesBed) running).secondCluster();
    }

    public BedAdmin admin() {
        return new BedAdmin(this);
    }

    /** Fault injection (local-binary bed only): stop the PgBouncer of a route. */
    public void stopPgBouncer(Route route) {
        local().stopPgBouncer(route);
    }

    /** Fault injection (local-binary bed only): start it again, same port. */
    public void startPgBouncer(Route route) {
        local().startPgBouncer(route);
    }

    /** Fault injection (local-binary bed only): restart PostgreSQL. */
    public void restartPostgres() {
        local().restartPostgres();
    }

    private LocalBinariesBed local() {
        if (running instanceof LocalBinariesBed) {
            return (LocalBinariesBed) running;
        }
        throw new UnsupportedOperationException("fault injection needs the bed it starts itself (local binaries);"
                + " this run uses " + running.endpoints().source());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            record(this); // at the end: which PgBouncers ran is known now
        } catch (RuntimeException e) {
            System.err.println("[lockhygiene test bed] " + e.getMessage());
        }
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException alreadyShuttingDown) {
            // we are the hook
        }
        running.close();
    }

    private void closeQuietly() {
        try {
            close();
        } catch (RuntimeException e) {
            System.err.println("[lockhygiene test bed] teardown failed: " + e.getMessage());
        }
    }
}
