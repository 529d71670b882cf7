package io.lockhygiene.it.bed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Stream;

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

    private LocalBinariesBed(Processes processes, Path dir, Path pgBin) {
        this.processes = processes;
        this.dir = dir;
        this.pgBin = pgBin;
    }

    /** Checks the prerequisites without starting anything; the message names the install command. */
    static Optional<String> missingPrerequisites() {
        List<String> missing = new ArrayList<>();
        if (findPostgresBin().isEmpty()) {
            missing.add("PostgreSQL server binaries (initdb, pg_ctl, postgres on PATH or under /usr/lib/postgresql/*/bin)");
        }
        if (findPgBouncer().isEmpty()) {
            missing.add("pgbouncer (on PATH or /usr/sbin)");
        }
        if (missing.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("missing " + String.join(" and ", missing) + ". Install with: " + INSTALL
                + " (as root; prefix sudo otherwise)");
    }

    static LocalBinariesBed start(Path requestedDir) {
        Path pgBin = findPostgresBin().orElseThrow(() -> new BedException(missingPrerequisites().orElseThrow()));
        Path pgbouncer = findPgBouncer().orElseThrow(() -> new BedException(missingPrerequisites().orElseThrow()));
        Processes processes = Processes.forCurrentUser();
        Path dir = chooseDirectory(processes, requestedDir);
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
        write(pwFile, password + "\n");
        handToServerUser(dir);

        processes.check(List.of(pgBin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
                "--pwfile=" + pwFile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"), dir, 180);
        int pgPort = freePort();
        StringBuilder conf = new StringBuilder("\n# LockHygiene test bed\n")
                .append("listen_addresses = '127.0.0.1'\n")
                .append("port = ").append(pgPort).append('\n')
                .append("unix_socket_directories = ''\n")
                .append("max_connections = 300\n")
                .append("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
                .append("log_min_messages = warning\n");
        if (Files.exists(pgBin.getParent().resolve("lib/pg_stat_statements.so"))) {
            conf.append("shared_preload_libraries = 'pg_stat_statements'\n");
        }
        append(data.resolve("postgresql.conf"), conf.toString());
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
        String pgVersion = serverVersion(directUrl, props);
        credentials = props;

        Path authFile = dir.resolve("userlist.txt");
        write(authFile, PgBouncerConfig.authFile(USER, password));
        Map<Route, String> urls = new EnumMap<>(Route.class);
        urls.put(Route.DIRECT, directUrl);
        for (String mode : List.of("transaction", "session")) {
            int port = freePort();
            Path ini = dir.resolve("pgbouncer-" + mode + ".ini");
            Path pid = dir.resolve("pgbouncer-" + mode + ".pid");
            write(ini, PgBouncerConfig.ini(mode, "127.0.0.1", port, "127.0.0.1", pgPort, DATABASE, USER,
                    authFile.toString(), pid.toString(), dir.resolve("pgbouncer-" + mode + ".log").toString()));
            handToServerUser(dir);
            bouncerPidFiles.add(pid);
            bouncers.put(mode, processes.startServer(List.of(pgbouncer.toString(), ini.toString()), dir,
                    dir.resolve("pgbouncer-" + mode + ".out")));
            // Through PgBouncer 1.18 (before 1.21) named server-side statements break: see the brief.
            String url = "jdbc:postgresql://127.0.0.1:" + port + "/" + DATABASE + "?prepareThreshold=0";
            awaitReady(url, props, mode);
            urls.put("transaction".equals(mode) ? Route.TRANSACTION_POOL : Route.SESSION_POOL, url);
        }
        String bouncerVersion = Processes.run(List.of(pgbouncer.toString(), "--version"), null, 10)
                .output.lines().findFirst().orElse("unknown");
        endpoints = new BedEndpoints("local binaries (" + pgBin + ", " + pgbouncer + ") in " + dir
                + (processes.runAsUser() != null ? ", servers run as OS user " + processes.runAsUser() : ""),
                urls, USER, password, "PostgreSQL " + pgVersion, bouncerVersion);
    }

    private void awaitReady(String url, Properties props, String mode) {
        SQLException last = null;
        for (int i = 0; i < 200; i++) {
            Process p = bouncers.get(mode);
            if (p != null) {
                if (!p.isAlive()) {
                    throw new BedException("PgBouncer (" + mode + ") exited with " + p.exitValue() + ": "
                            + readQuietly(dir.resolve("pgbouncer-" + mode + ".out"))
                            + readQuietly(dir.resolve("pgbouncer-" + mode + ".log")));
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
                + (last == null ? "" : last.getMessage()) + "\n" + readQuietly(dir.resolve("pgbouncer-" + mode + ".log")));
    }

    /** Fault injection: stop one PgBouncer (SIGTERM, then SIGKILL), as a crash or a restart would. */
    void stopPgBouncer(Route route) {
        killByPidFile(dir.resolve("pgbouncer-" + mode(route) + ".pid"));
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
        write(pwFile, endpoints.password() + "\n");
        handToServerUser(dir);
        processes.check(List.of(pgBin.resolve("initdb").toString(), "-D", data.toString(), "-U", USER,
                "--pwfile=" + pwFile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"), dir, 180);
        int port = freePort();
        append(data.resolve("postgresql.conf"), "\nlisten_addresses = '127.0.0.1'\nport = " + port
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
            killByPidFile(pid);
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
        deleteRecursively(dir.resolve("pgdata"));
        deleteRecursively(dir.resolve("pgdata2"));
        for (String secret : List.of("superuser.pw", "superuser2.pw", "userlist.txt")) {
            deleteRecursively(dir.resolve(secret));
        }
        if (!dir.startsWith(Paths.get("").toAbsolutePath())) {
            // A directory made under the system temp directory: nothing in it is worth keeping.
            deleteRecursively(dir);
        }
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Under target/ by default; when the JVM is root and the server user cannot reach that directory
     * (root's home is mode 700), a directory of its own under the system temp directory, named after
     * the checkout so that the next run finds and cleans a stale one.
     */
    private static Path chooseDirectory(Processes processes, Path requested) {
        Path preferred = requested.toAbsolutePath().normalize();
        cleanStale(processes, preferred);
        mkdirs(preferred);
        handToServerUser(preferred, processes);
        if (processes.runAsUser() == null
                || processes.runAsServerUser(List.of("test", "-w", preferred.toString(), "-a", "-x",
                preferred.toString()), null, 10).exitCode == 0) {
            return preferred;
        }
        deleteRecursively(preferred);
        String tag = Integer.toHexString(preferred.toString().hashCode());
        Path fallback = Paths.get(System.getProperty("java.io.tmpdir"), "lockhygiene-testbed-" + tag);
        cleanStale(processes, fallback);
        mkdirs(fallback);
        try {
            Files.setPosixFilePermissions(fallback, PosixFilePermissions.fromString("rwx------"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        handToServerUser(fallback, processes);
        return fallback;
    }

    /** Stops whatever a killed earlier run left in {@code dir} and removes it. */
    private static void cleanStale(Processes processes, Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> files = Files.list(dir)) {
            files.filter(p -> p.getFileName().toString().matches("pgbouncer-.*\\.pid")).forEach(LocalBinariesBed::killByPidFile);
        } catch (IOException ignored) {
            // nothing listed, nothing to stop
        }
        Path data = dir.resolve("pgdata");
        if (Files.exists(data.resolve("postmaster.pid"))) {
            Optional<Path> bin = findPostgresBin();
            bin.ifPresent(b -> processes.runAsServerUser(List.of(b.resolve("pg_ctl").toString(), "-D",
                    data.toString(), "-m", "immediate", "-w", "-t", "30", "stop"), null, 60));
            readPid(data.resolve("postmaster.pid")).flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        }
        deleteRecursively(dir);
    }

    private static void killByPidFile(Path pidFile) {
        readPid(pidFile).flatMap(ProcessHandle::of)
                .filter(h -> h.info().command().map(c -> c.contains("pgbouncer")).orElse(true))
                .ifPresent(h -> {
                    h.destroy();
                    try {
                        h.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (Exception e) {
                        h.destroyForcibly();
                    }
                });
    }

    private static Optional<Long> readPid(Path file) {
        try {
            String first = Files.readAllLines(file).stream().findFirst().orElse("").trim();
            return first.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(first));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    static Optional<Path> findPostgresBin() {
        Optional<Path> onPath = which("pg_ctl").map(LocalBinariesBed::realPath).map(Path::getParent)
                .filter(d -> Files.isExecutable(d.resolve("initdb")) && Files.isExecutable(d.resolve("postgres")));
        if (onPath.isPresent()) {
            return onPath;
        }
        Path root = Paths.get("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return Optional.empty();
        }
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(d -> Files.isExecutable(d.resolve("initdb")) && Files.isExecutable(d.resolve("pg_ctl"))
                            && Files.isExecutable(d.resolve("postgres")))
                    .max(Comparator.comparing(LocalBinariesBed::majorVersion));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static int majorVersion(Path bin) {
        try {
            return Integer.parseInt(bin.getParent().getFileName().toString());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    static Optional<Path> findPgBouncer() {
        Optional<Path> onPath = which("pgbouncer");
        if (onPath.isPresent()) {
            return onPath;
        }
        return Stream.of("/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/bin/pgbouncer")
                .map(Paths::get).filter(Files::isExecutable).findFirst();
    }

    private static Optional<Path> which(String name) {
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (d.isEmpty()) {
                continue;
            }
            Path candidate = Paths.get(d, name);
            if (Files.isExecutable(candidate) && !Files.isDirectory(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }

    private static Path realPath(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p;
        }
    }

    private static String serverVersion(String url, Properties props) {
        try (Connection c = DriverManager.getConnection(url, props);
             Statement s = c.createStatement();
             var rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new BedException("PostgreSQL started but does not answer: " + e.getMessage(), e);
        }
    }

    static Properties credentials(String password) {
        Properties props = new Properties();
        props.setProperty("user", USER);
        props.setProperty("password", password);
        return props;
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void handToServerUser(Path path) {
        handToServerUser(path, processes);
    }

    /** The server user must own the bed's directory: PostgreSQL insists on owning its data directory. */
    private static void handToServerUser(Path path, Processes processes) {
        if (processes.runAsUser() == null) {
            return;
        }
        try (Stream<Path> all = Files.walk(path)) {
            UserPrincipal owner = path.getFileSystem().getUserPrincipalLookupService()
                    .lookupPrincipalByName(processes.runAsUser());
            for (Path p : (Iterable<Path>) all::iterator) {
                if (!p.startsWith(path.resolve("pgdata"))) {
                    Files.setOwner(p, owner);
                }
            }
        } catch (IOException e) {
            throw new BedException("Could not hand " + path + " to user " + processes.runAsUser() + ": " + e.getMessage(), e);
        }
    }

    private static void mkdirs(Path p) {
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new BedException("Could not create " + p + ": " + e.getMessage(), e);
        }
    }

    private static void write(Path p, String text) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void append(Path p, String text) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String readQuietly(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p) : "";
        } catch (IOException e) {
            return "";
        }
    }

    static void deleteRecursively(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> all = Files.walk(p)) {
            all.sorted(Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException ignored) {
                    // best effort: a file held open by a dying server is removed by the next run's cleanup
                }
            });
        } catch (IOException ignored) {
            // best effort, as above
        }
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
