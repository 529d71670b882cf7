package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.leak.RecentCalls.RecentStatements;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.session.TransactionEnd;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * The leak check at every real transaction end of one connection (the JDBC API's commit()/rollback(),
 * the application's own COMMIT or ROLLBACK text, the transaction LockHygiene wraps around an autocommit
 * statement) and at its return: the check goes in the end's own round trip, on the server that held the
 * transaction. Never ends a transaction the application opened.
 */
final class TransactionEnds {
    private final Connection raw;
    private final OwnerSession session;
    private final Settings settings;
    private final String id;
    private final boolean off;
    private final boolean alwaysCheck;
    private final LeakReporter reporter;
    private final RecentCalls calls;
    private final Emulation emulation;
    private final PoolerDetection pooler;
    private final RecentStatements recent;

    TransactionEnds(Connection raw, OwnerSession session, PoolerDetection pooler, RecentStatements recent) {
        this.raw = raw;
        this.session = session;
        this.settings = session.settings();
        this.id = session.id();
        this.off = session.off();
        this.alwaysCheck = LockPolicy.checksEveryTransaction(settings);
        this.reporter = session.reporter();
        this.calls = session.calls();
        this.emulation = session.emulation();
        this.pooler = pooler;
        this.recent = recent;
    }

    /**
     * A transaction ended without our check (a COMMIT in a prepared statement or in the middle of a
     * text, a procedure's COMMIT): under transaction pooling its server is no longer ours, so the check
     * cannot run there ({@link OwnerSession#transactionEndedUnchecked}).
     */
    void afterExecution(Situation.TransactionStatus before) throws SQLException {
        if (!pooler.assumesPooling() || Pgjdbc.inTransaction(raw)) {
            return;
        }
        if (before != Situation.TransactionStatus.IDLE || raw.getAutoCommit()) {
            // ended on the server (a procedure's COMMIT, a text's, an autocommit statement): so it did here. With
            // autocommit off and nothing sent yet (emulate answered the statement itself), nothing ended.
            emulation.transactionEnded();
        }
        session.transactionEndedUnchecked();
    }

    /**
     * True when a text whose last statement ends the transaction must carry the leak check: the check is
     * due (locks were touched, or leakCheck=always) under transaction pooling.
     */
    boolean checksAtTextEnd(StatementPlan plan) throws SQLException {
        if (off || settings.leakCheck() == Settings.LeakCheck.NEVER || plan.scan == null
                || plan.scan.finalTransactionEnd() == null || !pooler.transactionPooling()) {
            return false; // the policy's rule below needs the text's calls: these cases are false whatever they are
        }
        if (!Pgjdbc.inTransaction(raw) && raw.getAutoCommit() && !plan.scan.opensTransactionBefore(
                plan.scan.finalTransactionEnd())) {
            return false; // no transaction to end on a server of ours: the text runs as it is
        }
        // under emulate the calls are the lock table's: none of them leaves a lock on this server
        return alwaysCheck || !calls.isEmpty() || (plan.scan.hasSessionLevelCall() && !emulation.on());
    }

    /**
     * The application's own transaction end as text ({@code COMMIT}, {@code ROLLBACK}, {@code END}, ...):
     * sent as it is, with the leak check in the same round trip, on a statement of ours. Returns the
     * warnings PostgreSQL gave the end (e.g. "there is no transaction in progress").
     */
    SQLWarning endTransactionByText(String endText) throws SQLException {
        return endTransaction(endText, false);
    }

    /** Autocommit under transaction pooling: BEGIN + statement, then COMMIT + check in one round trip. */
    <R> R runWrapped(Statement appStatement, String sent, Call<R> call) throws SQLException {
        int fetchSize = appStatement == null ? 0 : appStatement.getFetchSize();
        raw.setAutoCommit(false);
        if (fetchSize != 0) {
            appStatement.setFetchSize(0); // a cursor would not survive our COMMIT
        }
        R result;
        try {
            result = call.run(appStatement, sent);
        } catch (SQLException | RuntimeException | Error appFailure) {
            try {
                endTransaction("ROLLBACK", true);
            } catch (SQLException | RuntimeException ours) {
                appFailure.addSuppressed(ours);
            }
            try {
                raw.setAutoCommit(true);
                if (fetchSize != 0) {
                    appStatement.setFetchSize(fetchSize);
                }
            } catch (SQLException | RuntimeException ours) {
                appFailure.addSuppressed(ours);
            }
            throw appFailure;
        }
        try {
            endTransaction("COMMIT", true);
        } finally {
            raw.setAutoCommit(true);
            if (fetchSize != 0) {
                appStatement.setFetchSize(fetchSize);
            }
        }
        return result;
    }

    /** Connection.commit(): plain, or with the leak check piggybacked. */
    void commit() throws SQLException {
        if (raw.getAutoCommit()) {
            raw.commit(); // pgjdbc refuses it ("Cannot commit when autoCommit is enabled."), as it should
            return;
        }
        endTransaction("COMMIT", true);
    }

    /** Connection.rollback(): plain, or with the leak check piggybacked. */
    void rollback() throws SQLException {
        if (raw.getAutoCommit()) {
            raw.rollback(); // refused by pgjdbc in autocommit, whatever the server's status
            return;
        }
        endTransaction("ROLLBACK", true);
    }

    /**
     * Ends the transaction with {@code command} (COMMIT, ROLLBACK, or the application's own end text), with the
     * fence and the leak check in the same round trip when due ({@link TransactionEnd}). Returns the end's warnings.
     *
     * @param api the JDBC API's commit() / rollback() (pgjdbc's own when nothing rides along), else a text
     */
    private SQLWarning endTransaction(String command, boolean api) throws SQLException {
        // PREPARE TRANSACTION too: the work it keeps is committed later, by COMMIT PREPARED from any session
        boolean commitsOpen = TransactionControl.keepsWork(command)
                && Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.OPEN;
        String checkedBecause = off ? null : session.checkAtTransactionEnd(pooler.transactionPooling());
        TransactionEnd end;
        try {
            end = TransactionEnd.decide(session, command, commitsOpen,
                    Pgjdbc.inTransaction(raw) ? checkedBecause : null);
        } catch (SQLException lost) {
            session.transactionEnded(false); // rolled back already (Emulation.lostBeforeCommit), never committed
            throw lost;
        }
        boolean pooling = pooler.assumesPooling();
        SQLWarning warnings = null;
        if (end.plain()) {
            if (api && "COMMIT".equals(command)) {
                raw.commit();
            } else if (api) {
                raw.rollback();
            } else {
                try (Statement s = raw.createStatement()) {
                    s.execute(command);
                    warnings = s.getWarnings();
                }
            }
            end.succeeded(null, pooling, recent);
            return warnings;
        }
        // The fence and the check ride along. A failure is the end's own (serialization, a deferred constraint, a
        // lost connection: what the application's commit would have thrown), or the fence's: the loss.
        List<HeldLock> held;
        try (Statement s = raw.createStatement()) {
            held = LeakReporter.readHeldLocks(s, s.execute(end.text()));
            warnings = s.getWarnings(); // the end's own: the fence and the listing give none
        } catch (SQLException e) {
            SQLException lost = failed(end, e, pooling);
            throw lost != null ? lost : e;
        } catch (RuntimeException e) {
            failed(end, e, pooling);
            throw e;
        }
        end.succeeded(held, pooling, recent);
        return warnings;
    }

    /**
     * An end that carried the fence or the check failed: the loss when the fence did (the application gets it), the
     * transaction it aborted rolled back; the transaction is over either way.
     */
    private SQLException failed(TransactionEnd end, Exception e, boolean pooling) {
        SQLException lost = end.failed(e, pooling);
        try {
            if (Pgjdbc.inTransaction(raw)) {
                Pgjdbc.executeSimple(raw, "ROLLBACK");
            }
        } catch (SQLException | RuntimeException ours) {
            (lost != null ? lost : e).addSuppressed(ours);
        }
        session.transactionEnded(false);
        return lost;
    }

    /**
     * The return event (DataSource wrapper close, physical close): under session pooling or direct,
     * session locks still held now were never unlocked. Never throws: a failed check is logged.
     */
    void beforeReturn() {
        try {
            if (off || raw.isClosed()) {
                return;
            }
            if (!session.checkDueAtReturn()) {
                // Nothing is due at a return under any pooling (a connection that met no advisory call, or
                // leakCheck=never): returned without asking which pooling it is, a round trip for nothing.
                // Recorded calls stay (bounded); the next check clears them.
                return;
            }
            if (pooler.transactionPooling()) {
                // checked at every transaction end instead; the calls are left alone: a close() racing a
                // statement on another thread must not empty them under a transaction that is about to end
                // and be checked (it would then end unchecked and leave its lock on the pooled server)
                return;
            }
            if (Pgjdbc.inTransaction(raw)) {
                Log.debug("LockHygiene: {} returned inside an open transaction; its locks cannot be told apart from"
                        + " transaction-level ones, so the return check is skipped", id);
                calls.clear();
                return;
            }
            List<HeldLock> held;
            try (Statement s = raw.createStatement()) {
                held = LeakReporter.readHeldLocks(s, s.execute(PgLocks.atReturn(raw.getAutoCommit())));
            }
            session.checkedAtReturn(held, "when the connection was returned (checked at the return)", recent);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("at return", e);
            calls.clear();
        }
    }
}
