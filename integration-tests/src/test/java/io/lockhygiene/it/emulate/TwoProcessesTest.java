package io.lockhygiene.it.emulate;

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
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One-key workers in four processes at once (each its own lock holder, on the server itself): the holders'
 * backends exclude each other as sessions do, and a blocking call waits in PostgreSQL's own queue. Overlaps
 * are counted on the server, so they are seen across processes.
 */
@ExtendWith(TestBedExtension.class)
class TwoProcessesTest {
    private static final int PROCESSES = 4;
    private final TestBed bed = TestBed.shared();

    /** What the two processes did: runs, errors, failed unlocks (summed), overlaps, locks left. */
    record Outcome(int runs, int errors, int failedUnlocks, int overlaps, int left, String firstError) {
    }

    private Outcome run(String url, long key, boolean blocking) throws Exception {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_inside (key bigint PRIMARY KEY, n int NOT NULL, overlapping int NOT NULL)");
            s.execute("DELETE FROM lh_inside WHERE key = " + key);
            s.execute("INSERT INTO lh_inside VALUES (" + key + ", 0, 0)");
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            children.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    OneKeyWorkersMain.class.getName(), url, bed.endpoints().user(), bed.endpoints().password(),
                    Long.toString(key), "4", blocking ? "15" : "40", Boolean.toString(blocking))
                    .redirectErrorStream(true).start());
        }
        int runs = 0;
        int errors = 0;
        int failedUnlocks = 0;
        String firstError = null;
        for (Process child : children) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String line;
            boolean done = false;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("DONE ")) {
                    String[] f = line.split(" ");
                    runs += Integer.parseInt(f[1]);
                    errors += Integer.parseInt(f[2]);
                    failedUnlocks += Integer.parseInt(f[3]);
                    done = true;
                } else if (line.startsWith("ERROR") && firstError == null) {
                    firstError = line;
                }
            }
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), "a child is still running");
            assertTrue(done, "the child finished its work: " + firstError);
        }
        int overlaps;
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT overlapping FROM lh_inside WHERE key = " + key)) {
            rs.next();
            overlaps = rs.getInt(1);
        }
        int left = bed.admin().awaitReleased(key, 2_000).size();
        bed.admin().terminateHoldersOf(key);
        return new Outcome(runs, errors, failedUnlocks, overlaps, left, firstError);
    }

    @ParameterizedTest(name = "blocking={0}")
    @ValueSource(booleans = {false, true})
    void oneKeyWorkersInTwoProcessesNeverOverlap(boolean blocking) throws Exception {
        long key = blocking ? 979_002 : 979_001;
        Outcome emulated = run(bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"), key, blocking);
        System.out.println("[one key] one-key workers, " + PROCESSES + " processes x 4, " + (blocking ? "blocking" : "try")
                + ": emulate " + emulated);
        assertTrue(emulated.runs() > 0);
        assertEquals(0, emulated.overlaps(), emulated.toString());
        assertEquals(0, emulated.errors(), emulated.firstError());
        assertEquals(0, emulated.failedUnlocks());
        assertEquals(0, emulated.left());
        if (!blocking) {
            Outcome plain = run(bed.url(Route.TRANSACTION_POOL), key + 10, false);
            System.out.println("[one key] control, plain pgjdbc: " + plain);
            assertTrue(plain.overlaps() + plain.failedUnlocks() + plain.left() > 0, "control: " + plain);
        }
    }
}
