package io.lockhygiene.it.ci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.it.bed.PlantedWait;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * doctor and monitor, run as `java -jar lockhygiene-cli.jar ...` against the real bed, with the pgjdbc that jar
 * carries (one case with --pgjdbc); and the agent jar, which is the agent only.
 */
@ExtendWith(TestBedExtension.class)
class CliTest {
    private final TestBed bed = TestBed.shared();
    private static final String CLI = Paths.get(System.getProperty("testbed.cliJar", "../cli/target/lockhygiene-cli.jar"))
            .toAbsolutePath().toString();
    private static final String AGENT = Paths.get(System.getProperty("testbed.agentJar", "../agent/target/lockhygiene-agent.jar"))
            .toAbsolutePath().toString();
    private static final String PGJDBC = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(e -> e.matches(".*postgresql-42[^/]*\\.jar")).findFirst().orElseThrow();

    private String[] cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", CLI));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS));
        return new String[] {Integer.toString(p.exitValue()), out, err};
    }

    private String[] db(String command, Route route, String... extra) throws Exception {
        List<String> args = new ArrayList<>(List.of(command, "--url", bed.url(route), "--user", bed.endpoints().user(),
                "--password", bed.endpoints().password()));
        args.addAll(List.of(extra));
        return cli(args.toArray(new String[0]));
    }

    @Test
    void doctorFindsAPlantedLeakAndSaysWhenAllIsWell() throws Exception {
        long key = 995_001;
        String[] clean = db("doctor", Route.TRANSACTION_POOL);
        assertEquals("0", clean[0], clean[1] + clean[2]);
        assertTrue(clean[1].contains("pooler: yes"), clean[1]);
        assertTrue(clean[1].contains("server: PostgreSQL 1"), clean[1]);
        String[] direct = db("doctor", Route.DIRECT);
        assertTrue(direct[1].contains("pooler: none"), direct[1]);
        try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")"); // stranded on a pooled server
        }
        try {
            int holder = bed.admin().holdersOf(key).get(0);
            String[] leak = db("doctor", Route.DIRECT);
            assertEquals("1", leak[0], leak[1] + leak[2]);
            assertTrue(leak[1].contains("pid " + holder + " holds advisory lock " + key + " (ExclusiveLock), idle for"), leak[1]);
            assertTrue(leak[1].contains("last query: SELECT pg_advisory_lock(" + key + ")"), leak[1]);
            assertFalse((leak[1] + leak[2]).contains(bed.endpoints().password()), "no password in the output");
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }

    @Test
    void monitorAndDoctorFindAPlantedWait() throws Exception {
        long key = 995_002;
        try (PlantedWait planted = new PlantedWait(bed, Long.toString(key), "")) {
            int holderPid = planted.holderPid;
            int waiterPid = planted.waiterPid;
            String[] under = db("monitor", Route.TRANSACTION_POOL, "--once", "--threshold", "60s");
            assertEquals("0", under[0], under[1] + under[2]);
            Thread.sleep(1_200);
            String[] once = db("monitor", Route.TRANSACTION_POOL, "--once", "--threshold", "1s", "--json");
            assertEquals("1", once[0], once[1] + once[2]);
            assertTrue(once[1].contains("\"blockedPid\":" + waiterPid + ",\"blockingPid\":" + holderPid
                    + ",\"key\":\"" + key + "\""), once[1]);
            String[] filtered = db("monitor", Route.DIRECT, "--once", "--threshold", "1s", "--classid", "77");
            assertEquals("0", filtered[0], filtered[1]);
            String[] doctor = db("doctor", Route.DIRECT, "--threshold", "1s");
            assertEquals("1", doctor[0], doctor[1]);
            assertTrue(doctor[1].contains("backend " + waiterPid + " waits"), doctor[1]);
        }
    }

    @Test
    void helpForEachCommandAndUsageErrors() throws Exception {
        for (String command : List.of("scan", "doctor", "monitor", "attach")) {
            String[] help = cli(command, "--help");
            assertEquals("0", help[0], command + help[2]);
            assertTrue(help[1].startsWith("Usage: java -jar lockhygiene-cli.jar " + command), help[1]);
        }
        assertEquals("2", cli("doctor")[0]);
        assertEquals("2", cli("bogus")[0]);
        String[] unreachable = cli("doctor", "--url", "jdbc:postgresql://127.0.0.1:1/x", "--pgjdbc", PGJDBC);
        assertEquals("2", unreachable[0], unreachable[1]);
    }

    @Test
    void theAgentJarIsTheAgentOnlyAndSaysWhereTheCommandLineIs() throws Exception {
        try (java.util.jar.JarFile agent = new java.util.jar.JarFile(AGENT)) {
            List<String> foreign = agent.stream().map(java.util.jar.JarEntry::getName)
                    .filter(n -> n.contains("picocli") || n.startsWith("io/lockhygiene/cli/") || n.startsWith("org/postgresql/"))
                    .collect(java.util.stream.Collectors.toList());
            assertEquals(List.of(), foreign);
            assertTrue(agent.getEntry("io/lockhygiene/agent/LockHygieneAgent.class") != null);
        }
        Process p = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(), "-jar", AGENT,
                "scan", ".").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), out);
        assertTrue(out.contains("java -jar lockhygiene-cli.jar scan ."), out);
    }
}
