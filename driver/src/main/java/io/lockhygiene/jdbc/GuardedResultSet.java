package io.lockhygiene.jdbc;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** A ResultSet whose getStatement() is the application's (wrapped) statement. */
final class GuardedResultSet extends ResultSetDelegate {
    private final Statement owner;

    GuardedResultSet(ResultSet delegate, Statement owner) {
        super(delegate);
        this.owner = owner;
    }

    @Override
    public Statement getStatement() {
        return owner;
    }


    @Override
    public String toString() {
        return delegate.toString();
    }
}
