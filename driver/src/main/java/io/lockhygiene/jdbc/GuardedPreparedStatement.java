package io.lockhygiene.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A {@link PreparedStatement} prepared with the text its plan chose (rewritten, or the application's
 * own); executions of a text with session-level calls go through the guard, all others straight to
 * pgjdbc. Bind-parameter keys need nothing special: the call is found in the text.
 */
class GuardedPreparedStatement<T extends PreparedStatement> extends PreparedStatementDelegate<T> {
    final StatementPlan plan;
    private final boolean flagged;

    GuardedPreparedStatement(T delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection);
        this.plan = plan;
        this.flagged = !plan.flagged.isEmpty();
    }

    private boolean fast() throws SQLException {
        io.lockhygiene.events.Events.counters().statementSeen();
        guard.checkLockLost();
        return !flagged && plan.emulated == null && !guard.watchesEveryStatement();
    }

    /** A statement prepared on the lock holder runs there, under the holder's transaction rules. */
    private <R> R slow(SqlCall<R> call) throws SQLException {
        if (plan.emulated != null) {
            return guard.runOnHolder(plan.emulated, plan.original, delegate, () -> call.run(plan.sent));
        }
        return guard.execute(plan.flagged, delegate, plan.sent, call);
    }

    @Override
    public ResultSet executeQuery() throws SQLException {
        if (fast()) {
            return wrap(delegate.executeQuery());
        }
        return wrap(slow(s -> delegate.executeQuery()));
    }

    @Override
    public int executeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeUpdate();
        }
        return slow(s -> delegate.executeUpdate());
    }

    @Override
    public boolean execute() throws SQLException {
        if (fast()) {
            return delegate.execute();
        }
        return slow(s -> delegate.execute());
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeLargeUpdate();
        }
        return slow(s -> delegate.executeLargeUpdate());
    }

    @Override
    public void addBatch() throws SQLException {
        if (flagged) {
            addFlagged(plan.flagged.get(0));
        }
        delegate.addBatch();
    }

    @Override
    public int[] executeBatch() throws SQLException {
        if (plan.emulated != null) {
            return slow(s -> delegate.executeBatch());
        }
        return super.executeBatch();
    }
}
