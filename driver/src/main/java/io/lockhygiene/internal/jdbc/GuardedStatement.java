package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.build.Forwarding;


/**
 * A {@link Statement} whose SQL-taking methods go through the connection's guard. The fast path (no
 * "advisory" or "skip" anywhere in the text) hands the application's own String to pgjdbc.
 */
@Forwarding(leaf = "GeneratedStatement")
abstract class GuardedStatement<T extends Statement> implements Statement {
    protected final T delegate;
    final LockHygieneConnection connection;
    final ConnectionGuard guard;
    /** Texts added with addBatch that passed the prefilter; null while none did. */
    List<Flagged> batchFlagged;
    private Statement onHolder;
    private Statement emulated;
    private ResultSet lastRaw;
    private GuardedResultSet lastWrapped;

    GuardedStatement(T delegate, LockHygieneConnection connection) {
        this.delegate = delegate;
        this.connection = connection;
        this.guard = connection.guard;
    }

    /** One Statement execution method, applied to whichever statement runs it (ours or the holder's). */
    @FunctionalInterface
    interface StatementCall<R> {
        R run(Statement target, String sql) throws SQLException;
    }

    /** The fast-path test of every execute*(sql): also forgets a previous emulated execution's results. */
    private boolean fast(String sql) throws SQLException {
        emulated = null;
        return guard.passesUnchecked(sql);
    }

    /** The slow path for Statement.execute*(sql): emulate, reject, rewrite, record, wrap, end. */
    final <R> R guarded(String sql, StatementCall<R> call) throws SQLException {
        StatementPlan plan = guard.plan(sql); // the same plan a prepared statement gets
        if (guard.checksAtTextEnd(plan)) {
            return endingTransaction(plan, call);
        }
        if (plan.table != null) {
            LocalResult answer = guard.runTable(plan, null, delegate);
            if (answer != null) {
                emulated = answer; // getResultSet(), getWarnings() read the answer now
                return call.run(answer, sql);
            }
        }
        if (plan.emulated != null) {
            Statement onHolder = holderStatement();
            R result = guard.runOnHolder(plan.emulated, sql, onHolder, () -> call.run(onHolder, sql));
            emulated = onHolder; // getResultSet(), getUpdateCount(), getMoreResults() read from it now
            return result;
        }
        R result = guard.execute(plan.flagged, delegate, plan.sent, s -> call.run(delegate, s));
        guard.followSavepoints(plan.scan, sql); // the text's own SAVEPOINT / ROLLBACK TO / RELEASE, if any
        return result;
    }

    /**
     * A text whose last statement ends the transaction while a leak check is due: what comes before the
     * end runs on this statement as usual (its results are the application's), then the end itself goes
     * with the check in one round trip on a statement of ours, so the check runs on the server that held
     * the transaction. A text that is only the end shows what pgjdbc shows after one; after a longer
     * text, the end's own update count is the one result the application does not see.
     */
    private <R> R endingTransaction(StatementPlan plan, StatementCall<R> call) throws SQLException {
        io.lockhygiene.internal.sql.TransactionControl end = plan.scan.finalTransactionEnd();
        String endText = end.textIn(plan.original);
        if (end.statementIndex() == 0) {
            LocalResult ended = LocalResult.ended(delegate, guard.endTransactionByText(endText));
            emulated = ended;
            return call.run(ended, plan.original);
        }
        // The rewrite splices only before the end: the end starts as far from the text's end in both.
        String before = plan.sent.substring(0, plan.sent.length() - (plan.original.length() - end.start()));
        R result = guard.execute(plan.flagged, delegate, before, s -> call.run(delegate, s));
        guard.endTransactionByText(endText);
        return result;
    }

    /** This statement's twin on the lock holder, created on first emulated execution. */
    private Statement holderStatement() throws SQLException {
        Connection holderConnection = guard.holderConnection();
        if (onHolder == null || onHolder.isClosed() || onHolder.getConnection() != holderConnection) {
            onHolder = holderConnection.createStatement(); // first use, or the holder was opened afresh
            onHolder.setQueryTimeout(delegate.getQueryTimeout());
        }
        return onHolder;
    }

    /** Results are read from {@code answer} until the next execution (null: this statement's own). */
    final void answeredBy(Statement answer) {
        emulated = answer;
    }

    /** The statement whose results the application reads now. */
    private Statement current() {
        return emulated != null ? emulated : delegate;
    }

    final ResultSet wrap(ResultSet rs) {
        if (rs == null) {
            return null;
        }
        if (rs != lastRaw) {
            lastRaw = rs;
            lastWrapped = new GeneratedResultSet(rs, this);
        }
        return lastWrapped;
    }

    @Override
    public ResultSet executeQuery(String sql) throws SQLException {
        if (fast(sql)) {
            return wrap(delegate.executeQuery(sql));
        }
        return wrap(guarded(sql, Statement::executeQuery));
    }

    @Override
    public int executeUpdate(String sql) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql);
        }
        return guarded(sql, Statement::executeUpdate);
    }

    @Override
    public int executeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql, autoGeneratedKeys);
        }
        return guarded(sql, (st, s) -> st.executeUpdate(s, autoGeneratedKeys));
    }

    @Override
    public int executeUpdate(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql, columnIndexes);
        }
        return guarded(sql, (st, s) -> st.executeUpdate(s, columnIndexes));
    }

    @Override
    public int executeUpdate(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql, columnNames);
        }
        return guarded(sql, (st, s) -> st.executeUpdate(s, columnNames));
    }

    @Override
    public boolean execute(String sql) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql);
        }
        return guarded(sql, Statement::execute);
    }

    @Override
    public boolean execute(String sql, int autoGeneratedKeys) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql, autoGeneratedKeys);
        }
        return guarded(sql, (st, s) -> st.execute(s, autoGeneratedKeys));
    }

    @Override
    public boolean execute(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql, columnIndexes);
        }
        return guarded(sql, (st, s) -> st.execute(s, columnIndexes));
    }

    @Override
    public boolean execute(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql, columnNames);
        }
        return guarded(sql, (st, s) -> st.execute(s, columnNames));
    }

    @Override
    public long executeLargeUpdate(String sql) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql);
        }
        return guarded(sql, Statement::executeLargeUpdate);
    }

    @Override
    public long executeLargeUpdate(String sql, int autoGeneratedKeys) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql, autoGeneratedKeys);
        }
        return guarded(sql, (st, s) -> st.executeLargeUpdate(s, autoGeneratedKeys));
    }

    @Override
    public long executeLargeUpdate(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql, columnIndexes);
        }
        return guarded(sql, (st, s) -> st.executeLargeUpdate(s, columnIndexes));
    }

    @Override
    public long executeLargeUpdate(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql, columnNames);
        }
        return guarded(sql, (st, s) -> st.executeLargeUpdate(s, columnNames));
    }

    @Override
    public void addBatch(String sql) throws SQLException {
        if (fast(sql)) {
            delegate.addBatch(sql);
            return;
        }
        StatementPlan plan = guard.plan(sql); // strict rejects here, before anything is sent
        if (plan.emulated != null) {
            addFlagged(new Flagged(plan.emulated, sql)); // a batch runs on our connection: as detect
        } else if (!plan.flagged.isEmpty()) {
            addFlagged(plan.flagged.get(0));
        }
        delegate.addBatch(plan.sent);
    }

    final void addFlagged(Flagged f) {
        if (batchFlagged == null) {
            batchFlagged = new ArrayList<>(2);
        }
        batchFlagged.add(f);
    }

    @Override
    public int[] executeBatch() throws SQLException {
        if (batchFlagged == null && !guard.watchesEveryStatement()) {
            return delegate.executeBatch();
        }
        List<Flagged> flagged = batchFlagged == null ? Collections.emptyList() : batchFlagged;
        batchFlagged = null;
        return guard.execute(flagged, delegate, null, s -> delegate.executeBatch());
    }

    @Override
    public long[] executeLargeBatch() throws SQLException {
        if (batchFlagged == null && !guard.watchesEveryStatement()) {
            return delegate.executeLargeBatch();
        }
        List<Flagged> flagged = batchFlagged == null ? Collections.emptyList() : batchFlagged;
        batchFlagged = null;
        return guard.execute(flagged, delegate, null, s -> delegate.executeLargeBatch());
    }

    @Override
    public void clearBatch() throws SQLException {
        batchFlagged = null;
        delegate.clearBatch();
    }

    @Override
    public Connection getConnection() {
        return connection;
    }

    @Override
    public ResultSet getResultSet() throws SQLException {
        return wrap(current().getResultSet());
    }

    @Override
    public int getUpdateCount() throws SQLException {
        return current().getUpdateCount();
    }

    @Override
    public long getLargeUpdateCount() throws SQLException {
        return current().getLargeUpdateCount();
    }

    @Override
    public boolean getMoreResults() throws SQLException {
        return current().getMoreResults();
    }

    @Override
    public boolean getMoreResults(int current) throws SQLException {
        return current().getMoreResults(current);
    }

    @Override
    public java.sql.SQLWarning getWarnings() throws SQLException {
        return current().getWarnings();
    }

    @Override
    public ResultSet getGeneratedKeys() throws SQLException {
        return wrap(delegate.getGeneratedKeys());
    }

    @Override
    public void close() throws SQLException {
        try {
            if (onHolder != null) {
                onHolder.close();
            }
        } catch (SQLException ignored) {
            // the holder may be gone already; our own statement is what the application closes
        }
        delegate.close();
    }


    @Override
    public String toString() {
        return delegate.toString();
    }
}
