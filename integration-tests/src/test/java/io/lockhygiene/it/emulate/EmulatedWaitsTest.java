package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.monitor.AdvisoryWait;
import io.lockhygiene.monitor.AdvisoryWaitMonitor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Emulated waits stay visible to the seed's alert: a blocking call that waits for another process waits in
 * PostgreSQL's own queue, on a connection of the holder's, where the seed's pg_locks query (the wait monitor)
 * sees it with the backend that holds the key; a wait for another owner of the same process, which pg_locks
 * cannot show, is reported by the wait monitor from the JVM (owner, key, since when, who holds it).
 */
@ExtendWith(TestBedExtension.class)
class EmulatedWaitsTest {
    private final TestBed bed = TestBed.shared();

    private CompletableFuture<String> lockInThread(Connection c, long key) {
        return CompletableFuture.supplyAsync(() -> {
            try (Statement s = c.createStatement()) {
                s.setQueryTimeout(30);
                s.execute("SELECT pg_advisory_lock(" + key + ")");
                return "granted";
            } catch (SQLException e) {
                return e.getSQLState();
            }
        });
    }

    /** Polls until a wait over the threshold shows (bounded), and returns what the last poll saw. */
    private static List<AdvisoryWait> awaitWaits(AdvisoryWaitMonitor m) throws Exception {
        List<AdvisoryWait> waits = m.poll();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (waits.isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            waits = m.poll();
        }
        return waits;
    }

    @Test
    void aWaitForAnotherProcessIsInPgLocksWithItsHolder() throws Exception {
        long k = 985_001;
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor.forUrl(bed.url(Route.DIRECT), bed.credentials())
                     .threshold(Duration.ofMillis(200)).name("emulated-server-wait").build()) {
            o.execute("SELECT pg_advisory_lock(" + k + ")");
            int otherPid = bed.admin().holdersOf(k).get(0);
            CompletableFuture<String> waiting = lockInThread(c, k);
            List<AdvisoryWait> waits = awaitWaits(monitor);
            assertEquals(1, waits.size(), waits.toString());
            AdvisoryWait w = waits.get(0);
            assertFalse(w.isEmulated(), "a backend of the holder's waits in PostgreSQL's queue");
            assertEquals(otherPid, w.blockingPid());
            assertEquals(Long.toString(k), w.key());
            o.execute("SELECT pg_advisory_unlock(" + k + ")");
            assertEquals("granted", waiting.get(10, TimeUnit.SECONDS), "and gets the lock when the other lets go");
            assertEquals(1, bed.admin().holdersOf(k).size());
        }
    }

    @Test
    void aWaitForAnotherOwnerOfTheProcessIsReportedFromTheJvm() throws Exception {
        long k = 985_011;
        try (Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Connection b = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement sa = a.createStatement();
             AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor.forUrl(bed.url(Route.DIRECT), bed.credentials())
                     .threshold(Duration.ofMillis(200)).name("emulated-local-wait").build()) {
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            CompletableFuture<String> waiting = lockInThread(b, k);
            List<AdvisoryWait> waits = awaitWaits(monitor);
            assertEquals(1, waits.size(), waits.toString());
            AdvisoryWait w = waits.get(0);
            assertTrue(w.isEmulated(), "pg_locks cannot show a wait inside the JVM: the monitor does");
            assertEquals(Long.toString(k), w.key());
            assertTrue(w.owner().startsWith("lh-") && w.holder().startsWith("lh-"), w.owner() + " / " + w.holder());
            assertTrue(w.waitMillis() >= 200);
            assertEquals(1, monitor.getCurrentWaits());
            sa.execute("SELECT pg_advisory_unlock(" + k + ")");
            assertEquals("granted", waiting.get(10, TimeUnit.SECONDS));
            assertEquals(List.of(), monitor.poll());
        }
    }

    /**
     * A deadlock between an owner of this process and another process: PostgreSQL sees the other process wait
     * for the holder's backend and the holder's waiting connection wait for the other process, but not that the
     * holder keeps the key for the very owner that waits. The holder's probe (once a second after the first,
     * as PostgreSQL's deadlock_timeout) finds the cycle, and the owner's statement ends with 40P01, as one
     * side's would in PostgreSQL; the other process then goes on once the owner lets go.
     */
    @Test
    void aDeadlockWithAnotherProcessIsDetected() throws Exception {
        long k1 = 985_021;
        long k2 = 985_022;
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement s = c.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + k2 + ")");
            s.execute("SELECT pg_advisory_lock(" + k1 + ")");
            CompletableFuture<String> ours = lockInThread(c, k2);
            awaitPgWaits(1);
            CompletableFuture<String> theirs = lockInThread(other, k1);
            assertEquals("40P01", ours.get(20, TimeUnit.SECONDS), "the cycle is found and broken on our side");
            assertFalse(theirs.isDone(), "the other process still waits: the owner keeps what it held, as a session does");
            s.execute("SELECT pg_advisory_unlock(" + k1 + ")");
            assertEquals("granted", theirs.get(10, TimeUnit.SECONDS));
        }
    }

    private void awaitPgWaits(int n) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (Connection d = bed.connect(Route.DIRECT); Statement s = d.createStatement();
                 java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")) {
                rs.next();
                if (rs.getInt(1) >= n) {
                    return;
                }
            }
        }
        throw new AssertionError("no wait in pg_locks");
    }
}
