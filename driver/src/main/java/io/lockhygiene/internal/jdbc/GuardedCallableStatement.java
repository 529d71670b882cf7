package io.lockhygiene.internal.jdbc;

import java.sql.CallableStatement;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.build.Forwarding;
import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.guard.StatementPlan;
import io.lockhygiene.internal.shape.ShapeEvaluator;

/**
 * A {@link CallableStatement}: the prepared-statement behaviour, every out-parameter method forwarded, except
 * when emulate answered a {@code {? = call f(?)}} / {@code {call f(?)}} of an advisory function itself: then
 * the out parameter is the function's result, read as pgjdbc reads it (execute() is false when an out
 * parameter is registered, as pgjdbc's).
 */
@Forwarding(leaf = "GeneratedCallableStatement", bindsField = "recording()")
abstract class GuardedCallableStatement extends GuardedPreparedStatement<CallableStatement>
        implements CallableStatement {
    private boolean outRegistered;
    private boolean wasNull;

    GuardedCallableStatement(CallableStatement delegate, LockHygieneConnection connection, StatementPlan plan) {
        super(delegate, connection, plan);
    }

    /** A call's out parameters cannot be read from a twin: its commit is fenced by a transaction of ours. */
    @Override
    Statement fencedRun(String sql, String fence) {
        return null;
    }

    /** The function's result when emulate answered, else null (and {@code answered[0]} false). */
    private Object local(boolean[] answered) {
        Outcome o = outcome();
        LocalRows rows = o == null ? null : o.rows();
        answered[0] = rows != null;
        return rows == null ? null : rows.outValue();
    }

    @Override
    public boolean execute() throws SQLException {
        boolean rs = super.execute();
        Outcome o = outcome();
        return o != null && o.rows() != null && outRegistered ? false : rs;
    }

    @Override
    public void registerOutParameter(int index, int sqlType) throws SQLException {
        delegate.registerOutParameter(index, sqlType);
        outRegistered = true;
    }

    @Override
    public void registerOutParameter(int index, int sqlType, int scale) throws SQLException {
        delegate.registerOutParameter(index, sqlType, scale);
        outRegistered = true;
    }

    @Override
    public void registerOutParameter(int index, int sqlType, String typeName) throws SQLException {
        delegate.registerOutParameter(index, sqlType, typeName);
        outRegistered = true;
    }

    @Override
    public boolean wasNull() throws SQLException {
        boolean[] answered = new boolean[1];
        local(answered);
        return answered[0] ? wasNull : delegate.wasNull();
    }

    @Override
    public boolean getBoolean(int index) throws SQLException {
        boolean[] answered = new boolean[1];
        Object v = local(answered);
        if (!answered[0]) {
            return delegate.getBoolean(index);
        }
        wasNull = v == null;
        return Boolean.TRUE.equals(v);
    }

    @Override
    public Object getObject(int index) throws SQLException {
        boolean[] answered = new boolean[1];
        Object v = local(answered);
        if (!answered[0]) {
            return delegate.getObject(index);
        }
        wasNull = v == null;
        return v == ShapeEvaluator.VOID ? "" : v;
    }

    @Override
    public String getString(int index) throws SQLException {
        boolean[] answered = new boolean[1];
        Object v = local(answered);
        if (!answered[0]) {
            return delegate.getString(index);
        }
        wasNull = v == null;
        return v == null ? null : v == ShapeEvaluator.VOID ? "" : Boolean.TRUE.equals(v) ? "t" : "f";
    }

    @Override
    public <U> U getObject(int index, Class<U> type) throws SQLException {
        boolean[] answered = new boolean[1];
        Object v = local(answered);
        if (!answered[0]) {
            return delegate.getObject(index, type);
        }
        wasNull = v == null;
        if (v == null) {
            return null;
        }
        if (type == String.class) {
            return type.cast(getString(index));
        }
        return type.cast(v == ShapeEvaluator.VOID ? "" : v);
    }
}
