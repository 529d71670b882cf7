package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.build.Forwarding;
import io.lockhygiene.internal.emulate.LocalRows;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.guard.Binds;
import io.lockhygiene.internal.guard.ConnectionGuard;
import io.lockhygiene.internal.guard.Face;
import io.lockhygiene.internal.guard.StatementPlan;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * A {@link Statement} whose SQL-taking methods go through the connection's guard. The fast path (no
 * "advisory" or "skip" anywhere in the text) hands the application's own String to pgjdbc; everything else
 * goes through {@link ConnectionGuard#run}, and the results are read from wherever the guard says.
 */
@Forwarding(leaf = "GeneratedStatement")
abstract class GuardedStatement<T extends Statement> implements Statement, Face {
    protected final T delegate;
    final LockHygieneConnection connection;
    final ConnectionGuard guard;
    /** Texts added with addBatch that passed the prefilter; null while none did. */
    private List<StatementPlan> batchPlans;
    /** Where the application reads results now; null: the delegate. */
    private Statement answer;
    private Outcome outcome;
    /** Statements of ours behind the current answer (closed at the next execution or close). */
    private final List<Statement> ours = new ArrayList<>(0);
    private ResultSet lastRaw;
    private GuardedResultSet lastWrapped;
    /** The execution now running asked for generated keys (a fenced twin could not give them back). */
    private boolean keysAsked;

    GuardedStatement(T delegate, LockHygieneConnection connection) {
        this.delegate = delegate;
        this.connection = connection;
        this.guard = connection.guard;
    }

    /** One Statement execution method, applied to whichever statement runs it. */
    @FunctionalInterface
    interface StatementCall<R> {
        R run(Statement target, String sql) throws SQLException;
    }

    /** The fast-path test of every execute*(sql): also forgets a previous execution's answer. */
    private boolean fast(String sql) throws SQLException {
        forgetAnswer();
        return guard.passesUnchecked(sql);
    }

    /** The slow path for Statement.execute*(sql). */
    private <R> R guarded(String sql, StatementCall<R> call) throws SQLException {
        return guard.run(guard.plan(sql, false), null, this, call::run);
    }

    /** The slow path for the execute*(sql, ...) variants that ask for generated keys. */
    private <R> R guardedKeys(String sql, StatementCall<R> call) throws SQLException {
        keysAsked = true;
        try {
            return guarded(sql, call);
        } finally {
            keysAsked = false;
        }
    }

    /** True while the running execution asked for generated keys. */
    final boolean keysAsked() {
        return keysAsked;
    }

    /** Forgets the previous execution's answer; our statements behind it are closed. */
    final void forgetAnswer() {
        answer = null;
        outcome = null;
        if (!ours.isEmpty()) {
            for (Statement s : ours) {
                try {
                    s.close();
                } catch (SQLException | RuntimeException ignored) {
                    // results the application no longer reads
                }
            }
            ours.clear();
        }
    }

    // Face: what the guard needs of this statement.

    @Override
    public Statement app() {
        return delegate;
    }

    @Override
    public Statement answer(LocalRows rows) throws SQLException {
        return LocalResult.rows(delegate, rows);
    }

    @Override
    public Statement answer(ShapeText.Query query, Binds binds) throws SQLException {
        return delegate; // a text without parameters runs on the application's own statement
    }

    @Override
    public Statement ended(SQLWarning warnings) {
        return LocalResult.ended(delegate, warnings);
    }

    @Override
    public Statement pieceStatement() throws SQLException {
        Statement s = connection.delegate.createStatement(delegate.getResultSetType(), delegate.getResultSetConcurrency());
        copySettings(s);
        ours.add(s);
        return s;
    }

    @Override
    public Statement runFenced(String sql, String fence) throws SQLException {
        if (keysAsked) {
            return null;
        }
        Statement s = pieceStatement();
        s.execute(sql + "\n;\n" + fence); // the newline ends a line comment the text may end in
        return s;
    }

    @Override
    public Statement chain(List<Statement> pieces) {
        return new GeneratedChainedResult(delegate, pieces);
    }

    @Override
    public void readFrom(Statement results, Outcome outcome) {
        this.answer = results == delegate ? null : results;
        this.outcome = outcome;
    }

    /** Our statement for an answer: the application's statement's settings, closed with it. */
    final void copySettings(Statement s) throws SQLException {
        s.setQueryTimeout(delegate.getQueryTimeout());
        s.setMaxRows(delegate.getMaxRows());
        s.setFetchSize(delegate.getFetchSize());
        if (delegate.getMaxFieldSize() > 0) {
            s.setMaxFieldSize(delegate.getMaxFieldSize());
        }
    }

    /** Keeps a statement of ours behind the current answer. */
    final void keep(Statement s) {
        ours.add(s);
    }

    /** The statement whose results the application reads now. */
    private Statement current() {
        return answer != null ? answer : delegate;
    }

    /** The current outcome of emulate, or null. */
    final Outcome outcome() {
        return outcome;
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
        return guardedKeys(sql, (st, s) -> st.executeUpdate(s, autoGeneratedKeys));
    }

    @Override
    public int executeUpdate(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql, columnIndexes);
        }
        return guardedKeys(sql, (st, s) -> st.executeUpdate(s, columnIndexes));
    }

    @Override
    public int executeUpdate(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.executeUpdate(sql, columnNames);
        }
        return guardedKeys(sql, (st, s) -> st.executeUpdate(s, columnNames));
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
        return guardedKeys(sql, (st, s) -> st.execute(s, autoGeneratedKeys));
    }

    @Override
    public boolean execute(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql, columnIndexes);
        }
        return guardedKeys(sql, (st, s) -> st.execute(s, columnIndexes));
    }

    @Override
    public boolean execute(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.execute(sql, columnNames);
        }
        return guardedKeys(sql, (st, s) -> st.execute(s, columnNames));
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
        return guardedKeys(sql, (st, s) -> st.executeLargeUpdate(s, autoGeneratedKeys));
    }

    @Override
    public long executeLargeUpdate(String sql, int[] columnIndexes) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql, columnIndexes);
        }
        return guardedKeys(sql, (st, s) -> st.executeLargeUpdate(s, columnIndexes));
    }

    @Override
    public long executeLargeUpdate(String sql, String[] columnNames) throws SQLException {
        if (fast(sql)) {
            return delegate.executeLargeUpdate(sql, columnNames);
        }
        return guardedKeys(sql, (st, s) -> st.executeLargeUpdate(s, columnNames));
    }

    @Override
    public void addBatch(String sql) throws SQLException {
        if (guard.passesUnchecked(sql)) {
            delegate.addBatch(sql);
            return;
        }
        StatementPlan plan = guard.plan(sql, false); // strict rejects here, before anything is sent
        addBatchPlan(plan);
        delegate.addBatch(plan.sent());
    }

    final void addBatchPlan(StatementPlan plan) {
        if (plan.unflagged()) {
            return;
        }
        if (batchPlans == null) {
            batchPlans = new ArrayList<>(2);
        }
        batchPlans.add(plan);
    }

    @Override
    public int[] executeBatch() throws SQLException {
        forgetAnswer();
        if (batchPlans == null && !guard.watchesEveryStatement()) {
            return delegate.executeBatch();
        }
        List<StatementPlan> plans = batchPlans == null ? Collections.emptyList() : batchPlans;
        batchPlans = null;
        return guard.runBatch(plans, delegate, s -> delegate.executeBatch());
    }

    @Override
    public long[] executeLargeBatch() throws SQLException {
        forgetAnswer();
        if (batchPlans == null && !guard.watchesEveryStatement()) {
            return delegate.executeLargeBatch();
        }
        List<StatementPlan> plans = batchPlans == null ? Collections.emptyList() : batchPlans;
        batchPlans = null;
        return guard.runBatch(plans, delegate, s -> delegate.executeLargeBatch());
    }

    @Override
    public void clearBatch() throws SQLException {
        batchPlans = null;
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

    /** PostgreSQL's warnings: those of the calls emulate decided, then the statement's own. */
    @Override
    public SQLWarning getWarnings() throws SQLException {
        SQLWarning own = current().getWarnings();
        Outcome o = outcome;
        if (o == null || o.rows() != null || o.warnings() == null) {
            return own;
        }
        SQLWarning first = new SQLWarning(o.warnings().getMessage(), o.warnings().getSQLState(), o.warnings().getErrorCode());
        SQLWarning last = first;
        for (SQLWarning w = o.warnings().getNextWarning(); w != null; w = w.getNextWarning()) {
            SQLWarning copy = new SQLWarning(w.getMessage(), w.getSQLState(), w.getErrorCode());
            last.setNextWarning(copy);
            last = copy;
        }
        if (own != null) {
            last.setNextWarning(own);
        }
        return first;
    }

    @Override
    public void clearWarnings() throws SQLException {
        if (outcome != null && outcome.rows() == null) {
            outcome = null;
        }
        current().clearWarnings();
    }

    @Override
    public ResultSet getGeneratedKeys() throws SQLException {
        return wrap(delegate.getGeneratedKeys());
    }

    /** A cancel reaches a wait for an advisory lock of emulate too. */
    @Override
    public void cancel() throws SQLException {
        guard.cancel();
        delegate.cancel();
    }

    @Override
    public void close() throws SQLException {
        forgetAnswer();
        delegate.close();
    }

    @Override
    public String toString() {
        return delegate.toString();
    }
}
