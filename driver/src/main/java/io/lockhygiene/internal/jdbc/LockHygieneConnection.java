package io.lockhygiene.internal.jdbc;

import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.concurrent.Executor;

import io.lockhygiene.build.Forwarding;
import io.lockhygiene.internal.guard.ConnectionGuard;
import io.lockhygiene.internal.guard.StatementPlan;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.session.SkipLockedCheck;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * The application's view of a pgjdbc connection under LockHygiene. Statements it creates are guarded;
 * commit and rollback carry the leak check when it is due; close is the return event. Everything else
 * is pgjdbc's: {@code unwrap(PGConnection.class)} reaches it.
 */
@Forwarding(leaf = "GeneratedConnection", extensible = true)
public abstract class LockHygieneConnection implements Connection {
    protected final Connection delegate;
    final ConnectionGuard guard;
    /**
     * Plain statements' fenced texts (the application's text, then the commit fence), parsed by pgjdbc once
     * per connection: an owner that holds locks sends one with each autocommit statement, and pgjdbc parses a
     * Statement's text anew on every execution (a quarter of the worker's CPU in the own-key benchmark). By
     * the application's text: {fence, parsed}; started afresh past {@link #FENCED_TEXTS}.
     */
    private final java.util.concurrent.ConcurrentHashMap<String, Object[]> fencedTexts =
            new java.util.concurrent.ConcurrentHashMap<>();
    private static final int FENCED_TEXTS = 64;

    /**
     * For the agent, which subclasses this at run time to add pgjdbc's {@code PGConnection} interface (so
     * that casts keep working) in the class loader that has pgjdbc. Applications use {@link #wrap}.
     *
     * @throws SQLException when emulate's {@code lockhygiene.holderUrl} cannot be used (the message says why)
     */
    protected LockHygieneConnection(Connection delegate, Settings settings, HolderRoute route) throws SQLException {
        this.delegate = delegate;
        this.guard = new ConnectionGuard(delegate, settings, route);
    }

    /**
     * Runs {@code sql} followed by {@code fence} as one text on {@code piece}, a pgjdbc statement of this
     * connection, as {@code piece.execute(text)} would, parsed once while the fence stays the same.
     */
    final void executeFenced(Statement piece, String sql, String fence) throws SQLException {
        Object[] known = fencedTexts.get(sql);
        if (known == null || !fence.equals(known[0])) {
            String text = sql + "\n;\n" + fence; // the newline ends a line comment the text may end in
            Object parsed = io.lockhygiene.internal.pgjdbc.Pgjdbc.parse(delegate, text);
            if (parsed == null) {
                piece.execute(text);
                return;
            }
            if (fencedTexts.size() >= FENCED_TEXTS) {
                fencedTexts.clear();
            }
            known = new Object[] {fence, parsed};
            fencedTexts.put(sql, known);
        }
        io.lockhygiene.internal.pgjdbc.Pgjdbc.executeParsed(piece, known[1]);
    }

    /** The pgjdbc connection underneath, for the agent's generated PGConnection methods. */
    public final Connection pgDelegate() {
        return delegate;
    }

    /**
     * Wraps a pgjdbc connection, unless it is already one of ours (a pool of our connections behind our
     * DataSource, say): work is never done twice. A connection that cannot be guarded as configured is
     * closed and refused.
     *
     * @param route where it came from, for emulate's lock holder; may be null, and then emulate behaves as
     *              detect
     */
    public static Connection wrap(Connection pgConnection, Settings settings, HolderRoute route) throws SQLException {
        if (pgConnection.isWrapperFor(LockHygieneConnection.class)) {
            return pgConnection;
        }
        String refusal = SkipLockedCheck.refusal(settings);
        if (refusal != null) {
            closeQuietly(pgConnection);
            throw new SQLException("LockHygiene refused the connection: " + refusal, "HY024");
        }
        try {
            return new GeneratedConnection(pgConnection, settings, route);
        } catch (SQLException | RuntimeException e) {
            closeQuietly(pgConnection);
            throw e;
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // refused anyway; the refusal is what the application must see
        }
    }

    /** The settings this connection resolved at connect time. */
    public Settings settings() {
        return guard.settings();
    }

    /**
     * The return event of a connection pool (the DataSource wrapper's close, the agent's pool hooks): the
     * return leak check, and emulate's holder lets go of what it still holds (reported). Never throws.
     */
    public void checkOnReturn() {
        guard.onReturn();
    }

    @Override
    public Statement createStatement() throws SQLException {
        return new GeneratedStatement<>(delegate.createStatement(), this);
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
        return new GeneratedStatement<>(delegate.createStatement(resultSetType, resultSetConcurrency), this);
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability)
            throws SQLException {
        return new GeneratedStatement<>(delegate.createStatement(resultSetType, resultSetConcurrency, resultSetHoldability), this);
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent()), this, plan);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
            throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent(), resultSetType, resultSetConcurrency),
                this, plan);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency,
                                              int resultSetHoldability) throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent(), resultSetType, resultSetConcurrency,
                resultSetHoldability), this, plan);
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent(), autoGeneratedKeys), this, plan).keysPrepared();
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent(), columnIndexes), this, plan).keysPrepared();
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        StatementPlan plan = guard.plan(sql, false);
        return new GeneratedPreparedStatement<>(delegate.prepareStatement(plan.sent(), columnNames), this, plan).keysPrepared();
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        StatementPlan plan = guard.plan(sql, true);
        return new GeneratedCallableStatement(delegate.prepareCall(plan.sent()), this, plan);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        StatementPlan plan = guard.plan(sql, true);
        return new GeneratedCallableStatement(delegate.prepareCall(plan.sent(), resultSetType, resultSetConcurrency), this, plan);
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency,
                                         int resultSetHoldability) throws SQLException {
        StatementPlan plan = guard.plan(sql, true);
        return new GeneratedCallableStatement(delegate.prepareCall(plan.sent(), resultSetType, resultSetConcurrency,
                resultSetHoldability), this, plan);
    }

    @Override
    public void setAutoCommit(boolean autoCommit) throws SQLException {
        if (autoCommit && !delegate.getAutoCommit()) {
            guard.commit(); // switching autocommit on commits: the same transaction end as commit()
        }
        delegate.setAutoCommit(autoCommit);
    }

    @Override
    public void commit() throws SQLException {
        guard.commit();
    }

    @Override
    public void rollback() throws SQLException {
        guard.rollback();
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        Savepoint sp = delegate.setSavepoint();
        guard.followSavepoint(TransactionControl.Kind.SAVEPOINT, sp);
        return sp;
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        Savepoint sp = delegate.setSavepoint(name);
        guard.followSavepoint(TransactionControl.Kind.SAVEPOINT, sp);
        return sp;
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        delegate.rollback(savepoint); // not a transaction end
        guard.followSavepoint(TransactionControl.Kind.ROLLBACK_TO, savepoint);
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        delegate.releaseSavepoint(savepoint);
        guard.followSavepoint(TransactionControl.Kind.RELEASE, savepoint);
    }

    @Override
    public void close() throws SQLException {
        guard.onClose();
        delegate.close();
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        guard.onAbort();
        delegate.abort(executor);
    }

    @Override
    public DatabaseMetaData getMetaData() throws SQLException {
        return new GeneratedMetaData(delegate.getMetaData(), this);
    }


    @Override
    public String toString() {
        return "LockHygiene[" + guard.id() + ", " + delegate + "]";
    }
}
