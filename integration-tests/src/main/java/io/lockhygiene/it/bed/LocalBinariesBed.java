package io.lockhygiene.it.bed;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;

/**
 * A PostgreSQL cluster and two PgBouncers started from the machine's own binaries, each on a free
 * loopback port, with data and configuration in one directory of their own. A directory left by a
 * killed run is recognised by its pid files: its servers are stopped and it is removed before anything
 * starts.
 */
final class LocalBinariesBed implements RunningBed {
    static final String USER = "lockhygiene";
    static final String DATABASE = "lockhygiene";
    private static final String INSTALL = "apt-get update && apt-get install -y pgbouncer postgresql";

    private final Processes processes;
    private final Path dir;
    private final Path pgBin;
    private final Map<String, Process> bouncers = new java.util.HashMap<>();
    private final List<Path> bouncerPidFiles = new ArrayList<>();
    private Path pgbouncerBinary;
    private Properties credentials;
    private boolean postgresStarted;
    private BedEndpoints endpoints;
    private String secondUrl;
    private boolean secondStarted;
    private String preparedUrl;
    private String workerUrl;
    private String currentWorkerUrl;
    private String preparedVersion;

    private LocalBinariesBed(Processes processes, Path dir, Path pgBin) {
        this.processes = processes;
        this.dir = dir;
        this.pgBin = pgBin;
    }

    /** Checks the prerequisites without starting anything; the message names the install command. */
    static Optional<String> missingPrerequisites() {
        List<String> missing = new ArrayList<>();
        if (PostgresBinaries.requestedMajor().isEmpty() && Processes.findPostgresBin().isEmpty()) {
            missing.add("PostgreSQL server binaries (initdb, pg_ctl, postgres on PATH or under /usr/lib/postgresql/*/bin)");
        }
        if (Processes.findPgBouncer().isEmpty()) {
            missing.add("pgbouncer (on PATH or /usr/sbin)");
        }
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("missing " + String.join(" and ", missing) + ". Install with: " + INSTALL
                + " (as root; prefix sudo otherwise)");
    }

    static LocalBinariesBed start(Path requestedDir) {
        Path pgBin = PostgresBinaries.requestedBin().or(Processes::findPostgresBin)
                .orElseThrow(() -> new BedException(missingPrerequisites().orElseThrow()));
        Path pgbouncer = Processes.findPgBouncer().orElseThrow(() -> new BedException(missingPrerequisites().orElseThrow()));
        Processes processes = Processes.forCurrentUser();
        Path dir = BedFiles.chooseDirectory(processes, requestedDir);
        LocalBinariesBed bed = new LocalBinariesBed(processes, dir, pgBin);
        try {
            bed.startAll(pgbouncer);
            return bed;
        } catch (RuntimeException e) {
            try {
                bed.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    @Override
    public BedEndpoints endpoints() {
        return endpoints;
    }

    Path directory() {
        return dir;
    }

    private void startAll(Path pgbouncer) {
        pgbouncerBinary = pgbouncer;
        String password = "lh-" + UUID.randomUUID();
        Path data = dir.resolve("pgdata");
        Path pwFile = dir.resolve("superuser.pw");
        BedFiles.write(pwFile, password + "\n");
        BedFiles.handToServerUser(dir, processes);

        processes.check(List.of(pgBin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
                "--pwfile=" + pwFile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"), dir, 180);
        int pgPort = Processes.freeLoopbackPort();
        StringBuilder conf = new StringBuilder("\n# LockHygiene test bed\n")
                .append("listen_addresses = '127.0.0.1'\n")
                .append("port = ").append(pgPort).append('\n')
                .append("unix_socket_directories = ''\n")
                .append("max_connections = 300\n")
                .append("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
                .append("log_min_messages = warning\n");
        if (Files.exists(pgBin.getParent().resolve("lib/pg_stat_statements.so"))
                || Files.exists(pgBin.getParent().resolve("lib/postgresql/pg_stat_statements.so"))) {
            conf.append("shared_preload_libraries = 'pg_stat_statements'\n");
        }
        BedFiles.append(data.resolve("postgresql.conf"), conf.toString());
        processes.check(List.of(pgBin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
                dir.resolve("postgres.log").toString(), "-w", "-t", "120", "start"), dir, 150);
        postgresStarted = true;

        String directUrl = "jdbc:postgresql://127.0.0.1:" + pgPort + "/" + DATABASE;
        Properties props = credentials(password);
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres", props);
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new BedException("Could not create the test database: " + e.getMessage(), e);
        }
        String pgVersion = Sql.serverVersion(directUrl, props);
        credentials = props;

        BedFiles.write(dir.resolve("userlist.txt"), PgBouncerConfig.authFile(USER, password));
        Map<Route, String> urls = new EnumMap<>(Route.class);
        urls.put(Route.DIRECT, directUrl);
        for (String mode : List.of("transaction", "session")) {
            // Through PgBouncer 1.18 (before 1.21) named server-side statements break: see the brief.
            String url = startPgBouncer(pgbouncer, mode, mode, pgPort, 0, PgBouncerConfig.poolSize(mode), true)
                    + "?prepareThreshold=0";
            urls.put("transaction".equals(mode) ? Route.TRANSACTION_POOL : Route.SESSION_POOL, url);
        }
        String bouncerVersion = Processes.run(List.of(pgbouncer.toString(), "--version"), null, 10)
                .output.lines().findFirst().orElse("unknown");
        endpoints = new BedEndpoints("local binaries (" + pgBin + ", " + pgbouncer + ") in " + dir
                + (processes.runAsUser() != null ? ", servers run as OS user " + processes.runAsUser() : ""),
                urls, USER, password, "PostgreSQL " + pgVersion, bouncerVersion);
    }

    /** Starts one PgBouncer named {@code name} in {@code poolMode} before the server; returns its URL, credentials aside. */
    private String startPgBouncer(Path binary, String name, String poolMode, int pgPort, int maxPreparedStatements,
                                  int poolSize, boolean checkEveryReuse) {
        int port = Processes.freeLoopbackPort();
        Path ini = dir.resolve("pgbouncer-" + name + ".ini");
        Path pid = dir.resolve("pgbouncer-" + name + ".pid");
        BedFiles.write(ini, PgBouncerConfig.ini(poolMode, "127.0.0.1", port, "127.0.0.1", pgPort, DATABASE, USER,
                dir.resolve("userlist.txt").toString(), pid.toString(), dir.resolve("pgbouncer-" + name + ".log").toString(),
                maxPreparedStatements, poolSize, checkEveryReuse));
        BedFiles.handToServerUser(dir, processes);
        bouncerPidFiles.add(pid);
        bouncers.put(name, processes.startServer(List.of(binary.toString(), ini.toString()), dir,
                dir.resolve("pgbouncer-" + name + ".out")));
        String url = "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
        awaitReady(url, credentials, name);
        return url;
    }

    private void awaitReady(String url, Properties props, String mode) {
        SQLException last = null;
        for (int i = 0; i < 200; i++) {
            Process p = bouncers.get(mode);
            if (p != null) {
                if (!p.isAlive()) {
                    throw new BedException("PgBouncer (" + mode + ") exited with " + p.exitValue() + ": "
                            + BedFiles.readQuietly(dir.resolve("pgbouncer-" + mode + ".out"))
                            + BedFiles.readQuietly(dir.resolve("pgbouncer-" + mode + ".log")));
                }
            }
            try (Connection c = DriverManager.getConnection(url, props)) {
                return;
            } catch (SQLException e) {
                last = e;
                sleep(100);
            }
        }
        throw new BedException("PgBouncer (" + mode + ") did not accept connections: "
                + (last == null ? "" : last.getMessage()) + "\n" + BedFiles.readQuietly(dir.resolve("pgbouncer-" + mode + ".log")));
    }

    /** Fault injection: stop one PgBouncer (SIGTERM, then SIGKILL), as a crash or a restart would. */
    void stopPgBouncer(Route route) {
        BedFiles.killByPidFile(dir.resolve("pgbouncer-" + mode(route) + ".pid"));
        Process p = bouncers.remove(mode(route));
        if (p != null) {
            p.destroy();
        }
    }

    /** Fault injection: start that PgBouncer again on the same port and wait until it answers. */
    void startPgBouncer(Route route) {
        String mode = mode(route);
        bouncers.put(mode, processes.startServer(List.of(pgbouncerBinary.toString(), dir.resolve("pgbouncer-" + mode + ".ini")
                .toString()), dir, dir.resolve("pgbouncer-" + mode + ".out")));
        awaitReady(endpoints.url(route), credentials, mode);
    }

    /**
     * A second, separate PostgreSQL cluster (its own initdb, the same user and password, a database of the
     * same name), started on first use and stopped with the bed: for checks that something reaches another
     * cluster. Returns its direct URL.
     */
    synchronized String secondCluster() {
        if (secondUrl != null) {
            return secondUrl;
        }
        Path data = dir.resolve("pgdata2");
        Path pwFile = dir.resolve("superuser2.pw");
        BedFiles.write(pwFile, endpoints.password() + "\n");
        BedFiles.handToServerUser(dir, processes);
        processes.check(List.of(pgBin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
                "--pwfile=" + pwFile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"), dir, 180);
        int port = Processes.freeLoopbackPort();
        BedFiles.append(data.resolve("postgresql.conf"), "\nlisten_addresses = '127.0.0.1'\nport = " + port
                + "\nunix_socket_directories = ''\nfsync = off\nlog_min_messages = warning\n");
        processes.check(List.of(pgBin.resolve("pg_ctl").toString(), "-D", data.toString(), "-l",
                dir.resolve("postgres2.log").toString(), "-w", "-t", "120", "start"), dir, 150);
        secondStarted = true;
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres", credentials);
             Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + DATABASE);
        } catch (SQLException e) {
            throw new BedException("Could not create the second cluster's database: " + e.getMessage(), e);
        }
        secondUrl = "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE;
        return secondUrl;
    }

    /**
     * A third PgBouncer, of 1.21 or later, in transaction mode with {@code max_prepared_statements} on, in
     * front of the same server, started on first use; reached with pgjdbc's default {@code prepareThreshold}.
     */
    @Override
    public synchronized String preparedPoolUrl() {
        if (preparedUrl != null) {
            return preparedUrl;
        }
        Path binary = Processes.findCurrentPgBouncer().orElseThrow(() -> new BedException("No PgBouncer of 1.21 or later"
                + " for the prepared-statements pool: the system's is " + endpoints.pgbouncerVersion() + ". Run bin/setup"
                + " (it builds 1.24.1 from Debian 13's source package) or name one in " + Processes.CURRENT_PGBOUNCER));
        String version = Processes.pgbouncerVersion(binary);
        if (!Processes.atLeast121(version)) {
            throw new BedException(binary + " is " + version + "; the prepared-statements pool needs 1.21 or later");
        }
        int pgPort = TcpProxy.portOf(endpoints.url(Route.DIRECT));
        // pgjdbc's default prepareThreshold: named server-side statements, as current PgBouncer supports
        String url = startPgBouncer(binary, "prepared", "transaction", pgPort, PgBouncerConfig.MAX_PREPARED_STATEMENTS,
                PgBouncerConfig.TRANSACTION_POOL_SIZE, true);
        System.out.printf("[lockhygiene test bed] %s: %s (%s)%n", Route.PREPARED_TRANSACTION_POOL.label(), url, version);
        preparedVersion = version;
        preparedUrl = url;
        return url;
    }

    /** The worker-pool benchmark's PgBouncer (see {@link RunningBed#workerPoolUrl}), started on first use. */
    @Override
    public synchronized String workerPoolUrl(boolean current) {
        if (current ? currentWorkerUrl != null : workerUrl != null) {
            return current ? currentWorkerUrl : workerUrl;
        }
        Path binary = pgbouncerBinary;
        if (current) {
            binary = Processes.findCurrentPgBouncer().orElseThrow(() -> new BedException("No PgBouncer of 1.21 or"
                    + " later for the worker pool: the system's is " + endpoints.pgbouncerVersion() + ". Run bin/setup"
                    + " or name one in " + Processes.CURRENT_PGBOUNCER));
        }
        int pgPort = TcpProxy.portOf(endpoints.url(Route.DIRECT));
        String url = startPgBouncer(binary, current ? "workers-current" : "workers", "transaction", pgPort, 0,
                PgBouncerConfig.WORKER_POOL_SIZE, false) + "?prepareThreshold=0";
        System.out.printf("[lockhygiene test bed] worker pool: %s (%s)%n", url, Processes.pgbouncerVersion(binary));
        if (current) {
            currentWorkerUrl = url;
        } else {
            workerUrl = url;
        }
        return url;
    }

    /** True once a PgBouncer of 1.21 or later ran here (the prepared pool, or the current worker pool). */
    boolean currentPgBouncerStarted() {
        return preparedVersion != null || currentWorkerUrl != null;
    }

    @Override
    public String currentPgBouncerVersion() {
        return Processes.findCurrentPgBouncer().map(Processes::pgbouncerVersion).orElse(null);
    }

    @Override
    public String preparedPoolVersion() {
        return preparedVersion;
    }

    /** Fault injection: restart PostgreSQL (fast shutdown: every backend is terminated). */
    void restartPostgres() {
        processes.check(List.of(pgBin.resolve("pg_ctl").toString(), "-D", dir.resolve("pgdata").toString(), "-l",
                dir.resolve("postgres.log").toString(), "-m", "fast", "-w", "-t", "120", "restart"), dir, 150);
    }

    private static String mode(Route route) {
        if (route == Route.DIRECT) {
            throw new IllegalArgumentException("DIRECT has no PgBouncer");
        }
        return route == Route.TRANSACTION_POOL ? "transaction" : "session";
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        for (Path pid : bouncerPidFiles) {
            BedFiles.killByPidFile(pid);
        }
        for (Process p : bouncers.values()) {
            p.destroy();
        }
        if (postgresStarted) {
            Processes.Result r = processes.runAsServerUser(List.of(pgBin.resolve("pg_ctl").toString(), "-D",
                    dir.resolve("pgdata").toString(), "-m", "fast", "-w", "-t", "60", "stop"), dir, 90);
            if (r.exitCode != 0) {
                failure = new BedException("pg_ctl stop failed: " + r.output);
            }
            postgresStarted = false;
        }
        if (secondStarted) {
            processes.runAsServerUser(List.of(pgBin.resolve("pg_ctl").toString(), "-D",
                    dir.resolve("pgdata2").toString(), "-m", "fast", "-w", "-t", "60", "stop"), dir, 90);
            secondStarted = false;
        }
        BedFiles.deleteRecursively(dir.resolve("pgdata"));
        BedFiles.deleteRecursively(dir.resolve("pgdata2"));
        for (String secret : List.of("superuser.pw", "superuser2.pw", "userlist.txt")) {
            BedFiles.deleteRecursively(dir.resolve(secret));
        }
        if (!dir.startsWith(Paths.get("").toAbsolutePath())) {
            // A directory made under the system temp directory: nothing in it is worth keeping.
            BedFiles.deleteRecursively(dir);
        }
        if (failure != null) {
            throw failure;
        }
    }

    static Properties credentials(String password) {
        Properties props = new Properties();
        props.setProperty("user", USER);
        props.setProperty("password", password);
        return props;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BedException("interrupted while waiting for the bed");
        }
    }
}
