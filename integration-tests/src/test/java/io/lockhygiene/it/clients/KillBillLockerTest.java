package io.lockhygiene.it.clients;

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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kill Bill's PostgreSQL GlobalLocker (killbill-locker 0.26.4, unchanged) in two processes over HikariCP
 * with 4 connections, one lock name: it holds a pooled connection for the life of a lock, ignores the
 * unlock's result, and asks {@code isFree} with {@code SELECT CASE WHEN pg_try_advisory_lock(k) THEN
 * pg_advisory_unlock(k) ELSE FALSE END}. Through the transaction pooler with the DataSource wrapper and
 * emulate: no overlapping run (counted on the server), no lock left, and the run time beside plain pgjdbc's
 * on direct PostgreSQL printed (bounded at 30 s, not compared: speed is for benchmarks). The first version took 60 to 180 s (its isFree borrowed a second pool
 * connection for a per-connection holder). The control, plain pgjdbc through the pooler, overlaps.
 */
@ExtendWith(TestBedExtension.class)
class KillBillLockerTest {
    private static final int WORKERS = 4;
    private static final int TRIES = 15;
    private final TestBed bed = TestBed.shared();

    /** What the two processes did. */
    record Outcome(int runs, int errors, int overlaps, int left, long slowestMillis, String firstError) {
    }

    private Outcome twoProcesses(String url, String mode, String name) throws Exception {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_killbill (name text PRIMARY KEY, n int NOT NULL, overlapping int NOT NULL)");
            s.execute("DELETE FROM lh_killbill WHERE name = '" + name + "'");
            s.execute("INSERT INTO lh_killbill VALUES ('" + name + "', 0, 0)");
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        // the control is bound to fail: short pool and lock timeouts keep it from waiting minutes to show it
        boolean control = mode.equals("plain") && url.equals(bed.url(Route.TRANSACTION_POOL));
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            children.add(new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    KillBillWorkersMain.class.getName(), url, bed.endpoints().user(), bed.endpoints().password(), mode,
                    Integer.toString(WORKERS), Integer.toString(TRIES), name, control ? "3000" : "60000",
                    control ? "3" : "100").redirectErrorStream(true).start());
        }
        int runs = 0;
        int errors = 0;
        long slowest = 0;
        String firstError = null;
        for (Process child : children) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            boolean done = false;
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith("DONE ")) {
                    String[] f = line.split(" ");
                    runs += Integer.parseInt(f[1]);
                    errors += Integer.parseInt(f[2]);
                    slowest = Math.max(slowest, Long.parseLong(f[3]));
                    done = true;
                } else if (line.startsWith("ERROR") && firstError == null) {
                    firstError = line;
                }
            }
            assertTrue(child.waitFor(180, TimeUnit.SECONDS), "a child is still running");
            assertTrue(done, "the child finished its work: " + firstError);
        }
        int overlaps;
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT overlapping FROM lh_killbill WHERE name = '" + name + "'")) {
            rs.next();
            overlaps = rs.getInt(1);
        }
        int left = bed.admin().heldAdvisoryLocks().size();
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
        }
        return new Outcome(runs, errors, overlaps, left, slowest, firstError);
    }

    @Test
    void twoProcessesOfKillBillsLockerNeverOverlapAndRunNearPlainDirectSpeed() throws Exception {
        Outcome reference = twoProcesses(bed.url(Route.DIRECT), "plain", "kb-direct");
        Outcome emulated = twoProcesses(bed.url(Route.TRANSACTION_POOL), "emulate", "kb-emulate");
        Outcome control = twoProcesses(bed.url(Route.TRANSACTION_POOL), "plain", "kb-plain-pooled");
        System.out.println("[kill bill] plain pgjdbc, direct:              " + reference);
        System.out.println("[kill bill] emulate through the transaction pooler: " + emulated + String.format(
                " (%.2fx the direct run)", emulated.slowestMillis() / (double) Math.max(1, reference.slowestMillis())));
        System.out.println("[kill bill] control, plain through the pooler:   " + control);
        assertEquals(0, reference.overlaps(), "the reference itself");
        assertEquals(2 * WORKERS * TRIES, emulated.runs(), String.valueOf(emulated.firstError()));
        assertEquals(0, emulated.errors(), emulated.firstError());
        assertEquals(0, emulated.overlaps());
        assertEquals(0, emulated.left());
        // Speed is a benchmark's question (the ratio is printed above; it was 1.2x to 2.1x on this shared
        // machine): the test only bounds the run far below the first version's 60 to 180 s.
        assertTrue(emulated.slowestMillis() < 30_000, "no run near the first version's minutes: " + emulated);
        assertTrue(control.overlaps() + control.left() + control.errors() > 0, "control: " + control);
    }
}
