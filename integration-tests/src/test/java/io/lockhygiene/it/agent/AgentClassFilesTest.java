package io.lockhygiene.it.agent;

import static io.lockhygiene.it.agent.AgentRuns.AGENT;
import static io.lockhygiene.it.agent.AgentRuns.command;
import static io.lockhygiene.it.agent.AgentRuns.java;
import static io.lockhygiene.it.agent.AgentRuns.run;
import static io.lockhygiene.it.agent.AgentRuns.serviceClassPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.lockhygiene.it.agent.AgentRuns.Run;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The agent's classes on the way to a first query (made at build time, no library or lambda of ours loaded),
 * and the agent on a Spring Boot executable jar, each in a child JVM running {@link SampleService}.
 */
@ExtendWith(TestBedExtension.class)
class AgentClassFilesTest {
    private final TestBed bed = TestBed.shared();

    private String[] args(String scenario, Route route, long key, String pool) {
        return new String[] {scenario, bed.url(route), bed.endpoints().user(), bed.endpoints().password(),
                Long.toString(key), pool};
    }

    /**
     * A first connection's classes: the PGConnection subclass and the edited Driver come from the build when
     * the service's pgjdbc is the build's (no class writer or editor loaded), and no bytecode library, SQL
     * parser or lambda of ours loads on the way to a first query. Control: the same agent jar without the
     * build's files makes both at run time (writer and editor load), and casts work either way.
     */
    @Test
    void aFirstConnectionTakesTheBuildsClassesAndLoadsNoLibraryOrLambdaOfOurs(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        String built = classesLoaded(AGENT, dir.resolve("built.log"));
        assertTrue(built.contains(" io.lockhygiene.agent.generated.LockHygienePGConnection "), built);
        assertFalse(built.contains(" io.lockhygiene.agent.ForwardingClass "), "the subclass was written at run time");
        assertFalse(built.contains(" io.lockhygiene.agent.MethodWrap "), "pgjdbc's Driver was edited at run time");
        assertFalse(built.contains(" io.lockhygiene.agent.shaded."), "a relocated library loaded");
        assertFalse(Pattern.compile(" io\\.lockhygiene\\.(?!it\\.)\\S*\\$\\$Lambda").matcher(built).find(), "a lambda of ours");

        Path without = dir.resolve("agent-without-pregenerated.jar");
        try (java.util.zip.ZipFile in = new java.util.zip.ZipFile(AGENT.toFile());
             java.util.zip.ZipOutputStream out = new java.util.zip.ZipOutputStream(Files.newOutputStream(without))) {
            for (java.util.zip.ZipEntry e : java.util.Collections.list(in.entries())) {
                if (!e.getName().startsWith("io/lockhygiene/agent/generated/")) {
                    out.putNextEntry(new java.util.zip.ZipEntry(e.getName()));
                    try (InputStream body = in.getInputStream(e)) {
                        body.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
        }
        String written = classesLoaded(without, dir.resolve("written.log"));
        assertTrue(written.contains(" io.lockhygiene.agent.ForwardingClass "), written);
        assertTrue(written.contains(" io.lockhygiene.agent.MethodWrap "), written);
        assertTrue(written.contains(" io.lockhygiene.agent.generated.LockHygienePGConnection "), written);
    }

    /** Runs the cast scenario with this agent jar; the classes the JVM loaded, one per line. */
    private String classesLoaded(Path agentJar, Path log) throws Exception {
        // detect: what the agent itself loads. Under the default (emulate) the first connection also places the
        // lock holder (a query, and behind a pooler a probe connection to the server), which AgentStartup measures
        List<String> cmd = command(java(), agentJar, "mode=detect");
        cmd.addAll(List.of("-Xlog:class+load=info:file=" + log.toAbsolutePath(), "-cp", serviceClassPath(false),
                SampleService.class.getName()));
        cmd.addAll(List.of(args("cast", Route.DIRECT, 0, "none")));
        Run cast = run(cmd);
        assertEquals(0, cast.exit(), cast.output());
        assertTrue(cast.output().contains("cast ok"), cast.output());
        return Files.readString(log);
    }

    /**
     * The service packaged as a Spring Boot executable jar (Boot's launcher, pgjdbc and HikariCP nested in
     * BOOT-INF/lib, loaded by Boot's class loader): casts work and take the build's subclass (found through
     * the nested jar's URL), and a pool return is a leak-check point. Control: the same jar without the agent
     * lets the lock ride back into the pool.
     */
    @Test
    void aSpringBootExecutableJarIsGuarded(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path jar = bootJar(dir);
        long key = 970_060;
        Path log = dir.resolve("boot.log");
        Run cast = bootService(jar, "mode=detect", log, args("cast", Route.DIRECT, 0, "none"));
        assertTrue(cast.result().contains("cast ok"), cast.output());
        assertTrue(cast.result().contains("LockHygiene"), "the connection is guarded: " + cast.result());
        String loaded = Files.readString(log);
        assertTrue(loaded.contains(" org.postgresql.PGConnection source: jar:nested:"), "pgjdbc from the nested jar");
        assertTrue(loaded.contains(" io.lockhygiene.agent.generated.LockHygienePGConnection "), loaded);
        assertFalse(loaded.contains(" io.lockhygiene.agent.ForwardingClass "), "the subclass was written at run time");

        Run plain = bootService(jar, null, null, args("leak", Route.DIRECT, key, "hikari"));
        assertEquals(1, plain.number("heldAfterReturn"), "control: the lock rides back into the pool\n" + plain.output());
        Run guarded = bootService(jar, "mode=detect", null, args("leak", Route.DIRECT, key, "hikari"));
        assertEquals(0, guarded.number("heldAfterReturn"), guarded.output());
        assertTrue(guarded.output().contains("released leaked session advisory lock " + key), guarded.output());
    }

    private Run bootService(Path jar, String agentOptions, Path log, String... args) throws Exception {
        List<String> cmd = command(java(), AGENT, agentOptions);
        if (log != null) {
            cmd.add("-Xlog:class+load=info:file=" + log.toAbsolutePath());
        }
        cmd.addAll(List.of("-jar", jar.toAbsolutePath().toString()));
        cmd.addAll(List.of(args));
        Run run = run(cmd);
        assertEquals(0, run.exit(), run.output());
        return run;
    }

    /**
     * {@link SampleService} as Spring Boot's Maven plugin would package it: the launcher's classes at the root,
     * this module's classes in BOOT-INF/classes, the libraries it uses stored (not deflated) in BOOT-INF/lib.
     */
    private static Path bootJar(Path dir) throws IOException {
        Path jar = dir.resolve("service.jar");
        Set<String> dirs = new java.util.HashSet<>();
        try (java.util.zip.ZipOutputStream out = new java.util.zip.ZipOutputStream(Files.newOutputStream(jar))) {
            put(out, dirs, "META-INF/MANIFEST.MF", ("Manifest-Version: 1.0\r\nMain-Class: "
                    + "org.springframework.boot.loader.launch.JarLauncher\r\nStart-Class: " + SampleService.class.getName()
                    + "\r\n\r\n").getBytes(StandardCharsets.UTF_8), false);
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                Path p = Paths.get(entry);
                String name = p.getFileName().toString();
                if (name.startsWith("spring-boot-loader-")) {
                    try (java.util.zip.ZipFile loader = new java.util.zip.ZipFile(p.toFile())) {
                        for (java.util.zip.ZipEntry e : java.util.Collections.list(loader.entries())) {
                            if (e.getName().startsWith("org/") && !e.isDirectory()) {
                                try (InputStream in = loader.getInputStream(e)) {
                                    put(out, dirs, e.getName(), in.readAllBytes(), false);
                                }
                            }
                        }
                    }
                } else if (Files.isDirectory(p) && entry.contains("integration-tests")) {
                    try (Stream<Path> files = Files.walk(p)) {
                        for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                            put(out, dirs, "BOOT-INF/classes/" + p.relativize(f).toString().replace(File.separatorChar, '/'),
                                    Files.readAllBytes(f), false);
                        }
                    }
                } else if (name.matches("(postgresql|HikariCP|commons-dbcp2|commons-pool2|commons-logging|slf4j-api|slf4j-simple)-.*\\.jar")) {
                    put(out, dirs, "BOOT-INF/lib/" + name, Files.readAllBytes(p), true);
                }
            }
        }
        return jar;
    }

    private static void put(java.util.zip.ZipOutputStream out, Set<String> dirs, String name, byte[] data, boolean stored)
            throws IOException {
        for (int slash = name.indexOf('/'); slash >= 0; slash = name.indexOf('/', slash + 1)) {
            String d = name.substring(0, slash + 1);
            if (dirs.add(d)) {
                out.putNextEntry(new java.util.zip.ZipEntry(d));
                out.closeEntry();
            }
        }
        java.util.zip.ZipEntry e = new java.util.zip.ZipEntry(name);
        if (stored) {
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(data);
            e.setMethod(java.util.zip.ZipEntry.STORED);
            e.setSize(data.length);
            e.setCompressedSize(data.length);
            e.setCrc(crc.getValue());
        }
        out.putNextEntry(e);
        out.write(data);
        out.closeEntry();
    }
}
