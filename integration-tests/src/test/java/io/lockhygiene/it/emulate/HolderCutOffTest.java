package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Blackhole;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 33: a lock holder cut off by the network (every packet of its connection dropped, as a partition
 * does: no reset, no close) frees its locks on the server within a bound, because its sessions set their own
 * TCP keepalives on the server ({@code tcp_keepalives_idle} 5 s, interval 5 s, count 3, and
 * {@code client_connection_check_interval} 2 s where the server has it): about 20 s. Another process then
 * gets the key, and the owner is told. A wait of the holder in PostgreSQL's queue on a cut-off session ends
 * too. Control: a plain pgjdbc session cut off at the same moment keeps its lock (or its wait) past that
 * bound: the server's TCP stack would give up after hours.
 */
@ExtendWith(TestBedExtension.class)
class HolderCutOffTest {
    /** What the bound is tested against: generous, a liveness bound, not a speed figure (printed below). */
    private static final long BOUND_SECONDS = 60;
    private final TestBed bed = TestBed.shared();

    private int serverPort() {
        return Integer.parseInt(bed.url(Route.DIRECT).replaceAll(".*:(\\d+)/.*", "$1"));
    }

    private int onlyHolderOf(long key) throws SQLException {
        List<Integer> holders = bed.admin().holdersOf(key);
        assertEquals(1, holders.size(), holders.toString());
        return holders.get(0);
    }

    /** A direct worker that waits in PostgreSQL's queue for {@code key} (bounded); the millis it got it after, or -1. */
    private CompletableFuture<Long> directWorkerGets(long key, long startNanos) {
        return CompletableFuture.supplyAsync(() -> {
            try (Connection b = bed.connect(Route.DIRECT); Statement s = b.createStatement()) {
                s.execute("SET statement_timeout = '" + BOUND_SECONDS + "s'");
                s.execute("SELECT pg_advisory_lock(" + key + ")");
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
                s.execute("SELECT pg_advisory_unlock(" + key + ")");
                return millis;
            } catch (SQLException e) {
                return -1L;
            }
        });
    }

    @Test
    void aCutOffHolderFreesItsLocksOnTheServerWithinTheBoundAndTheOwnerIsTold() throws Exception {
        long key = 933_101;
        long plainKey = 933_102;
        try (EventRecorder events = EventRecorder.all();
             Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement s = a.createStatement();
             Connection plain = bed.connect(Route.DIRECT); Statement ps = plain.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            ps.execute("SELECT pg_advisory_lock(" + plainKey + ")");
            int holder = onlyHolderOf(key);
            int plainBackend = onlyHolderOf(plainKey);
            long start = System.nanoTime();
            java.time.Instant cutAt = java.time.Instant.now();
            try (Blackhole cut = Blackhole.cut(serverPort(), bed.admin().clientPortOf(holder));
                 Blackhole cutPlain = Blackhole.cut(serverPort(), bed.admin().clientPortOf(plainBackend))) {
                CompletableFuture<Long> b = directWorkerGets(key, start);
                Long got = b.get(BOUND_SECONDS + 10, TimeUnit.SECONDS);
                assertTrue(got >= 0, "another process gets the key within " + BOUND_SECONDS + " s");
                boolean plainStillHeld = bed.admin().holdersOf(plainKey).contains(plainBackend);
                List<io.lockhygiene.events.LockHygieneEvent> lost = events.of(EventType.LOCK_LOST);
                System.out.println("[cut off] the holder's connection dropped: the server freed its lock after " + got
                        + " ms, another process got it; the owner was told (LOCK_LOST) after " + (lost.isEmpty() ? "-"
                        : java.time.Duration.between(cutAt, lost.get(0).time()).toMillis()) + " ms; a plain session"
                        + " cut off at the same time still holds its lock: " + plainStillHeld);
                assertTrue(plainStillHeld, "control: without keepalives the server keeps a cut-off session's lock");
                assertEquals(1, lost.size(), "the owner's holder said it lost its lock");
            }
            SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT 1"));
            assertTrue(e.getSQLState().startsWith("08"), e.toString());
        } finally {
            bed.admin().terminateHoldersOf(plainKey);
        }
    }

    @Test
    void aWaitInPostgresQueueOnACutOffSessionEnds() throws Exception {
        long key = 933_111;
        try (Connection x = bed.connect(Route.DIRECT); Statement xs = x.createStatement();
             Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Connection plain = bed.connect(Route.DIRECT)) {
            xs.execute("SELECT pg_advisory_lock(" + key + ")"); // another process holds it: A waits in the server's queue
            CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> waitFor(a, key));
            CompletableFuture<String> plainWaiting = CompletableFuture.supplyAsync(() -> waitFor(plain, key));
            List<Integer> waiters = awaitWaiters(key, 2);
            int plainPid = -1;
            int holderWaiter = -1;
            for (int pid : waiters) {
                if (isHolderSession(pid)) {
                    holderWaiter = pid;
                } else {
                    plainPid = pid;
                }
            }
            assertTrue(holderWaiter > 0 && plainPid > 0, waiters.toString());
            long start = System.nanoTime();
            try (Blackhole cut = Blackhole.cut(serverPort(), bed.admin().clientPortOf(holderWaiter));
                 Blackhole cutPlain = Blackhole.cut(serverPort(), bed.admin().clientPortOf(plainPid))) {
                String outcome = waiting.get(BOUND_SECONDS + 10, TimeUnit.SECONDS);
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                boolean plainStillWaits = bed.admin().waitersFor(key).contains(plainPid);
                System.out.println("[cut off] a waiting session of the holder dropped: the wait ended after " + millis
                        + " ms with " + outcome + "; a plain session's wait, cut off too, still there: " + plainStillWaits);
                assertNotNull(outcome);
                assertTrue(outcome.startsWith("08") || outcome.startsWith("57P"), outcome);
                assertTrue(plainStillWaits, "control: the plain session's wait outlives the bound");
                assertFalse(bed.admin().backendExists(holderWaiter), "the server ended the holder's waiting session");
            }
            xs.execute("SELECT pg_advisory_unlock(" + key + ")"); // the plain session, reachable again, gets it
            assertEquals("granted", plainWaiting.get(60, TimeUnit.SECONDS));
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }

    private static String waitFor(Connection c, long key) {
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
            return "granted";
        } catch (SQLException e) {
            return e.getSQLState() + " " + e.getMessage();
        }
    }

    private boolean isHolderSession(int pid) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT application_name FROM pg_stat_activity WHERE pid = " + pid)) {
            return rs.next() && "lockhygiene lock holder".equals(rs.getString(1));
        }
    }

    private List<Integer> awaitWaiters(long key, int n) throws Exception {
        List<Integer> w = Eventually.await(n + " waiting in PostgreSQL's queue", Duration.ofSeconds(30), () -> {
            List<Integer> waiting = bed.admin().waitersFor(key);
            return waiting.size() >= n ? waiting : null;
        });
        assertEquals(n, w.size(), "both wait in PostgreSQL's queue: " + w);
        return w;
    }
}
