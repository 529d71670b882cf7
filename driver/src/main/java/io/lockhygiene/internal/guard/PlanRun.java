package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.emulate.Validation;
import io.lockhygiene.internal.leak.UnlockWatch;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * Carries out one execution's {@link Plan} for {@link ConnectionGuard}, exactly as decided: run it as it
 * is (recorded and checked, or wrapped in a transaction of ours), have emulate's lock table decide its calls,
 * refuse it, or split a text of several statements ({@link SeveralStatements}). Also the fence of a
 * statement whose owner holds emulated locks. One per connection; its thread only.
 */
public final class PlanRun {
    private final Connection raw;
    private final OwnerSession session;
    private final TransactionEnds ends;
    private final Emulation emulation;
    private final SeveralStatements several;

    PlanRun(Connection raw, OwnerSession session, TransactionEnds ends, SeveralStatements several) {
        this.raw = raw;
        this.session = session;
        this.ends = ends;
        this.emulation = session.emulation();
        this.several = several;
    }

    /**
     * Carries out {@code p}: what it asks of the core first ({@link OwnerSession#beforeSend}: refused, recorded,
     * noted as run on the server), then the statement sent as the plan says.
     */
    <R> Executed<R> carryOut(Plan p, StatementPlan plan, Binds binds, StatementSource face, Call<R> call, Situation where)
            throws SQLException {
        switch (p.action()) {
            case EMULATE:
                return emulate(plan, binds, face, call, where);
            case SPLIT:
                return several.split(plan, face, call, p.wrapped());
            case REFUSE:
                validate(plan, binds); // PostgreSQL's own verdict on the statement comes before ours
                break;
            default:
                break;
        }
        session.beforeSend(p, plan.original, plan.sentScan, where, null);
        boolean recorded = p.action() == Plan.Action.RECORD || p.action() == Plan.Action.REWRITE;
        return asIs(plan, face, call, where, recorded, p.wrapped());
    }

    /**
     * A statement without advisory calls of an owner that holds emulated locks, as the one rule says
     * ({@link LockPolicy#ownerStep}). In autocommit it is its own commit, so it is fenced in its own round trip:
     * run with the fence after it in one implicit transaction, which the fence undoes when a session holding the
     * owner's locks is gone (then 08006, naming the keys); where that cannot be done exactly it runs in a
     * transaction of ours whose COMMIT carries the fence. Inside a transaction it runs as it is (its end is
     * fenced), unless it is that end (COMMIT as text): then the end goes with the fence. One that cannot run inside
     * a transaction block (VACUUM, CREATE INDEX CONCURRENTLY) commits nothing to fence. DISCARD ALL lets the
     * owner's session-level locks go, as on PostgreSQL.
     */
    <R> Executed<R> owning(StatementPlan plan, Binds binds, StatementSource face, Call<R> call) throws SQLException {
        Statement app = face.app();
        boolean inTransaction = Pgjdbc.statementRunsInTransaction(raw);
        switch (LockPolicy.ownerStep(plan, inTransaction, true)) {
            case ENDS_TRANSACTION:
                StatementPlan read = plan.read();
                return several.endingTransaction(read, read.scan.finalEnd(), binds, face, call);
            case LETS_GO_AFTER:
                R result = call.run(app, plan.sent);
                emulation.discardedAll();
                return Executed.onApp(result);
            case FENCED:
                return fenced(plan, face, call);
            case FENCES_IN_TEXT:
                if (plan.form == LockPolicy.Form.TEXT) {
                    return several.fencingInText(plan, face, call);
                }
                // a prepared text of several statements: its bind values cannot be cut with it, so it runs as it
                // is (not fenced; docs/emulate.md says so)
                // fall through
            default:
                R ran = call.run(app, plan.sent);
                if (inTransaction) {
                    session.followChain(plan.scan());
                }
                return Executed.onApp(ran);
        }
    }

    /** An owner's autocommit statement with the fence in its round trip (see {@link #owning}). */
    private <R> Executed<R> fenced(StatementPlan plan, StatementSource face, Call<R> call) throws SQLException {
        Statement app = face.app();
        if (plan.scan().statementCount() > 1) {
            // several statements: in a transaction of ours, so the application reads pgjdbc's own results of them
            return Executed.onApp(ends.runWrapped(app, plan.sent, call));
        }
        int[] seals = emulation.commitSeals();
        if (seals == null) {
            return Executed.onApp(call.run(app, plan.sent));
        }
        Statement fenced;
        try {
            fenced = face.runFenced(plan.sent, emulation.fence(seals));
        } catch (SQLException e) {
            if (Seals.isFenceFailure(e)) {
                throw emulation.fenceFailed(e);
            }
            throw e;
        }
        if (fenced == null) {
            return Executed.onApp(ends.runWrapped(app, plan.sent, call));
        }
        Statement shown = face.chain(Collections.singletonList(fenced));
        return Executed.resultsOn(call.run(shown, plan.original), shown, null);
    }

    /**
     * Runs the text that is sent (the application's, or rewrite's; its session-level calls were recorded for the
     * leak check when {@code record}, and are watched for unlocks); inside a transaction of ours when
     * {@code wrapped} (autocommit under transaction pooling), whose end carries the check on the server that held it.
     */
    private <R> Executed<R> asIs(StatementPlan plan, StatementSource face, Call<R> call, Situation where, boolean record,
                       boolean wrapped) throws SQLException {
        Statement app = face.app();
        R result;
        if (wrapped) {
            result = ends.runWrapped(app, plan.sent, call);
        } else {
            try {
                result = call.run(app, plan.sent);
            } catch (SQLException | RuntimeException appFailure) {
                emulation.statementFailed(appFailure);
                throw appFailure;
            }
        }
        if (record || plan.sentScan.hasSessionLevelCall()) {
            UnlockWatch.check(app, plan.sentScan, plan.original, session.reporter(), session.settings());
        }
        if (!wrapped) {
            ends.afterExecution(where.status());
            if (where.statementRunsInTransaction()) {
                session.followChain(plan.scan);
            }
        }
        emulation.followSavepoints(plan.scan, plan.original);
        return Executed.onApp(result);
    }

    /** emulate: the lock table decides every call; the answer is made here or computed by the server. */
    private <R> Executed<R> emulate(StatementPlan plan, Binds binds, StatementSource face, Call<R> call, Situation where)
            throws SQLException {
        Outcome outcome = emulation.execute(plan.shape, binds, where.statementRunsInTransaction(),
                face.app().getQueryTimeout(), null, null);
        try {
            Statement target;
            String sql;
            if (outcome.rows() != null) {
                target = face.answer(outcome.rows());
                sql = plan.original;
            } else {
                target = face.answer(outcome.query(), binds);
                sql = outcome.query().sql();
                long left = outcome.statementTimeoutLeftMillis();
                if (left > 0) {
                    return Executed.resultsOn(runTheRest(call, target, sql, left), target, outcome);
                }
            }
            return Executed.resultsOn(call.run(target, sql), target, outcome);
        } catch (SQLException | RuntimeException appFailure) {
            emulation.statementFailed(appFailure);
            throw appFailure;
        } finally {
            outcome.finish();
            ends.afterExecution(where.status());
        }
    }

    /**
     * The server's part of a statement that waited in the lock table, within what is left of the session's
     * statement_timeout (the whole statement's bound, as on PostgreSQL): a pgjdbc timeout in milliseconds on our
     * statement (the application's own query timeout stays, when it is shorter), and when it is that bound that
     * ends it, PostgreSQL's words for it.
     */
    private static <R> R runTheRest(Call<R> call, Statement target, String sql, long leftMillis) throws SQLException {
        int own = target.getQueryTimeout();
        boolean ours = own == 0 || leftMillis < own * 1000L;
        if (ours) {
            Pgjdbc.setQueryTimeoutMillis(target, leftMillis);
        }
        try {
            return call.run(target, sql);
        } catch (SQLException e) {
            if (ours && "57014".equals(e.getSQLState())) {
                throw new SQLException(EmulateMessages.STATEMENT_TIMEOUT, "57014", e);
            }
            throw e;
        } finally {
            if (ours) {
                Pgjdbc.setQueryTimeoutMillis(target, own * 1000L); // a statement of ours may serve again
            }
        }
    }

    /**
     * emulate cannot answer this statement as PostgreSQL would: PostgreSQL's own verdict first (a statement
     * it refuses gets its error), before ours, and before anything is sent.
     */
    private void validate(StatementPlan plan, Binds binds) throws SQLException {
        if (plan.shape != null && !plan.callable()) {
            Validation.describe(plan.original, binds, plan.shape.parameterCount(), raw);
        }
    }

    /** A batch: each text's plan from the policy, recorded; wrapped like one execution when one needs it. */
    <R> R batch(List<StatementPlan> texts, Statement app, Call<R> call, Situation where) throws SQLException {
        // an owner holding emulated locks: its autocommit batch commits in a transaction of ours whose COMMIT
        // carries the fence, as a single statement's does
        boolean wrap = (texts.isEmpty() && LockPolicy.wrapsBatch(where, session.settings()))
                || (session.ownerHolds() && LockPolicy.fencesBatch(where.statementRunsInTransaction(), true,
                        controlsTransactions(texts)));
        for (StatementPlan p : texts) {
            Plan plan = session.inBatch(p.original, p.sentScan, p.shape, where);
            if (plan.action() == Plan.Action.REFUSE) {
                validate(p, null);
            }
            session.beforeSend(plan, p.original, p.sentScan, where, null);
            wrap |= plan.wrapped();
        }
        if (wrap) {
            return ends.runWrapped(app, null, call);
        }
        R result;
        try {
            result = call.run(app, null);
        } catch (SQLException | RuntimeException appFailure) {
            emulation.statementFailed(appFailure);
            throw appFailure;
        }
        ends.afterExecution(where.status());
        return result;
    }

    /** A text of the batch is transaction control: no transaction of ours can be around it. */
    private static boolean controlsTransactions(List<StatementPlan> texts) {
        for (StatementPlan p : texts) {
            if (p.scan().hasTransactionControl()) { // a text the prefilter ruled out is read from the one cache
                return true;
            }
        }
        return false;
    }

    /**
     * What one execution on the guard's slow path returns to the JDBC face: the JDBC method's own value, and where
     * the application reads the results until its next execution (null: its own pgjdbc statement) with emulate's
     * outcome when emulate answered (else null). The guard decides; the face only shows it.
     */
    public static final class Executed<R> {
        private final R value;
        private final Statement resultsOn;
        private final Outcome outcome;

        private Executed(R value, Statement resultsOn, Outcome outcome) {
            this.value = value;
            this.resultsOn = resultsOn;
            this.outcome = outcome;
        }

        /** Ran on the application's own statement: its results are read there. */
        static <R> Executed<R> onApp(R value) {
            return new Executed<>(value, null, null);
        }

        /** The results are read from {@code resultsOn} (a statement of ours or an answer made here). */
        static <R> Executed<R> resultsOn(R value, Statement resultsOn, Outcome outcome) {
            return new Executed<>(value, resultsOn, outcome);
        }

        /** The JDBC method's value (a ResultSet, a count, execute's boolean). */
        public R value() {
            return value;
        }

        /** Where the results are read; null for the application's own statement. */
        public Statement resultsOn() {
            return resultsOn;
        }

        /** emulate's outcome of this execution, or null. */
        public Outcome outcome() {
            return outcome;
        }
    }
}
