package io.lockhygiene.it.bed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The local bed's directory and files: where it lives (under target/, or a directory of its own when the
 * server user cannot reach that), what a killed earlier run left there, and handing it to the server user.
 */
final class BedFiles {
    private BedFiles() {
    }

    /**
     * Under target/ by default; when the JVM is root and the server user cannot reach that directory
     * (root's home is mode 700), a directory of its own under the system temp directory, named after
     * the checkout so that the next run finds and cleans a stale one.
     */
    static Path chooseDirectory(Processes processes, Path requested) {
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
            files.filter(p -> p.getFileName().toString().matches("pgbouncer-.*\\.pid")).forEach(BedFiles::killByPidFile);
        } catch (IOException ignored) {
            // nothing listed, nothing to stop
        }
        Path data = dir.resolve("pgdata");
        if (Files.exists(data.resolve("postmaster.pid"))) {
            Optional<Path> bin = Processes.findPostgresBin();
            bin.ifPresent(b -> processes.runAsServerUser(List.of(b.resolve("pg_ctl").toString(), "-D",
                    data.toString(), "-m", "immediate", "-w", "-t", "30", "stop"), null, 60));
            readPid(data.resolve("postmaster.pid")).flatMap(ProcessHandle::of).ifPresent(ProcessHandle::destroyForcibly);
        }
        deleteRecursively(dir);
    }

    static void killByPidFile(Path pidFile) {
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

    /** The server user must own the bed's directory: PostgreSQL insists on owning its data directory. */
    static void handToServerUser(Path path, Processes processes) {
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

    static void mkdirs(Path p) {
        try {
            Files.createDirectories(p);
        } catch (IOException e) {
            throw new BedException("Could not create " + p + ": " + e.getMessage(), e);
        }
    }

    static void write(Path p, String text) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void append(Path p, String text) {
        try {
            Files.writeString(p, text, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String readQuietly(Path p) {
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
}
