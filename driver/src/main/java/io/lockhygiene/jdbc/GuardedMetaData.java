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

    @Override
    public <U> U unwrap(Class<U> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || delegate.isWrapperFor(iface);
    }
}
