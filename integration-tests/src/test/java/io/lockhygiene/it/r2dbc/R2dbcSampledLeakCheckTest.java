package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.begin;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.commit;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.one;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;

/**
 * The leak no SQL shows, through R2DBC: a PL/pgSQL function takes a session lock and never releases it, then the
 * connection runs explicit transactions through the bed's transaction-mode PgBouncer with the default settings.
 * The sample of transaction ends (lockhygiene.leakCheckSample, here every end) is the per-connection core's rule
 * for every front end, so R2DBC's COMMIT carries the check and the lock is found and released, as JDBC's is
 * (SampledLeakCheckTest); the control, sample 0, never finds it (and R2DBC did not sample at all before the rule
 * moved into the core).
 */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcSampledLeakCheckTest {
    private static final long KEY = 1_993_001;
    private static final int TRANSACTIONS = 60;
    private final TestBed bed = TestBed.shared();

    @BeforeAll
    static void function() throws SQLException {
        try (java.sql.Connection c = TestBed.shared().connect(Route.DIRECT); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE FUNCTION lh_job_with_hidden_lock(k bigint) RETURNS void LANGUAGE plpgsql"
                    + " AS $$ BEGIN PERFORM pg_advisory_lock(k); END $$");
        }
    }

    /** Explicit transactions run after the hidden lock until it was released on its server, or -1. */
    private int transactionsUntilReleased(String sample) throws SQLException {
        Connection c = open(guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.leakCheckSample=" + sample));
        try {
            one(c, "select lh_job_with_hidden_lock(" + KEY + ")::text"); // autocommit: no SQL shows the lock
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "the function took the lock and kept it");
            for (int i = 1; i <= TRANSACTIONS; i++) {
                begin(c);
                assertEquals("1", one(c, "select 1::text"));
                commit(c);
                if (bed.admin().holdersOf(KEY).isEmpty()) {
                    return i;
                }
            }
            return -1;
        } finally {
            close(c);
        }
    }

    @Test
    void aHiddenLeakIsFoundAtACommitTheSampleTook() throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(KEY))) {
            int n = transactionsUntilReleased("1");
            assertTrue(n > 0, "not found in " + TRANSACTIONS + " sampled transactions");
            List<LockHygieneEvent> found = events.of(EventType.INHERITED_RELEASED);
            assertEquals(1, found.size(), events.types().toString());
            assertTrue(found.get(0).message().contains("found by a sampled check: lockhygiene.leakCheckSample=1.0"),
                    found.get(0).message());
            System.out.printf("R2DBC SAMPLED leakCheckSample=1: released at the COMMIT of transaction %d%n", n);
        } finally {
            bed.admin().terminateHoldersOf(KEY);
        }
    }

    @Test
    void controlWithoutTheSampleTheLockStays() throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(KEY))) {
            assertEquals(-1, transactionsUntilReleased("0"), "found without the sample");
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "after " + TRANSACTIONS + " transactions it is still held");
            assertEquals(List.of(), events.of(EventType.INHERITED_RELEASED));
        } finally {
            bed.admin().terminateHoldersOf(KEY);
        }
    }
}
