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
 * connection runs explicit transactions and autocommit statements through the bed's transaction-mode PgBouncer with the default settings.
 * The sample of transaction ends (lockhygiene.leakCheckSample, here every end) is the per-connection core's rule
 * for every front end, explicit ends and autocommit statements alike, so R2DBC's COMMIT carries the check and the
 * lock is found and released, as JDBC's is (SampledLeakCheckTest); the control, sample 0, never finds it (R2DBC
 * sampled no end before the rule moved into the core, and no autocommit statement before it moved there too).
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

    /**
     * The hidden lock taken by an autocommit statement ({@code inTransaction} false) or inside an explicit
     * transaction, then up to {@link #TRANSACTIONS} explicit transactions and autocommit statements: how many ran
     * until the lock was released on its server (0: released by the end of the statement's own transaction), or -1.
     */
    private int statementsUntilReleased(String sample, boolean inTransaction) throws SQLException {
        Connection c = open(guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.leakCheckSample=" + sample));
        try {
            if (inTransaction) {
                begin(c);
            }
            one(c, "select lh_job_with_hidden_lock(" + KEY + ")::text"); // no SQL shows the lock
            if (inTransaction) {
                commit(c);
            }
            for (int i = 0; i <= TRANSACTIONS; i++) {
                if (bed.admin().holdersOf(KEY).isEmpty()) {
                    return i;
                }
                if (i % 2 == 0) {
                    begin(c);
                    assertEquals("1", one(c, "select 1::text"));
                    commit(c);
                } else {
                    assertEquals("2", one(c, "select 2::text"));
                }
            }
            return -1;
        } finally {
            close(c);
        }
    }

    private void foundBySample(boolean inTransaction) throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(KEY))) {
            int n = statementsUntilReleased("1", inTransaction);
            assertEquals(0, n, "every end sampled: the lock is found at the end of the transaction that took it");
            List<LockHygieneEvent> found = events.of(EventType.INHERITED_RELEASED);
            assertEquals(1, found.size(), events.types().toString());
            assertTrue(found.get(0).message().contains("found by a sampled check: lockhygiene.leakCheckSample=1.0"),
                    found.get(0).message());
        } finally {
            bed.admin().terminateHoldersOf(KEY);
        }
    }

    /** An autocommit statement the sample took runs in a transaction of ours whose COMMIT carries the check. */
    @Test
    void aHiddenLeakIsFoundAtTheCommitOfAnAutocommitStatementTheSampleTook() throws Exception {
        foundBySample(false);
    }

    @Test
    void aHiddenLeakIsFoundAtAnExplicitCommitTheSampleTook() throws Exception {
        foundBySample(true);
    }

    @Test
    void controlWithoutTheSampleTheLockStays() throws Exception {
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(KEY))) {
            assertEquals(-1, statementsUntilReleased("0", false), "found without the sample");
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "after " + TRANSACTIONS + " statements it is still held");
            assertEquals(List.of(), events.of(EventType.INHERITED_RELEASED));
        } finally {
            bed.admin().terminateHoldersOf(KEY);
        }
    }
}
