package io.lockhygiene.it.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.LockHygiene;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.events.EventType;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/** HikariCP over the driver and under the DataSource wrapper, and Flyway with both lock settings. */
@ExtendWith(TestBedExtension.class)
class PoolsAndFrameworksTest {
    private final TestBed bed = TestBed.shared();

    private HikariDataSource hikari(String url, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        return new HikariDataSource(config);
    }

    private PGSimpleDataSource simple(Route route) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(bed.url(route));
        ds.setUser(bed.endpoints().user());
        ds.setPassword(bed.endpoints().password());
        return ds;
    }

    private static void lock(DataSource ds, long k) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + k + ")");
        } // returned to the pool without unlocking
    }

    @Test
    void hikariOverTheDriverUnderTransactionPooling() throws Exception {
        long k = 940_001;
        try (HikariDataSource plain = hikari(bed.url(Route.TRANSACTION_POOL), 2)) {
            lock(plain, k);
            assertEquals(1, bed.admin().holdersOf(k).size(), "control: plain pgjdbc in Hikari leaves it");
        } finally {
            bed.admin().terminateHoldersOf(k);
        }
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             HikariDataSource guarded = hikari(bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=detect"), 2)) {
            lock(guarded, k);
            assertEquals(List.of(), bed.admin().holdersOf(k));
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size());
        }
    }

    @Test
    void dataSourceWrapperAroundHikariChecksOnReturn() throws Exception {
        long k = 940_002;
        // A pool of one direct connection: whoever borrows next gets the same backend.
        try (HikariDataSource plain = hikari(bed.url(Route.DIRECT), 1)) {
            lock(plain, k);
            try (Connection c = plain.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT pg_try_advisory_lock(" + k + ")")) {
                rs.next();
                assertTrue(rs.getBoolean(1), "control: the next borrower inherits the lock");
            }
            assertEquals(1, bed.admin().holdersOf(k).size());
        }
        assertEquals(List.of(), bed.admin().awaitReleased(k, 5_000));
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             HikariDataSource pool = hikari(bed.url(Route.DIRECT), 1)) {
            DataSource ds = new LockHygieneDataSource(pool);
            lock(ds, k);
            assertEquals(List.of(), bed.admin().holdersOf(k), "released when the connection went back to the pool");
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size());
            try (Connection c = ds.getConnection()) {
                assertTrue(c.unwrap(org.postgresql.PGConnection.class).getBackendPID() > 0);
            }
        }
    }

    @Test
    void nestedWrappingDoesTheWorkOnce() throws Exception {
        long k = 940_003;
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k));
             HikariDataSource pool = hikari(bed.lockHygieneUrl(Route.DIRECT), 1)) {
            DataSource ds = new LockHygieneDataSource(pool);
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                long seen = LockHygiene.counters().getStatementsSeen();
                s.execute("SELECT 1");
                assertEquals(seen + 1, LockHygiene.counters().getStatementsSeen(), "one check per statement");
                s.execute("SELECT pg_advisory_lock(" + k + ")");
            }
            assertEquals(List.of(), bed.admin().holdersOf(k), "the return event still reaches the inner guard");
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size());
        }
    }

    private Flyway flyway(DataSource ds, String schema, boolean transactionalLock) {
        FluentConfiguration config = Flyway.configure()
                .dataSource(ds)
                .schemas(schema)
                .locations("classpath:db/lhtest");
        // postgresql.transactional.lock: true (default) takes pg_try_advisory_xact_lock, false the session form
        config.getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(transactionalLock);
        return config.load();
    }

    private int rows(String schema) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM " + schema + ".applied_once")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void flywayWithTransactionalLockIsNeverFlagged() throws Exception {
        try (EventRecorder events = EventRecorder.all()) {
            flyway(new LockHygieneDataSource(simple(Route.TRANSACTION_POOL), props("lockhygiene.mode", "strict")),
                    "fw_txlock", true).migrate();
            assertEquals(2, rows("fw_txlock"));
            assertEquals(List.of(), events.of(EventType.REJECTED));
            assertEquals(List.of(), events.of(EventType.SESSION_LOCK_CALL));
            assertEquals(List.of(), events.of(EventType.LEAK_RELEASED));
        }
    }

    @Test
    void flywayWithSessionLockIsFlaggedAndLeavesNoLockBehind() throws Exception {
        try (EventRecorder events = EventRecorder.all()) {
            Flyway fw = flyway(new LockHygieneDataSource(simple(Route.TRANSACTION_POOL), props("lockhygiene.mode", "detect")),
                    "fw_sessionlock", false);
            // detect releases Flyway's session lock at the end of its autocommit statement (on the backend that
            // holds it), so Flyway's own pg_advisory_unlock later finds nothing and Flyway stops with "Unable to
            // release PostgreSQL advisory lock". That is the truth under transaction pooling: the lock could
            // never have protected the migration. lockhygiene.mode=emulate is the mode that keeps it working.
            FlywayException e = assertThrows(FlywayException.class, fw::migrate);
            assertTrue(e.getMessage().contains("advisory lock"), e.getMessage());
            assertFalse(events.of(EventType.SESSION_LOCK_CALL).isEmpty(), "Flyway's pg_try_advisory_lock is flagged");
            assertFalse(events.of(EventType.LEAK_RELEASED).isEmpty());
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "no lock left behind");
    }

    @Test
    void flywayWithSessionLockThroughSessionPoolingJustWorks() throws Exception {
        try (EventRecorder events = EventRecorder.all()) {
            flyway(new LockHygieneDataSource(simple(Route.SESSION_POOL), props("lockhygiene.poolMode", "session")),
                    "fw_session_pool", false).migrate();
            assertEquals(2, rows("fw_session_pool"));
            assertEquals(List.of(), events.types());
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks());
    }

    @Test
    void strictRejectsFlywaySessionLocksWithAClearMessage() {
        Flyway fw = flyway(new LockHygieneDataSource(simple(Route.TRANSACTION_POOL), props("lockhygiene.mode", "strict")),
                "fw_strict", false);
        FlywayException e = assertThrows(FlywayException.class, fw::migrate);
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        assertTrue(root.getMessage().contains("lockhygiene.mode=strict"), root.getMessage());
    }

    private static Properties props(String k, String v) {
        Properties p = new Properties();
        p.setProperty(k, v);
        return p;
    }
}
