package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
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
 * Owners of one process that wait for each other under emulate (the lock table's own queue), as PostgreSQL's
 * sessions do: a wait, a deadlock, a query timeout; and lockhygiene.lockTimeout on a wait for another process.
 */
@ExtendWith(TestBedExtension.class)
class LocalWaitsTest {
    private final TestBed bed = TestBed.shared();

    /**
     * True once a wait for {@code key} is seen where it lives: PostgreSQL's queue (an ungranted lock in
     * pg_locks: the reference, or a wait of the holder's) or the lock table's waits in this JVM; false if the
     * call ended first. Bounded by 10 s. An observed state, never a guess by sleeping.
     */
    private boolean awaitWaiting(long key, java.util.concurrent.Future<String> call) throws Exception {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try (Connection c = bed.connect(Route.DIRECT); java.sql.PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1"
                        + " AND ((classid::bigint << 32) | objid::bigint) = ?")) {
            ps.setLong(1, key);
            while (System.nanoTime() < until) {
                if (call.isDone()) {
                    return false;
                }
                for (io.lockhygiene.internal.holder.EmulatedWait w : io.lockhygiene.internal.holder.EmulatedWait.snapshot()) {
                    if (w.key().equals(io.lockhygiene.internal.locktable.AdvisoryKey.bigint(key))) {
                        return true;
                    }
                }
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) > 0) {
                        return true;
                    }
                }
                Thread.sleep(5); // polling an observed state, bounded above
            }
        }
        return false;
    }

    /** Runs {@code sql} on {@code c} in a thread; the outcome ("ok" or the SQLState) arrives in the future. */
    private static java.util.concurrent.CompletableFuture<String> inThread(Connection c, String sql, int timeoutSeconds) {
        // a thread of its own each (the common pool may have one thread on a small machine)
        return java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try (Statement s = c.createStatement()) {
                s.setQueryTimeout(timeoutSeconds);
                s.execute(sql);
                return "ok";
            } catch (SQLException e) {
                return e.getSQLState();
            }
        }, r -> new Thread(r, "local-wait").start());
    }

    /**
     * Two connections of one process, as PostgreSQL answers two sessions: a blocking call waits for the
     * other's unlock and then gets the key; two owners waiting for each other get 40P01 (one of them); a
     * query timeout ends a wait with 57014. Run the same against direct PostgreSQL (the reference).
     */
    private List<String> localWaits(SharedHolderTest.WorkersScenarioSource source, long k) throws Exception {
        List<String> outcomes = new ArrayList<>();
        try (Connection a = source.open(); Connection b = source.open();
             Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            var waiting = inThread(b, "SELECT pg_advisory_lock(" + k + ")", 10);
            outcomes.add("waits: " + awaitWaiting(k, waiting));
            sa.execute("SELECT pg_advisory_unlock(" + k + ")");
            outcomes.add("then gets it: " + waiting.get(10, TimeUnit.SECONDS));
            outcomes.add("a tries: " + bool(sa, "SELECT pg_try_advisory_lock(" + k + ")"));
            sb.execute("SELECT pg_advisory_unlock(" + k + ")");
            sb.execute("SELECT pg_advisory_lock(" + (k + 1) + ")");
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            var aWaits = inThread(a, "SELECT pg_advisory_lock(" + (k + 1) + ")", 10);
            assertTrue(awaitWaiting(k + 1, aWaits), "a waits before b closes the cycle");
            var bWaits = inThread(b, "SELECT pg_advisory_lock(" + k + ")", 10);
            String first = java.util.concurrent.CompletableFuture.anyOf(aWaits, bWaits).get(10, TimeUnit.SECONDS).toString();
            outcomes.add("deadlock: " + first);
            // the victim's session keeps its locks (session level): release them so the other goes on
            if (aWaits.isDone()) {
                sa.execute("SELECT pg_advisory_unlock_all()");
            } else {
                sb.execute("SELECT pg_advisory_unlock_all()");
            }
            outcomes.add("the other then: " + java.util.concurrent.CompletableFuture.allOf(aWaits, bWaits)
                    .thenApply(v -> aWaits.join() + "/" + bWaits.join()).get(10, TimeUnit.SECONDS).replace("40P01", "")
                    .replace("/", ""));
            sa.execute("SELECT pg_advisory_unlock_all()");
            sb.execute("SELECT pg_advisory_unlock_all()");
            sa.execute("SELECT pg_advisory_lock(" + k + ")");
            outcomes.add("query timeout: " + inThread(b, "SELECT pg_advisory_lock(" + k + ")", 1).get(10, TimeUnit.SECONDS));
            sa.execute("SELECT pg_advisory_unlock_all()");
        }
        return outcomes;
    }

    @Test
    void localOwnersWaitDeadlockAndTimeOutAsSessionsDo() throws Exception {
        List<String> reference = localWaits(() -> bed.connect(Route.DIRECT), 978_001);
        List<String> emulated = localWaits(() -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate"), 978_011);
        System.out.println("[shared holder] local waits: PostgreSQL " + reference + "\n[shared holder]              emulate "
                + emulated);
        assertEquals(List.of("waits: true", "then gets it: ok", "a tries: false", "deadlock: 40P01", "the other then: ok",
                "query timeout: 57014"), reference, "the reference itself");
        assertEquals(reference, emulated);
        assertEquals(List.of(), bed.admin().awaitReleased(978_011, 2_000));
        assertEquals(List.of(), bed.admin().awaitReleased(978_012, 2_000));
    }

    @Test
    void lockTimeoutBoundsAWaitForAnotherProcess() throws Exception {
        long k = 978_101;
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                     "lockhygiene.lockTimeout=300ms"); Statement s = c.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + k + ")");
            SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class,
                    () -> s.execute("SELECT pg_advisory_lock(" + k + ")"));
            assertEquals("55P03", e.getSQLState(), "ended by lockhygiene.lockTimeout, not by the query timeout");
            assertEquals(0, bed.admin().idleInTransaction(), "waiting pinned nothing");
            o.execute("SELECT pg_advisory_unlock(" + k + ")");
            s.execute("SELECT pg_advisory_lock(" + k + ")");
            s.execute("SELECT pg_advisory_unlock(" + k + ")");
        }
    }
}
