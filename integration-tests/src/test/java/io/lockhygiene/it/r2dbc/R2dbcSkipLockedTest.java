package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.begin;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.plain;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.rollback;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.R2dbcException;

/**
 * The SKIP LOCKED single-key trap through R2DBC, as JDBC's {@code SkipLockedTest}: {@code FOR UPDATE SKIP LOCKED}
 * pinned to one row by a unique key reads "no job" while the row is merely locked. The core's check says so (warn)
 * or refuses before sending (strict); R2DBC reads the catalog for it without blocking (under BlockHound). The
 * control: plain r2dbc-postgresql reads no row and nothing says why.
 */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcSkipLockedTest {
    private static final String ROW = "SELECT id::text FROM sk_r2_jobs WHERE job_key = 'report-daily'";
    private final TestBed bed = TestBed.shared();

    @BeforeAll
    static void schema() throws SQLException {
        try (java.sql.Connection c = TestBed.shared().connect(Route.DIRECT); java.sql.Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS sk_r2_jobs");
            s.execute("CREATE TABLE sk_r2_jobs (id bigint PRIMARY KEY, job_key text UNIQUE, tenant int, slot int,"
                    + " status text, UNIQUE (tenant, slot))");
            s.execute("INSERT INTO sk_r2_jobs VALUES (1, 'report-daily', 1, 1, 'new'), (2, 'cleanup', 1, 2, 'new'),"
                    + " (3, 'vacuum', 2, 1, 'new')");
        }
    }

    @Test
    void theTrapIsSaidAndTheResultUnchanged() throws Exception {
        String sql = ROW + " FOR UPDATE SKIP LOCKED";
        Connection control = open(plain(bed, Route.TRANSACTION_POOL));
        Connection c = open(guarded(bed, Route.TRANSACTION_POOL));
        try (java.sql.Connection owner = bed.connect(Route.DIRECT);
             EventRecorder events = EventRecorder.mentioning("sk_r2_jobs")) {
            owner.setAutoCommit(false);
            try (java.sql.Statement s = owner.createStatement()) {
                s.executeQuery(ROW + " FOR UPDATE").close(); // the row is merely locked
            }
            assertEquals(List.of("1"), rows(control, ROW), "the job exists");
            assertEquals(List.of(), rows(control, sql), "control: SKIP LOCKED reads 'no job'");
            assertEquals(List.of(), events.of(EventType.SKIP_LOCKED_SINGLE_KEY), "control: nothing says why");
            assertEquals(List.of(), rows(c, sql), "warn changes nothing in the result");
            List<LockHygieneEvent> said = events.of(EventType.SKIP_LOCKED_SINGLE_KEY);
            assertEquals(1, said.size(), events.types().toString());
            assertTrue(said.get(0).message().contains("[job_key]"), said.get(0).message());
            // a bind parameter pins one row too; read in a transaction the application opened
            begin(c);
            assertEquals(List.of(), rows(c, "SELECT id::text FROM sk_r2_jobs WHERE id = $1 FOR UPDATE SKIP LOCKED", 1L));
            rollback(c);
            assertEquals(2, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), events.types().toString());
            owner.rollback();
        } finally {
            close(c);
            close(control);
        }
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', value = {
            "SELECT id::text FROM sk_r2_jobs s WHERE s.job_key = 'cleanup' FOR NO KEY UPDATE SKIP LOCKED | true",
            "SELECT id::text FROM sk_r2_jobs WHERE tenant = 1 AND slot = 2 FOR SHARE SKIP LOCKED | true",
            "SELECT id::text FROM sk_r2_jobs WHERE status = 'new' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED | false",
            "SELECT id::text FROM sk_r2_jobs WHERE tenant = 1 FOR UPDATE SKIP LOCKED | false",
            "SELECT id::text FROM sk_r2_jobs WHERE id = 1 FOR UPDATE | false",
    })
    void flagsOnlyStatementsPinnedByAUniqueKey(String sql, boolean flagged) throws Exception {
        Connection c = open(guarded(bed, Route.TRANSACTION_POOL));
        try (EventRecorder events = EventRecorder.mentioning("sk_r2_jobs")) {
            begin(c);
            rows(c, sql);
            rollback(c);
            assertEquals(flagged ? 1 : 0, events.of(EventType.SKIP_LOCKED_SINGLE_KEY).size(), sql);
        } finally {
            close(c);
        }
    }

    @Test
    void strictRefusesAndSendsNothing() throws Exception {
        Connection c = open(guarded(bed, Route.DIRECT, "lockhygiene.skipLocked=strict"));
        try (java.sql.Connection other = bed.connect(Route.DIRECT);
             EventRecorder events = EventRecorder.mentioning("sk_r2_jobs")) {
            begin(c);
            R2dbcException e = assertThrows(R2dbcException.class, () -> rows(c, ROW + " FOR UPDATE SKIP LOCKED"));
            assertEquals("0A000", e.getSqlState());
            assertTrue(e.getMessage().contains("NOWAIT") && e.getMessage().contains("plain FOR UPDATE"), e.getMessage());
            assertEquals(1, events.of(EventType.REJECTED).size(), events.types().toString());
            other.setAutoCommit(false);
            try (java.sql.Statement s = other.createStatement();
                 java.sql.ResultSet rs = s.executeQuery(ROW + " FOR UPDATE NOWAIT")) {
                assertTrue(rs.next(), "the row was never locked: nothing was sent");
            }
            other.rollback();
            assertEquals(List.of("1"), rows(c, ROW), "the transaction is intact");
            rollback(c);
            assertTrue(c.isAutoCommit(), "the transaction is over");
        } finally {
            close(c);
        }
    }
}
