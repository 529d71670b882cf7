package io.lockhygiene.it.traps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.events.EventType;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** FOR UPDATE ... SKIP LOCKED used as a mutex on one known key, through the transaction-mode PgBouncer. */
@ExtendWith(TestBedExtension.class)
class SkipLockedTest {
    private static final String ROW = "SELECT id FROM sk_jobs WHERE job_key = 'report-daily'";

    @BeforeAll
    static void schema() throws SQLException {
        try (Connection c = TestBed.shared().connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS sk_jobs");
            s.execute("CREATE TABLE sk_jobs (id bigint PRIMARY KEY, job_key text UNIQUE, tenant int, slot int,"
                    + " status text, UNIQUE (tenant, slot))");
            s.execute("INSERT INTO sk_jobs VALUES (1, 'report-daily', 1, 1, 'new'), (2, 'cleanup', 1, 2, 'new'),"
                    + " (3, 'vacuum', 2, 1, 'new')");
        }
    }

    private final TestBed bed = TestBed.shared();

    private static int rows(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            int n = 0;
            while (rs.next()) {
                n++;
            }
            return n;
        }
    }

    @Test
    void theTrapAndItsWarning() throws Exception {
        String sql = ROW + " FOR UPDATE SKIP LOCKED";
        try (Connection owner = bed.connect(Route.DIRECT); Connection plain = bed.connect(Route.TRANSACTION_POOL);
             Connection guarded = bed.connectLockHygiene(Route.TRANSACTION_POOL);
             EventRecorder events = EventRecorder.mentioning("report-daily")) {
            owner.setAutoCommit(false);
            assertEquals(1, rows(owner, ROW + " FOR UPDATE"));
            assertEquals(1, rows(plain, ROW), "the job exists");
            assertEquals(0, rows(plain, sql), "control: SKIP LOCKED reads 'no job' while the row is merely locked");
            assertEquals(0, rows(guarded, sql), "warn changes nothing in the result");
            assertEquals(1, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size());
            assertTrue(events.of(EventType.SKIP_LOCKED_SINGLE_KEY).get(0).message().contains("[job_key]"));
            owner.rollback();
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "SELECT * FROM sk_jobs WHERE id = 1 FOR UPDATE SKIP LOCKED | true",
            "SELECT * FROM sk_jobs s WHERE s.job_key = 'cleanup' FOR NO KEY UPDATE SKIP LOCKED | true",
            "SELECT * FROM sk_jobs WHERE tenant = 1 AND slot = 2 FOR SHARE SKIP LOCKED | true",
            "SELECT * FROM sk_jobs WHERE id = 1 AND status = 'new' FOR KEY SHARE SKIP LOCKED | true",
            "SELECT * FROM sk_jobs WHERE status = 'new' FOR UPDATE SKIP LOCKED | false",
            "SELECT * FROM sk_jobs WHERE tenant = 1 FOR UPDATE SKIP LOCKED | false",
            "SELECT * FROM sk_jobs WHERE status = 'new' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED | false",
            "SELECT * FROM sk_jobs WHERE id = 1 OR id = 2 FOR UPDATE SKIP LOCKED | false",
            "SELECT * FROM sk_jobs WHERE id = 1 FOR UPDATE | false",
            "SELECT 'FOR UPDATE SKIP LOCKED', id FROM sk_jobs WHERE id = 1 | false",
    })
    void flagsOnlyStatementsPinnedByAUniqueKey(String sql, boolean flagged) throws Exception {
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL);
             EventRecorder events = EventRecorder.mentioning("sk_jobs")) {
            c.setAutoCommit(false);
            rows(c, sql);
            c.rollback();
            assertEquals(flagged ? 1 : 0, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), sql);
        }
    }

    @Test
    void bindParameterKeysAreFlaggedToo() throws Exception {
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL);
             EventRecorder events = EventRecorder.mentioning("sk_jobs");
             PreparedStatement ps = c.prepareStatement("SELECT * FROM sk_jobs WHERE id = ? FOR UPDATE SKIP LOCKED")) {
            assertEquals(1, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), "checked once, when prepared");
            c.setAutoCommit(false);
            ps.setLong(1, 2);
            ps.executeQuery().close();
            c.rollback();
        }
    }

    @Test
    void strictRejectsAndSendsNothing() throws Exception {
        try (Connection c = bed.connectLockHygiene(Route.DIRECT, "lockhygiene.skipLocked=strict");
             Connection other = bed.connect(Route.DIRECT)) {
            c.setAutoCommit(false);
            SQLException e = assertThrows(SQLException.class, () -> rows(c, ROW + " FOR UPDATE SKIP LOCKED"));
            assertEquals("0A000", e.getSQLState());
            assertTrue(e.getMessage().contains("NOWAIT") && e.getMessage().contains("plain FOR UPDATE"), e.getMessage());
            other.setAutoCommit(false);
            assertEquals(1, rows(other, ROW + " FOR UPDATE NOWAIT"), "the row was never locked: nothing was sent");
            other.rollback();
            assertEquals(1, rows(c, ROW), "the transaction is intact");
            c.rollback();
            assertFalse(c.isClosed());
        }
    }

    /**
     * Issue 14, item 4: the lint's caches are per server, database and search_path. The same text names a
     * table with a unique key in one schema and one without in another; the verdict for one must not be
     * the other's (the first version cached by SQL text and table name for the whole JVM).
     */
    @Test
    void verdictsAreKeptPerSearchPath() throws Exception {
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS sk_a CASCADE");
            s.execute("DROP SCHEMA IF EXISTS sk_b CASCADE");
            s.execute("CREATE SCHEMA sk_a");
            s.execute("CREATE SCHEMA sk_b");
            s.execute("CREATE TABLE sk_a.sk_queue (id bigint PRIMARY KEY, state text)");
            s.execute("CREATE TABLE sk_b.sk_queue (id bigint, state text)"); // id is not unique here
        }
        String sql = "SELECT id FROM sk_queue WHERE id = 7 FOR UPDATE SKIP LOCKED";
        try (EventRecorder events = EventRecorder.mentioning("sk_queue")) {
            try (Connection a = bed.connectLockHygiene(Route.DIRECT, "currentSchema=sk_a");
                 Statement s = a.createStatement()) {
                s.executeQuery(sql).close();
            }
            assertEquals(1, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), "flagged where id is the key");
            try (Connection b = bed.connectLockHygiene(Route.DIRECT, "currentSchema=sk_b");
                 Statement s = b.createStatement()) {
                s.executeQuery(sql).close();
            }
            assertEquals(1, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), "not where id is not unique");
        }
    }
}
