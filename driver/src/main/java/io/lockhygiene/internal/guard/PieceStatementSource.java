package io.lockhygiene.internal.guard;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.lockhygiene.internal.guard.PlanRun.Executed;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * The face of one statement of a text of several (see {@link ConnectionGuard}'s split): it runs on a
 * statement of ours, which keeps its results for the application to read in order after the others.
 */
final class PieceStatementSource implements StatementSource {
    private final StatementSource outer;
    private Statement own;

    PieceStatementSource(StatementSource outer) {
        this.outer = outer;
    }

    @Override
    public Statement app() throws SQLException {
        if (own == null) {
            own = outer.pieceStatement();
        }
        return own;
    }

    @Override
    public Statement answer(LocalRows rows) throws SQLException {
        return outer.answer(rows);
    }

    @Override
    public Statement answer(ShapeText.Query query, Binds binds) throws SQLException {
        return app();
    }

    @Override
    public Statement ended(SQLWarning warnings) {
        return outer.ended(warnings);
    }

    @Override
    public Statement pieceStatement() throws SQLException {
        return outer.pieceStatement();
    }

    /** A piece runs inside a transaction its text opens or ours wraps: the end is fenced, not the piece. */
    @Override
    public Statement runFenced(String sql, String fence) {
        return null;
    }

    @Override
    public Statement chain(List<Statement> pieces) throws SQLException {
        return outer.chain(pieces);
    }

    /** Where the piece's results are, after it ran. */
    Statement results(Executed<?> ran) throws SQLException {
        return ran.resultsOn() != null ? ran.resultsOn() : app();
    }

    void close() {
        if (own != null) {
            try {
                own.close();
            } catch (SQLException | RuntimeException ignored) {
                // a failed piece's statement
            }
        }
    }
}
