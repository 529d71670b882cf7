package io.lockhygiene.it.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 44, a fleet's footprint: 16 replicas of a pooled service (HikariCP over a jdbc:lockhygiene: URL through
 * PgBouncer 1.24, emulate, holderLinger=1s), each in bursts of 20 jobs with one in ten holding its own lock for
 * 50 ms and idle gaps of 3 s between bursts. The holder sessions on the server are sampled every 100 ms: at no
 * moment more than the replicas that held a lock within the last linger (one main session each: own keys, no
 * waits), and 0 at rest.
 */
@ExtendWith(TestBedExtension.class)
class FleetFootprintTest {
    private static final int PROCESSES = 16;
    private static final long LINGER_MILLIS = 1_000;
    private final TestBed bed = TestBed.shared();

    record Sample(long at, int holders) {
    }

    @Test
    void aFleetHoldsHolderSessionsOnlyWhileItsReplicasLockAndNoneAtRest() throws Exception {
        String url = bed.lockHygieneUrl(Route.PREPARED_TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderLinger=" + LINGER_MILLIS + "ms");
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<Sample> samples = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean sampling = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> {
            try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
                while (sampling.get()) {
                    try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name"
                            + " = 'lockhygiene lock holder' AND datname = current_database()")) {
                        rs.next();
                        samples.add(new Sample(System.currentTimeMillis(), rs.getInt(1)));
                    }
                    Thread.sleep(100);
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "fleet-footprint-sampler");
        sampler.start();
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            children.add(new ProcessBuilder(java, "-Xmx96m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), DutyCycleServiceMain.class.getName(), url,
                    bed.endpoints().user(), bed.endpoints().password(), Long.toString(950_000 + i), "3", "3000")
                    .redirectErrorStream(true).start());
        }
        List<long[]> held = new ArrayList<>(); // {process, from, to}
        int jobs = 0;
        int locked = 0;
        int errors = 0;
        int done = 0;
        List<String> errorLines = new ArrayList<>();
        for (int i = 0; i < children.size(); i++) {
            Process child = children.get(i);
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            for (String line; (line = out.readLine()) != null; ) {
                String[] f = line.split(" ");
                if (line.startsWith("LOCKED ")) {
                    held.add(new long[] {i, Long.parseLong(f[1]), Long.parseLong(f[2])});
                } else if (line.startsWith("DONE ")) {
                    jobs += Integer.parseInt(f[1]);
                    locked += Integer.parseInt(f[2]);
                    errors += Integer.parseInt(f[3]);
                    done++;
                } else if (line.startsWith("ERROR")) {
                    errorLines.add(line);
                }
            }
            assertTrue(child.waitFor(180, TimeUnit.SECONDS), "a replica is still running");
        }
        Eventually.until("no holder session at rest", Duration.ofSeconds(15),
                () -> bed.admin().sessionsNamed("lockhygiene lock holder") == 0);
        Thread.sleep(300); // a few samples at rest
        sampling.set(false);
        sampler.join();
        assertEquals(PROCESSES, done, "every replica ran: " + errorLines);
        assertEquals(0, errors, errorLines.toString());
        assertEquals(PROCESSES * 60, jobs);
        assertTrue(locked >= PROCESSES * 5, "locks were taken: " + locked);
        int peak = 0;
        int peakAllowed = 0;
        List<String> over = new ArrayList<>();
        for (Sample s : new ArrayList<>(samples)) {
            // the replicas that held a lock within the linger before this sample (plus scheduling slack)
            long windowStart = s.at() - LINGER_MILLIS - 500;
            java.util.Set<Long> recent = new java.util.HashSet<>();
            for (long[] h : held) {
                if (h[2] >= windowStart && h[1] <= s.at() + 200) {
                    recent.add(h[0]);
                }
            }
            if (s.holders() > recent.size()) {
                over.add(s + " > " + recent.size());
            }
            if (s.holders() > peak) {
                peak = s.holders();
                peakAllowed = recent.size();
            }
        }
        Sample last = samples.get(samples.size() - 1);
        System.out.println("[fleet footprint] " + PROCESSES + " replicas, " + jobs + " jobs, " + locked + " locked; "
                + samples.size() + " samples; peak " + peak + " holder sessions (replicas that locked within the"
                + " linger then: " + peakAllowed + "); at rest " + last.holders() + "; curve " + curve(samples));
        assertEquals(List.of(), over, "never more holder sessions than replicas that locked within the linger");
        assertEquals(0, last.holders(), "at rest");
        assertTrue(peak > 0, "the holders did open");
    }

    /** The samples as "seconds:count" at each change, for BENCHMARKS.md. */
    private static String curve(List<Sample> samples) {
        StringBuilder b = new StringBuilder();
        long t0 = samples.get(0).at();
        int previous = -1;
        for (Sample s : new ArrayList<>(samples)) {
            if (s.holders() != previous) {
                b.append(String.format(java.util.Locale.ROOT, "%.1f:%d ", (s.at() - t0) / 1000.0, s.holders()));
                previous = s.holders();
            }
        }
        return b.toString().trim();
    }
}
