package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;

import io.lockhygiene.build.Forwarding;

/** DatabaseMetaData whose getConnection() is the application's (wrapped) connection. */
@Forwarding(leaf = "GeneratedMetaData")
abstract class GuardedMetaData implements DatabaseMetaData {
    protected final DatabaseMetaData delegate;
    private final Connection connection;

    GuardedMetaData(DatabaseMetaData delegate, Connection connection) {
        this.delegate = delegate;
        this.connection = connection;
    }

    @Override
    public Connection getConnection() {
        return connection;
    }
}
