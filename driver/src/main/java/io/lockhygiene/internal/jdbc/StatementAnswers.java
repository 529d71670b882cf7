package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.guard.Binds;
import io.lockhygiene.internal.guard.StatementSource;
import io.lockhygiene.internal.guard.PlanRun.Executed;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * Where the application reads one statement's results now: pgjdbc's own statement, or one the guard had
 * made (rows emulate answered, the end of a transaction sent with its check, the statements of a split
 * text chained), and the statements of ours behind them, closed at the next execution. The statement's
 * {@link StatementSource} for the guard; the kind of statement only decides where an emulated query and a fenced run go.
 */
final class StatementAnswers implements StatementSource {
    private final GuardedStatement<?> owner;
    private final Statement app;
    /** Where the application reads results now; null: the application's statement. */
    private Statement answer;
    private Outcome outcome;
    /** Statements of ours behind the current answer (closed at the next execution or close). */
    private final List<Statement> ours = new ArrayList<>(0);

    StatementAnswers(GuardedStatement<?> owner, Statement app) {
        this.owner = owner;
        this.app = app;
    }

    @Override
    public Statement app() {
        return app;
    }

    @Override
    public Statement answer(LocalRows rows) throws SQLException {
        return LocalResult.rows(app, rows);
    }

    @Override
    public Statement answer(ShapeText.Query query, Binds binds) throws SQLException {
        return owner.answerFor(query, binds);
    }

    @Override
    public Statement ended(SQLWarning warnings) {
        return LocalResult.ended(app, warnings);
    }

    @Override
    public Statement pieceStatement() throws SQLException {
        Statement s = owner.connection.delegate.createStatement(app.getResultSetType(), app.getResultSetConcurrency());
        copySettingsTo(s);
        ours.add(s);
        return s;
    }

    @Override
    public Statement runFenced(String sql, String fence) throws SQLException {
        return owner.fencedRun(sql, fence);
    }

    @Override
    public Statement chain(List<Statement> pieces) {
        return new GeneratedChainedResult(app, pieces);
    }

    /** The application reads what the guard's execution says, until its next execution; returns its value. */
    <R> R show(Executed<R> ran) {
        Statement results = ran.resultsOn();
        this.answer = results == app ? null : results;
        this.outcome = ran.outcome();
        return ran.value();
    }

    /** Forgets the previous execution's answer; our statements behind it are closed. */
    void forget() {
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

    /** The statement whose results the application reads now. */
    Statement current() {
        return answer != null ? answer : app;
    }

    /** The current outcome of emulate, or null. */
    Outcome outcome() {
        return outcome;
    }

    /** Keeps a statement of ours behind the current answer. */
    void keep(Statement s) {
        ours.add(s);
    }

    /** Our statement for an answer: the application's statement's settings, closed with it. */
    void copySettingsTo(Statement s) throws SQLException {
        s.setQueryTimeout(app.getQueryTimeout());
        s.setMaxRows(app.getMaxRows());
        s.setFetchSize(app.getFetchSize());
        if (app.getMaxFieldSize() > 0) {
            s.setMaxFieldSize(app.getMaxFieldSize());
        }
    }

    /** PostgreSQL's warnings: those of the calls emulate decided, then the statement's own. */
    SQLWarning warnings() throws SQLException {
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

    void clearWarnings() throws SQLException {
        if (outcome != null && outcome.rows() == null) {
            outcome = null;
        }
        current().clearWarnings();
    }
}
