package io.lockhygiene.it.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.lockhygiene.it.bed.IsolatedLauncher;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An unchanged service in a child JVM ({@link SampleService}: plain jdbc:postgresql: URL, HikariCP or
 * DBCP2) with and without {@code -javaagent:lockhygiene-agent.jar}: the run without shows the bug.
 */
@ExtendWith(TestBedExtension.class)
class AgentTest {
    private final TestBed bed = TestBed.shared();
    private static final Path AGENT = Paths.get(System.getProperty("testbed.agentJar", "../agent/target/lockhygiene-agent.jar"));
    private static final Path CLI = Paths.get(System.getProperty("testbed.cliJar", "../cli/target/lockhygiene-cli.jar"));

    /** The test class path without LockHygiene's own classes: the service has never heard of us. */
    private static String serviceClassPath(boolean withDriver) {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> withDriver || !(e.contains("driver" + File.separator + "target") || e.contains("lockhygiene-driver")))
                .collect(Collectors.joining(File.pathSeparator));
    }

    private static String launcherClassPath() {
        return Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> e.endsWith("integration-tests" + File.separator + "target" + File.separator + "classes"))
                .findFirst().orElseThrow();
    }

    record Run(int exit, String output) {
        String result() {
            return output.lines().filter(l -> l.startsWith("RESULT")).findFirst().orElse("no RESULT line:\n" + output);
        }

        int number(String name) {
            Matcher m = Pattern.compile(name + "=(\\d+)").matcher(result());
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        }
    }

    private Run service(String java, String agentOptions, boolean isolated, boolean withDriver, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = command(java, AGENT, agentOptions);
        if (isolated) {
            cmd.addAll(List.of("-cp", launcherClassPath(), IsolatedLauncher.class.getName(), serviceClassPath(withDriver)));
        } else {
            cmd.addAll(List.of("-cp", serviceClassPath(withDriver)));
        }
        cmd.add(SampleService.class.getName());
        cmd.addAll(List.of(args));
        return run(cmd);
    }

    /** {@code java}, with {@code -javaagent:JAR[=OPTIONS]} unless the options are null ("" for none). */
    private static List<String> command(String java, Path agentJar, String agentOptions) {
        List<String> cmd = new ArrayList<>(List.of(java));
        if (agentOptions != null) {
            cmd.add("-javaagent:" + agentJar.toAbsolutePath() + (agentOptions.isEmpty() ? "" : "=" + agentOptions));
        }
        return cmd;
    }

    /** Runs a child JVM to its end, at most 120 s (then it is killed and the test fails), output and errors together. */
    private static Run run(List<String> cmd) throws IOException, InterruptedException {
        Path out = Files.createTempFile("lockhygiene-agent-test", ".out");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            boolean ended = p.waitFor(120, TimeUnit.SECONDS);
            if (!ended) {
                p.destroyForcibly();
            }
            String output = new String(Files.readAllBytes(out), StandardCharsets.UTF_8);
            assertTrue(ended, "no end within 120 s:\n" + output);
            return new Run(p.exitValue(), output);
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private String[] args(String scenario, Route route, long key, String pool) {
        return new String[] {scenario, bed.url(route), bed.endpoints().user(), bed.endpoints().password(),
                Long.toString(key), pool};
    }

    private static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    @ParameterizedTest(name = "{0} through {1}")
    @CsvSource({"hikari, DIRECT, 970001", "dbcp2, DIRECT, 970002"})
    void poolReturnIsALeakCheckPoint(String pool, Route route, long key) throws Exception {
        Run plain = service(java(), null, false, false, args("leak", route, key, pool));
        assertEquals(1, plain.number("heldAfterReturn"), "control: the lock rides back into the pool\n" + plain.output());
        Run guarded = service(java(), "", false, false, args("leak", route, key, pool));
        assertEquals(0, guarded.number("heldAfterReturn"), guarded.output());
        assertTrue(guarded.output().contains("released leaked session advisory lock " + key), guarded.output());
        assertTrue(guarded.result().contains("unwrapsToPg=true"));
    }

    @Test
    void transactionPoolingLeakIsReleasedAndReported() throws Exception {
        long key = 970_010;
        Run plain = service(java(), null, false, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
        assertEquals(0, plain.exit(), plain.output());
        assertEquals(1, bed.admin().holdersOf(key).size(), "control: left on a pooled server");
        bed.admin().terminateHoldersOf(key);
        Run guarded = service(java(), "", false, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
        assertEquals(0, guarded.exit(), guarded.output());
        assertEquals(List.of(), bed.admin().holdersOf(key));
        assertTrue(guarded.output().contains("released leaked session advisory lock " + key), guarded.output());
    }

    @Test
    void emulateGivesTheUnchangedWorkersMutualExclusion() throws Exception {
        Run plain = service(java(), null, false, false, args("workers", Route.TRANSACTION_POOL, 970_020, "hikari"));
        bed.admin().terminateHoldersOf(970_020);
        Run emulated = service(java(), "mode=emulate", false, false, args("workers", Route.TRANSACTION_POOL, 970_021, "hikari"));
        System.out.println("[agent] workers without agent: " + plain.result() + "\n[agent] workers with mode=emulate: " + emulated.result());
        assertTrue(plain.number("overlapping") > 0, "control: " + plain.result());
        assertEquals(0, emulated.number("overlapping"), emulated.output());
        assertEquals(0, emulated.number("errors"), emulated.output());
        assertTrue(emulated.number("runs") > 0);
        assertEquals(List.of(), bed.admin().holdersOf(970_021), "no lock left");
    }

    @Test
    void emulateKeepsAPooledThreadsLockAcrossBorrows() throws Exception {
        Run plain = service(java(), null, false, false, args("borrows", Route.DIRECT, 970_030, "hikari4"));
        bed.admin().terminateHoldersOf(970_030);
        Run emulated = service(java(), "mode=emulate", false, false, args("borrows", Route.DIRECT, 970_031, "hikari4"));
        System.out.println("[agent] lock/job/unlock on different borrows (Hikari, 4 connections, 8 threads): without agent "
                + plain.result() + "\n[agent]                                                     with mode=emulate "
                + emulated.result());
        assertTrue(plain.number("overlapping") + plain.number("failedUnlocks") > 0, "control: " + plain.result());
        assertEquals(0, emulated.number("overlapping"), emulated.output());
        assertEquals(0, emulated.number("failedUnlocks"), emulated.output());
        assertEquals(0, emulated.number("errors"), emulated.output());
        assertTrue(emulated.number("runs") > 0, emulated.output());
        assertEquals(List.of(), bed.admin().holdersOf(970_031), "no lock left");
    }

    @Test
    void worksWhenPgjdbcLivesInAChildClassLoader() throws Exception {
        long key = 970_030;
        Run guarded = service(java(), "", true, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
        assertTrue(guarded.output().contains("pgjdbc visible to the system class loader: false"), guarded.output());
        assertTrue(guarded.output().contains("(watching class loading for pgjdbc)"), guarded.output());
        assertEquals(0, guarded.exit(), guarded.output());
        assertEquals(List.of(), bed.admin().holdersOf(key), guarded.output());
        assertTrue(guarded.output().contains("released leaked session advisory lock " + key), guarded.output());
    }

    @ParameterizedTest(name = "isolated={0}")
    @CsvSource({"false", "true"})
    void castingToPgConnectionKeepsWorking(boolean isolated) throws Exception {
        Run guarded = service(java(), "", isolated, false, args("cast", Route.DIRECT, 0, "none"));
        assertTrue(guarded.result().contains("cast ok"), guarded.output());
        assertTrue(guarded.result().contains("LockHygiene"), "the connection is guarded: " + guarded.result());
    }

    @Test
    void theDriverUrlAndTheAgentTogetherCheckOnce() throws Exception {
        String[] a = args("count", Route.DIRECT, 970_040, "hikari");
        a[1] = bed.lockHygieneUrl(Route.DIRECT);
        Run both = service(java(), "", false, true, a);
        assertEquals(10, both.number("seen"), both.output());
    }

    @Test
    void runsOnEveryJdkOnThisMachine() throws Exception {
        Set<String> javas = new LinkedHashSet<>();
        javas.add(java());
        Path jvms = Paths.get("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (Stream<Path> dirs = Files.list(jvms)) {
                dirs.map(d -> d.resolve("bin/java")).filter(Files::isExecutable)
                        .map(p -> { try { return p.toRealPath().toString(); } catch (IOException e) { return p.toString(); } })
                        .sorted().forEach(javas::add);
            }
        }
        long key = 970_050;
        for (String java : javas) {
            Run guarded = service(java, "", false, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
            System.out.println("[agent] " + java + ": " + guarded.result());
            assertEquals(0, guarded.exit(), java + "\n" + guarded.output());
            assertEquals(List.of(), bed.admin().holdersOf(key), java + "\n" + guarded.output());
            assertTrue(guarded.output().contains("released leaked session advisory lock " + key), java + "\n" + guarded.output());
        }
    }

    @Test
    void attachesToARunningJvm() throws Exception {
        long key = 970_060;
        List<String> cmd = List.of(java(), "-cp", serviceClassPath(false), SampleService.class.getName(),
                "hold", bed.url(Route.TRANSACTION_POOL), bed.endpoints().user(), bed.endpoints().password(),
                Long.toString(key), "hikari");
        Process service = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            // the service's output, read on a thread of its own; every wait below is bounded
            StringBuffer seen = new StringBuffer();
            java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
            Thread reader = new Thread(() -> {
                try (InputStream in = service.getInputStream()) {
                    for (int c = in.read(); c >= 0; c = in.read()) {
                        seen.append((char) c);
                        if (ready.getCount() > 0 && seen.indexOf("READY") >= 0) {
                            ready.countDown();
                        }
                    }
                } catch (IOException ended) {
                    // the service is gone: what it wrote is in seen
                }
            }, "service-output");
            reader.setDaemon(true);
            reader.start();
            assertTrue(ready.await(120, TimeUnit.SECONDS), "no READY within 120 s:\n" + seen);
            // the command line's own jar, with the agent it carries inside (nothing else is given)
            Run attach = run(List.of(java(), "-jar", CLI.toAbsolutePath().toString(), "attach",
                    Long.toString(service.pid()), "mode=detect"));
            assertEquals(0, attach.exit(), attach.output());
            try (OutputStream stdin = service.getOutputStream()) {
                stdin.write('\n');
            }
            assertTrue(service.waitFor(120, TimeUnit.SECONDS), "the service did not end within 120 s:\n" + seen);
            reader.join(TimeUnit.SECONDS.toMillis(30));
            String out = seen.toString();
            assertEquals(List.of(), bed.admin().holdersOf(key), out);
            assertTrue(out.contains("released leaked session advisory lock " + key), out);
        } finally {
            service.destroyForcibly();
            bed.admin().terminateHoldersOf(key);
        }
    }

    @Test
    void failOnViolationSetsTheExitStatusAndTheReportHasEveryEvent() throws Exception {
        long key = 970_070;
        Path report = Files.createTempFile("lockhygiene-report", ".jsonl");
        try {
            Run leaking = service(java(), "failOnViolation=true,report=" + report, false, false,
                    args("leak", Route.TRANSACTION_POOL, key, "hikari"));
            assertEquals(3, leaking.exit(), leaking.output());
            assertTrue(leaking.output().contains("LockHygiene: this run had 1 advisory-lock violation(s): 1 leaked lock(s)"),
                    leaking.output());
            String json = Files.readString(report);
            assertTrue(json.lines().anyMatch(l -> l.startsWith("{") && l.contains("\"type\":\"LEAK_RELEASED\"")
                    && l.contains("\"key\":\"" + key + "\"")), json);
            assertFalse(json.contains(bed.endpoints().password()), "no credentials in the report");

            Run clean = service(java(), "failOnViolation=true", false, false, args("count", Route.DIRECT, key, "hikari"));
            assertEquals(0, clean.exit(), clean.output());
        } finally {
            Files.deleteIfExists(report);
            bed.admin().terminateHoldersOf(key);
        }
    }

    @Test
    void aServiceWithoutPgjdbcRunsAsIfNoAgentWereThere() throws Exception {
        List<String> cmd = command(java(), AGENT, "");
        cmd.addAll(List.of("-cp", launcherClassPath(), io.lockhygiene.it.bench.Hello.class.getName()));
        Run with = run(cmd);
        String out = with.output();
        assertEquals(0, with.exit(), out);
        assertTrue(out.contains("[lockhygiene agent] installed"), out);
        assertTrue(out.contains("hello from a service without pgjdbc"), out);
        assertFalse(out.contains("could not instrument"), out);
    }

    /**
     * {@code agentWatch}: by default premain edits the class path's pgjdbc (and the HikariCP and DBCP2 classes
     * on this class path, which the service never uses) and stops watching class loading, so a second pgjdbc
     * that a plugin's class loader loads later is not edited; {@code always} edits it too. Control: without
     * the agent neither connection is guarded.
     */
    @ParameterizedTest(name = "agent options [{0}]")
    @CsvSource(value = {"NONE, false, false", "'', true, false", "agentWatch=always, true, true"}, nullValues = "NONE")
    void agentWatchDecidesWhetherALaterClassLoadersPgjdbcIsEdited(String options, boolean firstGuarded,
                                                                   boolean secondGuarded) throws Exception {
        String classPath = serviceClassPath(false);
        assertTrue(classPath.contains("HikariCP") && classPath.contains("commons-dbcp2"), classPath);
        Run run = secondPgjdbcService(options);
        Matcher m = Pattern.compile("RESULT first=(\\S+) second=(\\S+)").matcher(run.output());
        assertTrue(m.find(), run.output());
        assertEquals(firstGuarded, m.group(1).startsWith("io.lockhygiene."), run.output());
        assertEquals(secondGuarded, m.group(2).startsWith("io.lockhygiene."), run.output());
        if (options != null) {
            assertTrue(run.output().contains(secondGuarded ? "lockhygiene.agentWatch=always"
                    : "pgjdbc on the class path edited at start-up, class loading no longer watched"), run.output());
        }
    }

    /** A bad agentWatch value leaves the service running unprotected, with one line that says why. */
    @Test
    void aBadAgentWatchValueIsRefusedWithTheAllowedValues() throws Exception {
        Run run = secondPgjdbcService("agentWatch=sometimes");
        assertTrue(run.output().contains("[lockhygiene agent] not installed, the service runs unprotected: Bad value"
                + " 'sometimes' for lockhygiene.agentWatch; allowed: auto, always"), run.output());
        assertTrue(run.output().contains("RESULT first=org.postgresql."), run.output());
    }

    /** {@link SecondPgjdbcService} with these agent options (null: no agent); it must end well. */
    private Run secondPgjdbcService(String agentOptions) throws IOException, InterruptedException {
        List<String> cmd = command(java(), AGENT, agentOptions);
        cmd.addAll(List.of("-cp", serviceClassPath(false), SecondPgjdbcService.class.getName(), bed.url(Route.DIRECT),
                bed.endpoints().user(), bed.endpoints().password()));
        Run run = run(cmd);
        assertEquals(0, run.exit(), run.output());
        return run;
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
        List<String> cmd = command(java(), agentJar, "");
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
        Run cast = bootService(jar, "", log, args("cast", Route.DIRECT, 0, "none"));
        assertTrue(cast.result().contains("cast ok"), cast.output());
        assertTrue(cast.result().contains("LockHygiene"), "the connection is guarded: " + cast.result());
        String loaded = Files.readString(log);
        assertTrue(loaded.contains(" org.postgresql.PGConnection source: jar:nested:"), "pgjdbc from the nested jar");
        assertTrue(loaded.contains(" io.lockhygiene.agent.generated.LockHygienePGConnection "), loaded);
        assertFalse(loaded.contains(" io.lockhygiene.agent.ForwardingClass "), "the subclass was written at run time");

        Run plain = bootService(jar, null, null, args("leak", Route.DIRECT, key, "hikari"));
        assertEquals(1, plain.number("heldAfterReturn"), "control: the lock rides back into the pool\n" + plain.output());
        Run guarded = bootService(jar, "", null, args("leak", Route.DIRECT, key, "hikari"));
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
