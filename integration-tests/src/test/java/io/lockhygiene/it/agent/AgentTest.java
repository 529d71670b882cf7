package io.lockhygiene.it.agent;

import static io.lockhygiene.it.agent.AgentRuns.AGENT;
import static io.lockhygiene.it.agent.AgentRuns.CLI;
import static io.lockhygiene.it.agent.AgentRuns.command;
import static io.lockhygiene.it.agent.AgentRuns.java;
import static io.lockhygiene.it.agent.AgentRuns.launcherClassPath;
import static io.lockhygiene.it.agent.AgentRuns.run;
import static io.lockhygiene.it.agent.AgentRuns.serviceClassPath;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.lockhygiene.it.agent.AgentRuns.Run;
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
    private String[] args(String scenario, Route route, long key, String pool) {
        return new String[] {scenario, bed.url(route), bed.endpoints().user(), bed.endpoints().password(),
                Long.toString(key), pool};
    }

    @ParameterizedTest(name = "{0} through {1}")
    @CsvSource({"hikari, DIRECT, 970001", "dbcp2, DIRECT, 970002"})
    void poolReturnIsALeakCheckPoint(String pool, Route route, long key) throws Exception {
        Run plain = service(java(), null, false, false, args("leak", route, key, pool));
        assertEquals(1, plain.number("heldAfterReturn"), "control: the lock rides back into the pool\n" + plain.output());
        Run guarded = service(java(), "mode=detect", false, false, args("leak", route, key, pool));
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
        Run guarded = service(java(), "mode=detect", false, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
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
        Run guarded = service(java(), "mode=detect", true, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
        assertTrue(guarded.output().contains("pgjdbc visible to the system class loader: false"), guarded.output());
        assertTrue(guarded.output().contains("(watching class loading for pgjdbc)"), guarded.output());
        assertEquals(0, guarded.exit(), guarded.output());
        assertEquals(List.of(), bed.admin().holdersOf(key), guarded.output());
        assertTrue(guarded.output().contains("released leaked session advisory lock " + key), guarded.output());
    }

    @ParameterizedTest(name = "isolated={0}")
    @CsvSource({"false", "true"})
    void castingToPgConnectionKeepsWorking(boolean isolated) throws Exception {
        Run guarded = service(java(), "mode=detect", isolated, false, args("cast", Route.DIRECT, 0, "none"));
        assertTrue(guarded.result().contains("cast ok"), guarded.output());
        assertTrue(guarded.result().contains("LockHygiene"), "the connection is guarded: " + guarded.result());
    }

    @Test
    void theDriverUrlAndTheAgentTogetherCheckOnce() throws Exception {
        String[] a = args("count", Route.DIRECT, 970_040, "hikari");
        a[1] = bed.lockHygieneUrl(Route.DIRECT);
        Run both = service(java(), "mode=detect", false, true, a);
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
            Run guarded = service(java, "mode=detect", false, false, args("leak", Route.TRANSACTION_POOL, key, "hikari"));
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
            Run leaking = service(java(), "mode=detect,failOnViolation=true,report=" + report, false, false,
                    args("leak", Route.TRANSACTION_POOL, key, "hikari"));
            assertEquals(3, leaking.exit(), leaking.output());
            assertTrue(leaking.output().contains("LockHygiene: this run had 1 advisory-lock violation(s): 1 leaked lock(s)"),
                    leaking.output());
            String json = Files.readString(report);
            assertTrue(json.lines().anyMatch(l -> l.startsWith("{") && l.contains("\"type\":\"LEAK_RELEASED\"")
                    && l.contains("\"key\":\"" + key + "\"")), json);
            assertFalse(json.contains(bed.endpoints().password()), "no credentials in the report");

            Run clean = service(java(), "mode=detect,failOnViolation=true", false, false, args("count", Route.DIRECT, key, "hikari"));
            assertEquals(0, clean.exit(), clean.output());
        } finally {
            Files.deleteIfExists(report);
            bed.admin().terminateHoldersOf(key);
        }
    }

    @Test
    void aServiceWithoutPgjdbcRunsAsIfNoAgentWereThere() throws Exception {
        List<String> cmd = command(java(), AGENT, "mode=detect");
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

}
