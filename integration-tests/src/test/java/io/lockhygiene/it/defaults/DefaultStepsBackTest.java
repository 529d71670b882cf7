package io.lockhygiene.it.defaults;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.bed.OpaqueDataSource;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 45: where the lock holder can get no session of its own and nobody chose a mode, the default may not
 * make things worse than plain pgjdbc. A DataSource that says nothing of how it connects (so {@code auto} learns
 * nothing) through the transaction pooler: the default steps back to plain pgjdbc's behaviour, reported. A
 * session lock taken in autocommit stays held on the server after its statement, as with plain pgjdbc
 * ({@code detect} would release it with the statement, which is worse), no holder session is opened, and no
 * connection of the application's pool is kept. Chosen by name, emulate holds the lock through the pool.
 */
@ExtendWith(TestBedExtension.class)
class DefaultStepsBackTest {
    private final TestBed bed = TestBed.shared();

    /** A DataSource LockHygiene cannot read (no URL, no pool configuration) through the transaction pooler, counting its borrows. */
    private DataSource opaque(AtomicInteger opened) {
        return OpaqueDataSource.of(() -> {
            opened.incrementAndGet();
            return bed.connect(Route.TRANSACTION_POOL);
        });
    }

    private int holderSessions() throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'lockhygiene lock holder%'"
                     + " AND datname = current_database()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void theDefaultStepsBackToPlainPgjdbcWhereTheHolderHasNoSessionOfItsOwn() throws Exception {
        long key = 945_101;
        int holdersBefore = holderSessions();
        AtomicInteger opened = new AtomicInteger();
        try (LockHygieneDataSource ds = new LockHygieneDataSource(opaque(opened), new Properties())) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")"));
                List<String> holding = bed.admin().applicationNamesHolding(key);
                assertEquals(1, holding.size(), "the lock stays held on the server after its statement, as with plain"
                        + " pgjdbc (detect would have released it): " + holding);
                assertFalse(holding.get(0).startsWith("lockhygiene lock holder"), "held on the pooled server, not by a holder");
            }
            assertEquals(1, opened.get(), "the application's own borrow only: the holder kept none of the pool's");
            assertEquals(holdersBefore, holderSessions(), "no holder session was opened");
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }

    /**
     * A direct connection is a session of its own: the default places no holder there (no holder session, no
     * probe), the lock is the connection's own as with pgjdbc, and the start-up line says why.
     */
    @Test
    void onASessionOfItsOwnTheDefaultPlacesNoHolder() throws Exception {
        long key = 945_103;
        int holdersBefore = holderSessions();
        try (Connection c = bed.connectLockHygiene(Route.DIRECT); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")"));
            int own;
            try (ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                own = rs.getInt(1);
            }
            assertEquals(List.of(own), bed.admin().holdersOf(key), "the connection's own backend holds it");
            assertEquals(holdersBefore, holderSessions(), "no holder session");
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + key + ")"));
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
        String line = io.lockhygiene.internal.settings.ModeLine.line(io.lockhygiene.settings.Settings.builder()
                .mode(io.lockhygiene.settings.Settings.Mode.DETECT, io.lockhygiene.internal.settings.ModeLine.SESSION_OF_ITS_OWN)
                .build(), "JDBC");
        assertTrue(line.contains("lockhygiene.mode=emulate (the default)") && line.contains("session of its own"), line);
    }

    @Test
    void emulateChosenByNameHoldsTheLockThroughThePoolAnyway() throws Exception {
        long key = 945_102;
        Properties chosen = new Properties();
        chosen.setProperty("lockhygiene.mode", "emulate");
        AtomicInteger opened = new AtomicInteger();
        try (LockHygieneDataSource ds = new LockHygieneDataSource(opaque(opened), chosen)) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")"));
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")"), "re-entrant, as one session");
                assertTrue(opened.get() >= 2, "the holder took a connection of the application's pool: " + opened);
                assertEquals(1, bed.admin().applicationNamesHolding(key).size());
                assertTrue(bool(s, "SELECT pg_advisory_unlock(" + key + ")"));
                assertTrue(bool(s, "SELECT pg_advisory_unlock(" + key + ")"));
            }
            assertTrue(bed.admin().awaitReleased(key, 2_000).isEmpty(), "released by its unlocks");
        } finally {
            bed.admin().terminateHoldersOf(key);
        }
    }
}
