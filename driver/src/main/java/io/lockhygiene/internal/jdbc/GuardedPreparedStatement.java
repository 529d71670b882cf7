package io.lockhygiene.internal.jdbc;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import io.lockhygiene.build.Forwarding;

/**
 * A {@link PreparedStatement} prepared with the text its plan chose (rewritten, or the application's
 * own); executions of a text with session-level calls go through the guard, all others straight to
 * pgjdbc. Bind-parameter keys need nothing special: the call is found in the text.
 */
@Forwarding(leaf = "GeneratedPreparedStatement")
abstract class GuardedPreparedStatement<T extends PreparedStatement> extends GuardedStatement<T>
        implements PreparedStatement {
    final StatementPlan plan;
    private final boolean flagged;

    GuardedPreparedStatement(T delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection);
        this.plan = plan;
        this.flagged = !plan.flagged.isEmpty();
    }

    private boolean fast() throws SQLException {
        io.lockhygiene.internal.events.Events.counters().statementSeen();
        guard.checkLockLost();
        answeredBy(null);
        return !flagged && plan.emulated == null && plan.table == null && !guard.watchesEveryStatement();
    }

    /**
     * A lock statement emulate answers from its lock table (null when it must run as it is); a statement
     * prepared on the lock holder runs there, under the holder's transaction rules.
     */
    private LocalResult answer() throws SQLException {
        if (plan.table == null) {
            return null;
        }
        LocalResult a = guard.runTable(plan, binds, delegate);
        answeredBy(a);
        return a;
    }

    private <R> R slow(SqlCall<R> call) throws SQLException {
        if (plan.table != null) {
            return guard.execute(plan.flagged, delegate, plan.sent, call); // not answered: as it is
        }
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
        LocalResult a = answer();
        if (a != null) {
            return wrap(a.executeQuery(plan.original));
        }
        return wrap(slow(s -> delegate.executeQuery()));
    }

    @Override
    public int executeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeUpdate();
        }
        LocalResult a = answer();
        if (a != null) {
            return a.executeUpdate(plan.original);
        }
        return slow(s -> delegate.executeUpdate());
    }

    @Override
    public boolean execute() throws SQLException {
        if (fast()) {
            return delegate.execute();
        }
        LocalResult a = answer();
        if (a != null) {
            return a.execute(plan.original);
        }
        return slow(s -> delegate.execute());
    }

    @Override
    public long executeLargeUpdate() throws SQLException {
        if (fast()) {
            return delegate.executeLargeUpdate();
        }
        LocalResult a = answer();
        if (a != null) {
            return a.executeLargeUpdate(plan.original);
        }
        return slow(s -> delegate.executeLargeUpdate());
    }

    // Bind values of a lock statement's parameters, kept for its keys (see LockKeys); forwarded as well.

    private Object[] binds;

    private void bind(int index, Object value) {
        if (plan.table != null && index >= 1 && index <= 64) {
            if (binds == null || binds.length < index) {
                binds = java.util.Arrays.copyOf(binds == null ? new Object[0] : binds, Math.max(index, 2));
            }
            binds[index - 1] = value;
        }
    }

    @Override
    public void setInt(int index, int value) throws SQLException {
        delegate.setInt(index, value);
        bind(index, value);
    }

    @Override
    public void setLong(int index, long value) throws SQLException {
        delegate.setLong(index, value);
        bind(index, value);
    }

    @Override
    public void setShort(int index, short value) throws SQLException {
        delegate.setShort(index, value);
        bind(index, value);
    }

    @Override
    public void setByte(int index, byte value) throws SQLException {
        delegate.setByte(index, value);
        bind(index, value);
    }

    @Override
    public void setObject(int index, Object value) throws SQLException {
        delegate.setObject(index, value);
        bind(index, value);
    }

    @Override
    public void setObject(int index, Object value, int targetSqlType) throws SQLException {
        delegate.setObject(index, value, targetSqlType);
        bind(index, targetSqlType == java.sql.Types.BIGINT && value instanceof Long
                || targetSqlType == java.sql.Types.INTEGER && value instanceof Integer ? value : Boolean.FALSE);
    }

    @Override
    public void setObject(int index, Object value, int targetSqlType, int scale) throws SQLException {
        delegate.setObject(index, value, targetSqlType, scale);
        bind(index, Boolean.FALSE); // a key PostgreSQL reads through a conversion: the server decides
    }

    @Override
    public void setNull(int index, int sqlType) throws SQLException {
        delegate.setNull(index, sqlType);
        bind(index, null);
    }

    @Override
    public void setBigDecimal(int index, java.math.BigDecimal value) throws SQLException {
        delegate.setBigDecimal(index, value);
        bind(index, value);
    }

    @Override
    public void setString(int index, String value) throws SQLException {
        delegate.setString(index, value);
        bind(index, value);
    }

    @Override
    public void clearParameters() throws SQLException {
        delegate.clearParameters();
        binds = null;
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
