package io.lockhygiene.it.migrators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;

import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 12, item 4: a lock holder idle in its pinning transaction must hold no snapshot, or every
 * CREATE INDEX CONCURRENTLY of the database waits for it (virtualxid) until it commits. Every wait here
 * is bounded (statement_timeout, joins with a deadline).
 */
@ExtendWith(TestBedExtension.class)
class HolderSnapshotTest {
    private static final long KEY = 931_001;
    private final TestBed bed = TestBed.shared();

    @AfterEach
    void cleanUp() throws SQLException {
        bed.admin().terminateHoldersOf(KEY);
    }

    /** CREATE INDEX CONCURRENTLY on a fresh table, bounded by statement_timeout; returns the SQLState or "ok". */
    private String indexConcurrently(String table, int timeoutSeconds) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (id int, name text)");
            s.execute("SET statement_timeout = '" + timeoutSeconds + "s'");
            try {
                s.execute("CREATE INDEX CONCURRENTLY " + table + "_name ON " + table + " (name)");
                return "ok";
            } catch (SQLException e) {
                return e.getSQLState();
            } finally {
                s.execute("RESET statement_timeout");
                s.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    @Test
    void controlASessionIdleInTransactionAfterAnExtendedStatementBlocksIndexBuilds() throws Exception {
        try (Connection idle = bed.connect(Route.DIRECT); Statement s = idle.createStatement()) {
            idle.setAutoCommit(false);
            s.execute("SELECT pg_advisory_lock(" + KEY + ")"); // extended protocol, pgjdbc's default
            assertEquals(1, bed.admin().idleInTransactionWithSnapshot(), "it keeps backend_xmin while idle");
            assertEquals("57014", indexConcurrently("lh_cic_control", 3), "the index build waits for it until cancelled");
            idle.rollback();
        }
    }

    @Test
    void anEmulatedHolderIdleInItsTransactionDoesNotBlockIndexBuilds() throws Exception {
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + KEY + ")")) {
            rs.next();
            assertTrue(rs.getBoolean(1));
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "the holder holds the lock, idle in its transaction");
            assertEquals(0, bed.admin().idleInTransactionWithSnapshot(), "and holds no snapshot");
            assertEquals("ok", indexConcurrently("lh_cic_emulate", 30));
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "the lock is still held");
        }
    }

    @Test
    void flywaySessionLockWithAConcurrentIndexMigrationFourMigratorsAtOnce() throws Exception {
        PGSimpleDataSource simple = new PGSimpleDataSource();
        simple.setURL(bed.url(Route.TRANSACTION_POOL));
        simple.setUser(bed.endpoints().user());
        simple.setPassword(bed.endpoints().password());
        Properties emulate = new Properties();
        emulate.setProperty("lockhygiene.mode", "emulate");
        LockHygieneDataSource ds = new LockHygieneDataSource(simple, emulate);
        Migrators.Outcome o = Migrators.migrateAtOnce(ds, "fw_cic", "classpath:db/lhcic", 4, 60, 90_000);
        assertEquals(List.of(), o.stillRunning(), "still migrating after 90 s: the index build waits for a holder");
        List<String> failures = o.failures();
        assertEquals(List.of(), failures);
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM fw_cic.flyway_schema_history WHERE success"
                     + " AND version IS NOT NULL), (SELECT count(*) FROM pg_indexes WHERE schemaname = 'fw_cic'"
                     + " AND indexname = 'cic_jobs_name')")) {
            rs.next();
            assertEquals(2, rs.getInt(1), "each migration applied once");
            assertEquals(1, rs.getInt(2), "the index was built");
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "no lock left behind");
    }
}
