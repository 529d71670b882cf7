package io.lockhygiene.it.bed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Runs the bed's external commands, as an unprivileged user when the JVM is root. */
final class Processes {
    private final String runAsUser; // null: run as ourselves

    private Processes(String runAsUser) {
        this.runAsUser = runAsUser;
    }

    /**
     * PostgreSQL refuses to run as root, and PgBouncer should not: when we are root, every server
     * command runs as the {@code postgres} user (created by Debian's postgresql packages), or the
     * user named by LOCKHYGIENE_TESTBED_OS_USER.
     */
    static Processes forCurrentUser() {
        if (!isRoot()) {
            return new Processes(null);
        }
        String user = Optional.ofNullable(System.getenv("LOCKHYGIENE_TESTBED_OS_USER")).orElse("postgres");
        if (run(List.of("id", "-u", user), null, 10).exitCode != 0) {
            throw new BedException("The JVM runs as root and PostgreSQL refuses to: the test bed runs its servers as"
                    + " the unprivileged user '" + user + "', which does not exist. Install it with:"
                    + " apt-get update && apt-get install -y postgresql"
                    + " (or set LOCKHYGIENE_TESTBED_OS_USER to an existing unprivileged user)");
        }
        return new Processes(user);
    }

    static boolean isRoot() {
        Result r = run(List.of("id", "-u"), null, 10);
        return r.exitCode == 0 && r.output.trim().equals("0");
    }

    String runAsUser() {
        return runAsUser;
    }

    List<String> asServerUser(List<String> command) {
        if (runAsUser == null) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", runAsUser, "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Runs a command as the server user and fails with its output when it exits non-zero. */
    String check(List<String> command, Path workDir, int timeoutSeconds) {
        Result r = run(asServerUser(command), workDir, timeoutSeconds);
        if (r.exitCode != 0) {
            throw new BedException("Command failed (exit " + r.exitCode + "): " + String.join(" ", command)
                    + "\n" + r.output);
        }
        return r.output;
    }

    Result runAsServerUser(List<String> command, Path workDir, int timeoutSeconds) {
        return run(asServerUser(command), workDir, timeoutSeconds);
    }

    /** Starts a long-running server process whose output goes to {@code log}. */
    Process startServer(List<String> command, Path workDir, Path log) {
        try {
            return new ProcessBuilder(asServerUser(command))
                    .directory(workDir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
        } catch (IOException e) {
            throw new BedException("Could not start " + String.join(" ", command) + ": " + e.getMessage(), e);
        }
    }

    static Result run(List<String> command, Path workDir, int timeoutSeconds) {
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            if (workDir != null) {
                pb.directory(workDir.toFile());
            }
            Path out = Files.createTempFile("lockhygiene-bed", ".out");
            try {
                pb.redirectOutput(out.toFile());
                Process p = pb.start();
                if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    return new Result(-1, "timed out after " + timeoutSeconds + " s: " + String.join(" ", command));
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            return new Result(-1, "could not run " + String.join(" ", command) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted: " + String.join(" ", command));
        }
    }

    static final class Result {
        final int exitCode;
        final String output;

        Result(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }
    }

    // where the binaries are

    static Optional<Path> findPostgresBin() {
        Optional<Path> onPath = which("pg_ctl").map(Processes::realPath).map(Path::getParent)
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
                    .max(Comparator.comparing(Processes::majorVersion));
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

    /** The environment variable naming a PgBouncer of 1.21 or later (its binary) for the prepared-statements pool. */
    static final String CURRENT_PGBOUNCER = "LOCKHYGIENE_PGBOUNCER_CURRENT";
    /** Where bin/setup builds one from Debian 13's source package when the system's is older. */
    static final List<String> BUILT_PGBOUNCERS = List.of("/usr/local/lib/lockhygiene/pgbouncer-current/bin/pgbouncer",
            System.getProperty("user.home") + "/.cache/lockhygiene/pgbouncer-current/bin/pgbouncer");

    /**
     * A PgBouncer that supports protocol-level prepared statements (1.21 or later): the one named by
     * {@value #CURRENT_PGBOUNCER}, else the system's when it is recent enough, else the one bin/setup built.
     */
    static Optional<Path> findCurrentPgBouncer() {
        String named = System.getenv(CURRENT_PGBOUNCER);
        if (named != null && !named.isBlank()) {
            return Optional.of(Paths.get(named));
        }
        Optional<Path> system = findPgBouncer().filter(p -> atLeast121(pgbouncerVersion(p)));
        if (system.isPresent()) {
            return system;
        }
        return BUILT_PGBOUNCERS.stream().map(Paths::get).filter(Files::isExecutable).findFirst();
    }

    /** The first line of {@code pgbouncer --version} ("PgBouncer 1.24.1"). */
    static String pgbouncerVersion(Path binary) {
        return run(List.of(binary.toString(), "--version"), null, 10).output.lines().findFirst().orElse("unknown");
    }

    /** True for "PgBouncer 1.21" and later. */
    static boolean atLeast121(String versionLine) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+)\\.(\\d+)").matcher(versionLine);
        if (!m.find()) {
            return false;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        return major > 1 || (major == 1 && minor >= 21);
    }

    /** A free TCP port on the loopback address. */
    static int freeLoopbackPort() {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
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
}
