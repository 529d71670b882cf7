package io.lockhygiene.internal.guard;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.List;

import io.lockhygiene.internal.emulate.Outcome.LocalRows;
import io.lockhygiene.internal.guard.PlanRun.Executed;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * The statements the connection guard runs an execution on, made by the JDBC face of the application's
 * statement: its pgjdbc statement, and statements of ours with its settings. The guard only asks for them; it
 * says where the application reads the results by what {@link ConnectionGuard#run} returns ({@link Executed}).
 */
public interface StatementSource {
    /** The application's own pgjdbc statement. */
    Statement app() throws SQLException;

    /** A statement that shows {@code rows} as pgjdbc would (a result set made by pgjdbc). */
    Statement answer(LocalRows rows) throws SQLException;

    /** Where the server computes an emulated statement's answer: the application's statement, or one of ours with the binds. */
    Statement answer(ShapeText.Query query, Binds binds) throws SQLException;

    /** What pgjdbc shows after a transaction end LockHygiene sent with its check: no result, count 0. */
    Statement ended(SQLWarning warnings);

    /** One statement of a text of several: a statement of ours, with the application's statement's settings. */
    Statement pieceStatement() throws SQLException;

    /**
     * Runs the application's statement, with its settings and bind values, followed by {@code fence}, as one
     * execution (one round trip; in autocommit one implicit transaction, so a failing fence undoes it), on a
     * statement of ours; returns that statement, at its first result. Null when that cannot be done exactly
     * (bind values not all recorded, generated keys asked for, a callable statement): the caller then fences
     * another way.
     *
     * @param sql what is sent of the application's statement (its text, or a prepared statement's)
     */
    Statement runFenced(String sql, String fence) throws SQLException;

    /** The results of several statements, in order, as one statement (a fence's result is not shown). */
    Statement chain(List<Statement> pieces) throws SQLException;
}
