package io.lockhygiene.internal.guard;

import java.sql.SQLException;

/** One JDBC execution, given the SQL text to run (the statement's own, or its rewrite). */
@FunctionalInterface
public interface SqlCall<R> {
    R run(String sql) throws SQLException;
}
