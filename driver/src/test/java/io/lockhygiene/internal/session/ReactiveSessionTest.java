package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.holder.SessionBounds;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings;

/**
 * The order of a reactive front end's own statements ({@link ReactiveSession}) over a port that records what it was
 * asked and answers as scripted: which text an end sends, what its failure leaves the application with, what is
 * rolled back. What the texts do on a server is R2DBC's integration tests' (through both PgBouncers, with the
 * differential tester); this is the sequencing alone, without one.
 */
class ReactiveSessionTest {
    private static final String LOCK = "SELECT pg_advisory_lock(42)";
    private static final Situation POOLED_OPEN = new Situation(Situation.TransactionStatus.OPEN, false, true);

    /** A driver's own error: the server's SQLState in the driver's exception type. */
    static final class DriverError extends RuntimeException {
        final String state;

        DriverError(String message, String state) {
            super(message);
            this.state = state;
        }
    }

    /** The port: what the core sent, in order; what the server answers, as scripted. */
    static final class Port implements ReactiveConnection {
        final List<String> sent = new ArrayList<>();
        final List<String> ends = new ArrayList<>();
        boolean serverInTransaction = true;
        boolean serverTransactionFailed;
        Integer announcedPid = 7;
        RuntimeException sendFails;
        RuntimeException queryFails;
        List<Row> rows = Collections.emptyList();
        final DriverError failedCommit = new DriverError("the database returned ROLLBACK", "99999");

        @Override
        public CompletionStage<List<Row>> send(String text) {
            sent.add(text);
            return sendFails != null ? CompletableFuture.failedFuture(sendFails) : CompletableFuture.completedFuture(rows);
        }

        @Override
        public CompletionStage<List<Row>> query(String sql, Object... parameters) {
            sent.add(sql);
            return queryFails != null ? CompletableFuture.failedFuture(queryFails) : CompletableFuture.completedFuture(rows);
        }

        @Override
        public CompletionStage<Void> driverEnd(boolean commit) {
            ends.add(commit ? "commit" : "rollback");
            serverInTransaction = false;
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public boolean serverInTransaction() {
            return serverInTransaction;
        }

        @Override
        public boolean serverTransactionFailed() {
            return serverTransactionFailed;
        }

        @Override
        public boolean inTransaction() {
            return serverInTransaction;
        }

        @Override
        public boolean dropUnsentBegin() {
            return false;
        }

        @Override
        public Integer announcedPid() {
            return announcedPid;
        }

        @Override
        public Executor blocking() {
            return Runnable::run;
        }

        @Override
        public Throwable failedCommit() {
            return failedCommit;
        }

        @Override
        public SQLException toSql(Throwable driverError) {
            return new SQLException(driverError.getMessage(), ((DriverError) driverError).state);
        }
    }

    private static OwnerSession detecting(Settings.PoolMode poolMode) {
        return new OwnerSession(Settings.builder().mode(Settings.Mode.DETECT).poolMode(poolMode).leakCheckSample(0)
                .build(), "lh-test", (io.lockhygiene.internal.holder.Holder) null, null);
    }

    private static ReactiveSession reactive(OwnerSession session, Port port) {
        return new ReactiveSession(session, port, new TransactionPooling(session.settings(), session.id(), false));
    }

    /** A session-level call recorded in the open transaction: its end carries the leak check under transaction pooling. */
    private static void recordCall(OwnerSession session) throws SQLException {
        Plan p = session.plan(LOCK, SqlScanner.scan(LOCK), null, LockPolicy.Form.TEXT, false, POOLED_OPEN);
        session.beforeSend(p, LOCK, SqlScanner.scan(LOCK), POOLED_OPEN, null);
        assertFalse(session.calls().isEmpty());
    }

    private static Throwable failure(CompletionStage<?> stage) throws Exception {
        try {
            stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return ReactiveSession.unwrapped(e.getCause());
        }
        throw new AssertionError("the stage completed normally");
    }

    @Test
    void aCheckedCommitSendsTheEndAndTheListingInOneText() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.TRANSACTION);
        Port port = new Port();
        recordCall(session);
        reactive(session, port).end(true, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(List.of(PgLocks.atTransactionEnd("COMMIT")), port.sent);
        assertEquals(List.of(), port.ends, "the end went as text, not as the driver's");
        assertTrue(session.calls().isEmpty(), "the transaction is over: its recorded calls checked and gone");
    }

    @Test
    void aFailedTransactionsCheckedCommitIsTheDriversRollbackError() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.TRANSACTION);
        Port port = new Port();
        recordCall(session);
        port.serverTransactionFailed = true;
        Throwable e = failure(reactive(session, port).end(true, null));
        assertSame(port.failedCommit, e, "as the driver's own commit of a failed transaction says");
        assertEquals(List.of(PgLocks.atTransactionEnd("COMMIT")), port.sent, "PostgreSQL's rollback, with the check");
    }

    @Test
    void aCheckedEndThatFailsIsTheEndsOwnErrorAndWhatItLeftOpenIsRolledBack() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.TRANSACTION);
        Port port = new Port();
        recordCall(session);
        port.sendFails = new DriverError("could not serialize access", "40001");
        Throwable e = failure(reactive(session, port).end(true, null));
        assertSame(port.sendFails, e, "the driver's error, unchanged");
        assertEquals(List.of("rollback"), port.ends);
        assertTrue(session.calls().isEmpty(), "a checked end's calls go with it, failed or not");
    }

    @Test
    void anEndWithNothingOpenOnTheServerIsTheDriversOwn() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.TRANSACTION);
        Port port = new Port();
        port.serverInTransaction = false;
        reactive(session, port).end(false, null).toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(List.of("rollback"), port.ends);
        assertEquals(List.of(), port.sent);
    }

    @Test
    void anEndTextIsSentAsItIsWhenNothingRidesAlong() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.SESSION);
        Port port = new Port();
        reactive(session, port).end(true, "END").toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(List.of("END"), port.sent);
        assertEquals(List.of(), port.ends);
    }

    @Test
    void theListingIsReadFromItsOwnRowsOnly() {
        List<String> listing = Arrays.asList("classid", "objid", "objsubid", "mode", "pid", "released");
        List<ReactiveConnection.Row> rows = List.of(
                new ReactiveConnection.Row(List.of("lockhygiene_fence"), new Object[] {null}),
                new ReactiveConnection.Row(listing, new Object[] {0L, 42L, 1, "ExclusiveLock", 4711, true}));
        List<HeldLock> held = ReactiveSession.listing(rows);
        assertEquals(1, held.size());
        assertTrue(held.get(0).isBigintKey());
        assertEquals(4711, held.get(0).backendPid());
    }

    @Test
    void poolingIsDetectedFromThePidsAndAskedAgainWhenTheServerCannotSay() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.AUTO);
        Port port = new Port();
        port.queryFails = new DriverError("current transaction is aborted", "25P02");
        ReactiveSession reactive = reactive(session, port);
        assertTrue(reactive.detectPooling().toCompletableFuture().get(10, TimeUnit.SECONDS), "a pooler for now");
        port.queryFails = null;
        port.rows = List.of(new ReactiveConnection.Row(List.of("pg_backend_pid"), new Object[] {7}));
        assertFalse(reactive.detectPooling().toCompletableFuture().get(10, TimeUnit.SECONDS), "the pid it was announced");
        assertEquals(2, port.sent.size(), "asked again after the failure, then known");
        assertFalse(reactive.detectPooling().toCompletableFuture().get(10, TimeUnit.SECONDS));
        assertEquals(2, port.sent.size());
    }

    @Test
    void aCheckAtCloseThatFailsIsReportedNotTheClosesError() throws Exception {
        OwnerSession session = detecting(Settings.PoolMode.SESSION);
        Port port = new Port();
        recordCall(session);
        port.serverInTransaction = false;
        port.sendFails = new DriverError("connection reset", "08006");
        reactive(session, port).beforeClose().toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertEquals(List.of(PgLocks.atReturn(true)), port.sent);
    }

    @Test
    void theSessionsBoundsAreReadFromItsTwoShows() throws Exception {
        Port port = new Port();
        port.rows = List.of(new ReactiveConnection.Row(List.of("lock_timeout"), new Object[] {"1500ms"}),
                new ReactiveConnection.Row(List.of("statement_timeout"), new Object[] {"0"}));
        SessionBounds bounds = ReactiveSession.sessionBounds(port);
        assertEquals(1500, bounds.lockTimeoutMillis());
        assertEquals(0, bounds.statementTimeoutMillis());
        assertEquals(List.of(SessionBounds.QUERY), port.sent);
        port.queryFails = new DriverError("current transaction is aborted", "25P02");
        SQLException e = assertThrows(SQLException.class, () -> ReactiveSession.sessionBounds(port));
        assertEquals("25P02", e.getSQLState(), "the driver's error as the core reads it");
    }
}
