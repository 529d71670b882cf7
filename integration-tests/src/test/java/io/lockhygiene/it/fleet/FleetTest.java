package io.lockhygiene.it.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A service in many replicas behind one transaction-mode PgBouncer (3 servers): each process runs 4
 * own-key workers under emulate. With the holders on endpoints of their own (the server itself, found by
 * holderUrl=auto, or a PgBouncer entry in session mode) the holders take none of the pool's servers: every
 * job is done with 16 processes. The control puts the holders through the transaction pooler
 * (holderUrl=pooler): with more processes holding locks than the pool has servers, the owners cannot run the
 * statements that would let them unlock, and PgBouncer fails them (query_wait_timeout).
 */
@ExtendWith(TestBedExtension.class)
class FleetTest {
    private static final int WORKERS = 4;
    private static final int TRIES = 10;
    private final TestBed bed = TestBed.shared();

    /** What the fleet did, and the backends it used at most at once. */
    record Outcome(int processes, int jobs, int errors, int failedUnlocks, int left, int peakHolderBackends,
                   int peakOtherBackends, long millis, String firstError) {
    }

    private Outcome fleet(int processes, String holderUrl, long base, int tries) throws Exception {
        return fleet(processes, holderUrl, base, tries, null, 0);
    }

    private Outcome fleet(int processes, String holderUrl, long base, int tries, java.nio.file.Path barrier,
                          int barrierCount, String... extra) throws Exception {
        List<String> params = new ArrayList<>(List.of("lockhygiene.mode=emulate", "lockhygiene.holderUrl="
                + java.net.URLEncoder.encode(holderUrl, StandardCharsets.UTF_8)));
        params.addAll(List.of(extra));
        String url = bed.lockHygieneUrl(Route.TRANSACTION_POOL, params.toArray(new String[0]));
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        AtomicInteger peakHolders = new AtomicInteger();
        AtomicInteger peakOthers = new AtomicInteger();
        AtomicBoolean sampling = new AtomicBoolean(true);
        Thread sampler = new Thread(() -> sample(sampling, peakHolders, peakOthers), "fleet-sampler");
        sampler.start();
        long t0 = System.nanoTime();
        List<Process> children = new ArrayList<>();
        for (int i = 0; i < processes; i++) {
            children.add(new ProcessBuilder(java, "-Xmx96m", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), OwnKeyWorkersMain.class.getName(), url, bed.endpoints().user(),
                    bed.endpoints().password(), Long.toString(base + i * 100L), Integer.toString(WORKERS),
                    Integer.toString(tries), barrier == null ? "" : barrier.toString(), Integer.toString(barrierCount))
                    .redirectErrorStream(true).start());
        }
        int jobs = 0;
        int errors = 0;
        int failedUnlocks = 0;
        int done = 0;
        String firstError = null;
        for (Process child : children) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            for (String line; (line = out.readLine()) != null; ) {
                if (line.startsWith("DONE ")) {
                    String[] f = line.split(" ");
                    jobs += Integer.parseInt(f[1]);
                    errors += Integer.parseInt(f[2]);
                    failedUnlocks += Integer.parseInt(f[3]);
                    done++;
                } else if (line.startsWith("ERROR") && firstError == null) {
                    firstError = line;
                }
            }
            assertTrue(child.waitFor(180, TimeUnit.SECONDS), "a replica is still running");
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        sampling.set(false);
        sampler.join();
        assertEquals(processes, done, "every replica finished: " + firstError);
        int left = 0;
        for (int i = 0; i < processes; i++) {
            for (int w = 0; w < WORKERS; w++) {
                left += bed.admin().holdersOf(base + i * 100L + w).size();
            }
        }
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
        }
        return new Outcome(processes, jobs, errors, failedUnlocks, left, peakHolders.get(), peakOthers.get(), millis,
                firstError);
    }

    /** The most backends of holders and of everything else (the pooler's servers) seen at once. */
    private void sample(AtomicBoolean sampling, AtomicInteger holders, AtomicInteger others) {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            while (sampling.get()) {
                try (ResultSet rs = s.executeQuery("SELECT count(*) FILTER (WHERE application_name LIKE 'lockhygiene lock holder%'),"
                        + " count(*) FILTER (WHERE application_name NOT LIKE 'lockhygiene lock holder%') FROM pg_stat_activity"
                        + " WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
                    rs.next();
                    holders.accumulateAndGet(rs.getInt(1), Math::max);
                    others.accumulateAndGet(rs.getInt(2), Math::max);
                }
                Thread.sleep(50);
            }
        } catch (SQLException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private void assertEveryJobDone(Outcome o) {
        assertEquals(o.processes() * WORKERS * TRIES, o.jobs(), String.valueOf(o.firstError()));
        assertEquals(0, o.errors(), o.firstError());
        assertEquals(0, o.failedUnlocks());
        assertEquals(0, o.left());
    }

    @Test
    void sixteenReplicasWithHoldersOnTheServerItselfDoEveryJob() throws Exception {
        // the same barrier as the control: 3 replicas hold locks at once before any runs its statements
        Outcome o = fleet(16, "auto", 990_000L, TRIES, java.nio.file.Files.createTempDirectory("lh-fleet-barrier"), 3);
        System.out.println("[fleet] 16 processes x 4 own-key workers, holders on the server (auto): " + o);
        assertEveryJobDone(o);
        assertTrue(o.peakHolderBackends() <= 16 + 4, "about one holder backend per process: " + o);
    }

    @Test
    void sixteenReplicasWithHoldersOnASessionModeEntryDoEveryJob() throws Exception {
        Outcome o = fleet(16, bed.sessionHolderUrl(), 992_000L, TRIES,
                java.nio.file.Files.createTempDirectory("lh-fleet-barrier"), 3);
        System.out.println("[fleet] 16 processes x 4 own-key workers, holders on a session-mode PgBouncer entry: " + o);
        assertEveryJobDone(o);
    }

    /**
     * The capped fleet setup: the holders behind a session-mode PgBouncer entry of 4 servers, 8 replicas that
     * want locks. With a zero linger a holder gives its server back as soon as it holds nothing, so the replicas
     * take turns: every job runs, no error, and never more than 4 holder backends at once.
     */
    @Test
    void eightReplicasTakeTurnsOnACappedHolderEntry() throws Exception {
        Outcome o = fleet(8, bed.cappedHolderUrl(), 996_000L, TRIES, null, 0, "lockhygiene.holderLinger=0");
        System.out.println("[fleet] capped: 8 processes x 4 own-key workers, holders on a 4-server session entry,"
                + " holderLinger=0: " + o);
        assertEveryJobDone(o);
        assertTrue(o.peakHolderBackends() <= 4, "the cap holds: " + o);
    }

    /**
     * The cap's bound: holders that keep their servers (a long linger) leave the others none; a holder that
     * cannot get one waits PgBouncer's query_wait_timeout (20 s here) and fails its owner's call with 53300 and
     * what to raise. No deadlock, no lock lost, exclusion kept: the replicas that got servers do every job.
     */
    @Test
    void aHolderThatCannotGetAServerFailsItsCallClearlyWithinTheBound() throws Exception {
        // the replicas that got a server hold their locks (a barrier no more than 4 can reach; it gives up after
        // 30 s), so the others find every server taken for longer than the pooler's 20 s bound
        Outcome o = fleet(6, bed.cappedHolderUrl(), 998_000L, 1, java.nio.file.Files.createTempDirectory(
                "lh-fleet-barrier"), 6, "lockhygiene.holderLinger=60s");
        System.out.println("[fleet] capped, long linger: 6 processes, holders on a 4-server session entry: " + o);
        assertTrue(o.errors() > 0, "some replica found no server: " + o);
        assertTrue(String.valueOf(o.firstError()).contains("pool_size")
                && String.valueOf(o.firstError()).contains("holderLinger"), "the error names what to raise: " + o);
        assertEquals(0, o.failedUnlocks(), o.toString());
        assertEquals(0, o.left(), o.toString());
        assertTrue(o.millis() < 120_000, "within the bound: " + o);
    }

    @Test
    void controlHoldersThroughTheTransactionPoolerStallTheFleet() throws Exception {
        // each stalled statement waits query_wait_timeout (20 s); the barrier makes 3 replicas (the pool's 3
        // servers) hold their locks at once, so the stall does not depend on how the replicas happen to interleave
        java.nio.file.Path barrier = java.nio.file.Files.createTempDirectory("lh-fleet-barrier");
        Outcome o = fleet(6, "pooler", 994_000L, 1, barrier, 3);
        System.out.println("[fleet] control: 6 processes x 4 own-key workers, holders through the pooler: " + o);
        assertTrue(o.errors() > 0 || o.jobs() < 6 * WORKERS, "control: the holders take the pool: " + o);
    }
}
