package io.lockhygiene.it.defaults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.emulate.OneKeyWorkersMain;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Issue 45: the URL swap alone. The seed's workers ({@link OneKeyWorkersMain} on its key: try and blocking forms), two
 * processes of four, through PgBouncer 1.18 and 1.24 in transaction mode, with no {@code lockhygiene.*} setting
 * anywhere (none in the URL, none in the children's system properties or environment): every process runs jobs,
 * none overlaps, no unlock fails, no lock is left, and each child's log says the mode and why. The control is
 * plain pgjdbc on the same route with the same code.
 */
@ExtendWith(TestBedExtension.class)
class ZeroConfigurationTest {
    private static final int PROCESSES = 2;
    /** The seed's own workers' key. */
    private static final String REPORT_KEY = "7742, hashtext('report-daily')";
    private final TestBed bed = TestBed.shared();

    /** What the processes did: runs of each, errors, failed unlocks, overlaps, locks left, the mode's line. */
    record Outcome(List<Integer> runs, int errors, int failedUnlocks, int overlaps, int left, String firstError,
                   boolean saidDefault) {
        int allRuns() {
            return runs.stream().mapToInt(Integer::intValue).sum();
        }
    }

    private Outcome run(String url, long row, boolean blocking) throws Exception {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_inside (key bigint PRIMARY KEY, n int NOT NULL, overlapping int NOT NULL)");
            s.execute("DELETE FROM lh_inside WHERE key = " + row);
            s.execute("INSERT INTO lh_inside VALUES (" + row + ", 0, 0)");
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    OneKeyWorkersMain.class.getName(), url, bed.endpoints().user(), bed.endpoints().password(),
                    Long.toString(row), "4", blocking ? "15" : "40", Boolean.toString(blocking), REPORT_KEY)
                    .redirectErrorStream(true);
            // nothing of ours but the URL prefix: no LOCKHYGIENE_* variable reaches the child (the bed's own
            // LOCKHYGIENE_TEST_* ones are not settings and are dropped too)
            pb.environment().keySet().removeIf(k -> k.startsWith("LOCKHYGIENE"));
            children.add(pb.start());
        }
        List<Integer> runs = new ArrayList<>();
        int errors = 0;
        int failedUnlocks = 0;
        String firstError = null;
        boolean saidDefault = true;
        for (Process child : children) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            boolean done = false;
            boolean said = false;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("DONE ")) {
                    String[] f = line.split(" ");
                    runs.add(Integer.parseInt(f[1]));
                    errors += Integer.parseInt(f[2]);
                    failedUnlocks += Integer.parseInt(f[3]);
                    done = true;
                } else if (line.startsWith("ERROR") && firstError == null) {
                    firstError = line;
                } else if (line.contains("lockhygiene.mode=emulate (the default)")) {
                    said = true;
                }
            }
            saidDefault &= said;
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), "a child is still running");
            assertTrue(done, "the child finished its work: " + firstError);
        }
        int overlaps;
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT overlapping FROM lh_inside WHERE key = " + row)) {
            rs.next();
            overlaps = rs.getInt(1);
        }
        int left = locksLeft();
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE " + HELD);
        }
        return new Outcome(runs, errors, failedUnlocks, overlaps, left, firstError, saidDefault);
    }

    /** (7742, hashtext('report-daily')) as pg_locks shows a two-int key: classid, objid, objsubid 2. */
    private static final String HELD = "locktype = 'advisory' AND granted AND objsubid = 2 AND classid = 7742"
            + " AND objid = hashtext('report-daily')::oid";

    /** Backends holding the key, polled for up to 2 s after every process ended (0 as soon as none does). */
    private int locksLeft() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (true) {
            int n;
            try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE " + HELD)) {
                rs.next();
                n = rs.getInt(1);
            }
            if (n == 0 || System.nanoTime() - deadline > 0) {
                return n;
            }
            Thread.sleep(50);
        }
    }

    @ParameterizedTest(name = "{0}, blocking={1}")
    @CsvSource({"TRANSACTION_POOL, false", "TRANSACTION_POOL, true", "PREPARED_TRANSACTION_POOL, false",
            "PREPARED_TRANSACTION_POOL, true"})
    void theUrlSwapAloneKeepsTheJobExclusive(Route route, boolean blocking) throws Exception {
        long row = 945_000 + route.ordinal() * 10L + (blocking ? 1 : 0);
        Outcome swapped = run(bed.lockHygieneUrl(route), row, blocking);
        System.out.println("[zero configuration] " + route + ", " + (blocking ? "blocking" : "try") + ", "
                + PROCESSES + " processes x 4, no setting: " + swapped);
        assertEquals(PROCESSES, swapped.runs().size(), swapped.toString());
        swapped.runs().forEach(r -> assertTrue(r > 0, "every process runs jobs: " + swapped));
        assertEquals(0, swapped.overlaps(), swapped.toString());
        assertEquals(0, swapped.errors(), swapped.firstError());
        assertEquals(0, swapped.failedUnlocks(), swapped.toString());
        assertEquals(0, swapped.left(), swapped.toString());
        assertTrue(swapped.saidDefault(), "each process says the mode in force and why");
        if (!blocking) {
            Outcome plain = run(bed.url(route), row + 5, false);
            System.out.println("[zero configuration] control, plain pgjdbc, " + route + ": " + plain);
            assertTrue(plain.overlaps() + plain.failedUnlocks() + plain.left() > 0, "control: " + plain);
        }
    }
}
