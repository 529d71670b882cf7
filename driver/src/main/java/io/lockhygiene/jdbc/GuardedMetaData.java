package io.lockhygiene.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;

/** DatabaseMetaData whose getConnection() is the application's (wrapped) connection. */
final class GuardedMetaData extends DatabaseMetaDataDelegate {
    private final Connection connection;

    GuardedMetaData(DatabaseMetaData delegate, Connection connection) {
        super(delegate);
        this.connection = connection;
    }

    @Override
    public Connection getConnection() {
        return connection;
    }

}
