package io.lockhygiene.internal.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.build.Forwarding;
import io.lockhygiene.internal.guard.Binds;
import io.lockhygiene.internal.guard.Call;
import io.lockhygiene.internal.guard.StatementPlan;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * A {@link PreparedStatement} prepared with the text its plan chose (rewritten, or the application's own);
 * executions of a flagged text go through the guard, all others straight to pgjdbc. Under emulate the bind
 * values are kept as well ({@link Binds}, recorded by the generated setters), for the lock table's keys and
 * for the texts sent instead of the statement.
 */
@Forwarding(leaf = "GeneratedPreparedStatement", bindsField = "recording()")
abstract class GuardedPreparedStatement<T extends PreparedStatement> extends GuardedStatement<T>
        implements PreparedStatement {
    final StatementPlan plan;
    /** Recorded only when emulate decides the statement's calls; null otherwise. */
    protected final Binds binds;
    /**
     * The values set while the statement's owner held emulated locks (its autocommit execution then runs in a
     * fenced twin that needs them); null until one was.
     */
    private Binds fenceBinds;
    /** A value was set while nothing was recording: {@link #fenceBinds} is not the whole set. */
    private boolean unrecorded;
    /** Prepared to return generated keys: a twin could not give them back. */
    private boolean keysPrepared;
    /** The fenced twin of this statement, and the fence it was prepared with (kept while the fence stays). */
    private PreparedStatement twin;
    private String twinFence;
    private int batched;

    GuardedPreparedStatement(T delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection);
        this.plan = plan;
        this.binds = plan.keepsBinds() ? new Binds() : null;
    }

    /** It was prepared to return generated keys (prepareStatement(sql, keys)). */
    final GuardedPreparedStatement<T> keysPrepared() {
        keysPrepared = true;
        return this;
    }

    /**
     * Where a setter records its value now: emulate's statements always; any other only while its owner
     * holds emulated locks (a volatile read otherwise, and nothing allocated).
     */
    protected final Binds recording() {
        if (binds != null) {
            return binds;
        }
        if (guard.ownerHolds()) {
            if (fenceBinds == null) {
                fenceBinds = new Binds();
            }
            return fenceBinds;
        }
        unrecorded = true;
        return null;
    }

    /** The fenced twin: this statement's text and the fence, prepared once per fence, with every value set. */
    @Override
    Statement fencedRun(String sql, String fence) throws SQLException {
        Binds values = binds != null ? binds : fenceBinds;
        if (keysPrepared || (binds == null && unrecorded)) {
            return null;
        }
        if (twin == null || !fence.equals(twinFence)) {
            closeTwin();
            twin = connection.delegate.prepareStatement(sql + "\n;\n" + fence, delegate.getResultSetType(),
                    delegate.getResultSetConcurrency());
            twinFence = fence;
        }
        answers.copySettingsTo(twin);
        twin.clearParameters();
        if (values != null) {
            values.applyAllTo(twin);
        }
        twin.execute();
        return twin;
    }

    private void closeTwin() {
        if (twin != null) {
            try {
                twin.close();
            } catch (SQLException | RuntimeException ignored) {
                // a twin prepared for an earlier fence
            }
            twin = null;
        }
    }

    @Override
    public void close() throws SQLException {
        closeTwin();
        super.close();
    }

    private boolean fast() throws SQLException {
        forgetAnswer();
        return guard.passesUnchecked(plan);
    }

    /**
     * Runs on the statement the guard chose: a prepared one (the application's, a fenced twin, the query sent
     * instead) with {@code prepared}, an answer made here with {@code local}.
     */
    private <R> R slow(Call<R> prepared, Call<R> local) throws SQLException {
        return answers.show(guard.run(plan, binds, answers, (target, sql) -> target instanceof PreparedStatement
                ? prepared.run(target, sql) : local.run(target, sql)));
    }

    @Override
    Statement answerFor(ShapeText.Query query, Binds values) throws SQLException {
        PreparedStatement ps = connection.delegate.prepareStatement(query.sql());
        answers.keep(ps);
        answers.copySettingsTo(ps);
        if (values != null) {
            values.applyTo(ps, query.parameters());
        }
        return ps;
    }

    @Override
    public ResultSet executeQuery() throws SQLException {
        if (fast()) {
            return wrap(delegate.executeQuery());
        }
        return wrap(slow((t, s) -> ((PreparedStatement) t).executeQuery(), Statement::executeQuery));
    }

    @Override
    public int executeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeUpdate();
        }
        return slow((t, s) -> ((PreparedStatement) t).executeUpdate(), Statement::executeUpdate);
    }

    @Override
    public boolean execute() throws SQLException {
        if (fast()) {
            return delegate.execute();
        }
        return slow((t, s) -> ((PreparedStatement) t).execute(), Statement::execute);
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeLargeUpdate();
        }
        return slow((t, s) -> ((PreparedStatement) t).executeLargeUpdate(), Statement::executeLargeUpdate);
    }

    @Override
    public void clearParameters() throws SQLException {
        delegate.clearParameters();
        if (binds != null) {
            binds.clear();
        }
        if (fenceBinds != null) {
            fenceBinds.clear();
        }
        unrecorded = false;
    }

    @Override
    public void addBatch() throws SQLException {
        delegate.addBatch();
        batched++;
    }

    /** The batch's texts are this statement's, once per addBatch (none when it is unflagged). */
    @Override
    List<StatementPlan> takeBatchPlans() {
        int n = batched;
        batched = 0;
        return plan.unflagged() ? null : Collections.nCopies(n, plan);
    }

    @Override
    public void clearBatch() throws SQLException {
        batched = 0;
        super.clearBatch();
    }
}
