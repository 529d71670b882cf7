package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A holder session's seal lives in the first partition of the server's lock table, so that a backend's exit,
 * which releases its locks partition by partition, lets the seal go before any key it held (see
 * {@link Seals#freshInFirstPartition}; {@link FencedCommitTest} is the race end to end). What can be checked
 * against the server: its hash is ours (random texts against {@code hashtext}), and every seal in pg_locks, of
 * the main sessions, a waiting session and a pin through the application's pooler, is in partition 0 by that
 * hash. Runs on every supported major.
 */
@ExtendWith(TestBedExtension.class)
class SealPlacementTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void theServersHashIsOurs() throws SQLException {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            StringBuilder b = new StringBuilder();
            for (int n = random.nextInt(70); n > 0; n--) {
                b.append((char) (32 + random.nextInt(95)));
            }
            texts.add(b.toString());
        }
        try (Connection c = bed.connect(Route.DIRECT); PreparedStatement ps = c.prepareStatement(
                "SELECT t, pg_catalog.hashtext(t COLLATE pg_catalog.\"C\") FROM unnest(?::text[]) AS t")) {
            ps.setArray(1, c.createArrayOf("text", texts.toArray()));
            int n = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String t = rs.getString(1);
                    assertEquals(rs.getInt(2), Seals.hashBytes(t.getBytes(StandardCharsets.US_ASCII)),
                            "hash of '" + t + "' (seed " + seed + ")");
                    n++;
                }
            }
            assertEquals(texts.size(), n);
        }
    }

    /** The seals in pg_locks: (database, objid) of each. */
    private List<long[]> seals() throws SQLException {
        List<long[]> out = new ArrayList<>();
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT database::text::bigint, objid::text::bigint FROM pg_locks"
                     + " WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND classid::text::bigint = "
                     + Integer.toUnsignedLong(Seals.CLASSID))) {
            while (rs.next()) {
                out.add(new long[] {rs.getLong(1), rs.getLong(2)});
            }
        }
        return out;
    }

    private void assertInTheFirstPartition(List<long[]> seals, int atLeast, String what) {
        assertTrue(seals.size() >= atLeast, what + ": " + seals.size() + " seals");
        for (long[] s : seals) {
            assertEquals(0, Seals.lockPartition((int) s[0], Seals.CLASSID, (int) s[1]),
                    what + ": seal " + s[1] + " of database " + s[0]);
        }
    }

    @Test
    void everyHolderSessionsSealIsInTheFirstPartition() throws Exception {
        long k = 934_001;
        try (Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderSessions=4"); Statement s = a.createStatement()) {
            for (int i = 0; i < 16; i++) {
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + (k + i) + ")"));
            }
            // a waiting session too: k + 100 is held directly, A waits for it on a session of its own
            try (Connection b = bed.connect(Route.DIRECT); Statement bs = b.createStatement()) {
                bs.execute("SELECT pg_advisory_lock(" + (k + 100) + ")");
                CompletableFuture<Boolean> waits = CompletableFuture.supplyAsync(() -> {
                    try (Statement ws = a.createStatement()) {
                        ws.execute("SELECT pg_advisory_lock(" + (k + 100) + ")");
                        return true;
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                Eventually.until("A waits for " + (k + 100), Duration.ofSeconds(30),
                        () -> !bed.admin().waitersFor(k + 100).isEmpty());
                assertInTheFirstPartition(seals(), 3, "main sessions and a waiting session");
                bs.execute("SELECT pg_advisory_unlock(" + (k + 100) + ")");
                assertTrue(waits.get(30, TimeUnit.SECONDS));
            }
            s.execute("SELECT pg_advisory_unlock_all()");
        }
    }

    @Test
    void aPinsSealThroughTheApplicationsPoolerIsInTheFirstPartition() throws Exception {
        long k = 934_201;
        try (Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                "lockhygiene.holderUrl=pooler"); Statement s = a.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"));
            assertInTheFirstPartition(seals(), 1, "the pin");
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"));
        }
    }
}
