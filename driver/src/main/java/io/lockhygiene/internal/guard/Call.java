package io.lockhygiene.internal.guard;

import java.sql.SQLException;
import java.sql.Statement;

/**
 * One JDBC execution method of the application (execute, executeQuery, executeUpdate, executeBatch, ...),
 * applied to whichever statement the guard runs it on, with the text for the methods that take one. The one
 * functional type of the statement path: the guard decides where the call runs, the JDBC face supplies it.
 */
@FunctionalInterface
public interface Call<R> {
    R run(Statement target, String sql) throws SQLException;
}
