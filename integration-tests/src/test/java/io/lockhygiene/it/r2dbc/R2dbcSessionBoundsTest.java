package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.begin;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.one;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.plain;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.rollback;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue 43 for R2DBC: the session's lock_timeout and statement_timeout (SET, SET LOCAL) end an emulated wait as
 * they end PostgreSQL's, read from the connection's own session off the event loop (under BlockHound). Direct
 * r2dbc-postgresql is the reference.
 */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcSessionBoundsTest {
    private final TestBed bed = TestBed.shared();

    /** The SETs these tests send through the poolers in autocommit stay on pooled servers: put them back. */
    @org.junit.jupiter.api.AfterEach
    void resetPooledServers() throws Exception {
        bed.admin().resetTransactionPoolServers(Route.TRANSACTION_POOL);
        bed.admin().resetTransactionPoolServers(Route.PREPARED_TRANSACTION_POOL);
    }

    /** What the waiting call got: its SQLState and how long it took, and what the next statement got. */
    private String attempt(ConnectionFactory cf, long key, boolean inTransaction, String setup) throws Exception {
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + key + ")");
            io.r2dbc.spi.Connection c = open(cf);
            try {
                if (inTransaction) {
                    begin(c);
                }
                if (setup.equals(LOCK_WAIT_TIMEOUT_API)) {
                    reactor.core.publisher.Mono.from(c.setLockWaitTimeout(java.time.Duration.ofMillis(300))).block();
                } else if (setup.equals(STATEMENT_TIMEOUT_API)) {
                    reactor.core.publisher.Mono.from(c.setStatementTimeout(java.time.Duration.ofMillis(300))).block();
                } else if (!setup.isEmpty()) {
                    run(c, setup);
                }
                long t0 = System.nanoTime();
                String got;
                try {
                    run(c, "SELECT pg_advisory_lock(" + key + ")");
                    got = "granted";
                } catch (R2dbcException e) {
                    got = e.getSqlState() + " " + e.getMessage().replaceFirst("^ERROR: ", "");
                } catch (RuntimeException e) {
                    Throwable t = e.getCause() instanceof R2dbcException ? e.getCause() : e;
                    got = t instanceof R2dbcException ? ((R2dbcException) t).getSqlState() + " "
                            + t.getMessage().replaceFirst("^ERROR: ", "") : t.toString();
                }
                long millis = (System.nanoTime() - t0) / 1_000_000;
                String after;
                try {
                    after = one(c, "SELECT 1::text");
                } catch (RuntimeException e) {
                    Throwable t = e instanceof R2dbcException ? e : e.getCause();
                    after = t instanceof R2dbcException ? ((R2dbcException) t).getSqlState() : String.valueOf(t);
                }
                if (inTransaction) {
                    rollback(c);
                }
                run(c, "RESET ALL");
                return got + " | after: " + after + " | " + (millis / 100) * 100 + " ms";
            } finally {
                close(c);
                o.execute("SELECT pg_advisory_unlock_all()");
            }
        }
    }

    /** Connection.setLockWaitTimeout(300 ms) instead of a SET text (r2dbc-postgresql sends its own SET). */
    private static final String LOCK_WAIT_TIMEOUT_API = "setLockWaitTimeout";
    /** Connection.setStatementTimeout(300 ms). */
    private static final String STATEMENT_TIMEOUT_API = "setStatementTimeout";

    /**
     * The bounds as an application sets them: SET texts, and the R2DBC API's setters inside a transaction it began
     * (the setters' SETs run in the application's transaction, as on PostgreSQL: before, under emulate they went out
     * before its deferred BEGIN, to whichever server the pooler chose, and the wait read another server's bound).
     */
    enum Case {
        SET_LOCK_TIMEOUT(false, "SET lock_timeout = '300ms'"),
        SET_LOCAL_LOCK_TIMEOUT(true, "SET LOCAL lock_timeout = '300ms'"),
        SET_STATEMENT_TIMEOUT(false, "SET statement_timeout = '300ms'"),
        LOCK_WAIT_TIMEOUT_IN_TRANSACTION(true, LOCK_WAIT_TIMEOUT_API),
        STATEMENT_TIMEOUT_IN_TRANSACTION(true, STATEMENT_TIMEOUT_API);

        final boolean inTransaction;
        final String setup;

        Case(boolean inTransaction, String setup) {
            this.inTransaction = inTransaction;
            this.setup = setup;
        }
    }

    @ParameterizedTest
    @EnumSource(Case.class)
    void asPostgresThroughBothPoolers(Case c) throws Exception {
        String reference = attempt(plain(bed, Route.DIRECT), 944_000 + c.ordinal(), c.inTransaction, c.setup);
        assertTrue(reference.startsWith(c == Case.SET_STATEMENT_TIMEOUT || c == Case.STATEMENT_TIMEOUT_IN_TRANSACTION
                ? "57014" : "55P03"), reference);
        for (Route route : List.of(Route.TRANSACTION_POOL, Route.PREPARED_TRANSACTION_POOL)) {
            String ours = attempt(guarded(bed, route, "lockhygiene.mode=emulate"), 944_100 + c.ordinal(),
                    c.inTransaction, c.setup);
            // the same state, words and transaction after; the time to a tenth of a second (300 ms: "300 ms")
            assertEquals(reference, ours, route + " " + c);
        }
        assertEquals(List.of(), bed.admin().holdersOf(944_100 + c.ordinal()));
    }

    /**
     * A wait the lock table ends (here LockHygiene's own bound, {@code lockhygiene.lockTimeout}) inside a transaction
     * that has sent nothing yet, so its BEGIN is still deferred: the transaction is aborted as PostgreSQL's would be
     * (the next statement gets 25P02). Before, the abort went out before the BEGIN and the transaction went on.
     */
    @org.junit.jupiter.api.Test
    void aFailedWaitAbortsATransactionWhoseBeginWasStillDeferred() throws Exception {
        String reference = attempt(plain(bed, Route.DIRECT), 944_010, true, "SET LOCAL lock_timeout = '300ms'");
        assertTrue(reference.startsWith("55P03") && reference.contains("after: 25P02"), reference);
        for (Route route : List.of(Route.TRANSACTION_POOL, Route.PREPARED_TRANSACTION_POOL)) {
            String ours = attempt(guarded(bed, route, "lockhygiene.mode=emulate", "lockhygiene.lockTimeout=300ms"),
                    944_110, true, "");
            assertTrue(ours.startsWith("55P03") && ours.contains("after: 25P02"), route + ": " + ours);
        }
    }
}
