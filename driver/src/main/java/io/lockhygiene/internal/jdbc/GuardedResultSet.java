package io.lockhygiene.internal.jdbc;

import java.sql.ResultSet;
import java.sql.Statement;

import io.lockhygiene.build.Forwarding;

/** A ResultSet whose getStatement() is the application's (wrapped) statement. */
@Forwarding(leaf = "GeneratedResultSet")
abstract class GuardedResultSet implements ResultSet {
    protected final ResultSet delegate;
    private final Statement owner;

    GuardedResultSet(ResultSet delegate, Statement owner) {
        this.delegate = delegate;
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
