package io.lockhygiene.it.bed;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.logging.Logger;

import javax.sql.DataSource;

/**
 * A DataSource that tells nothing of itself: it hands out connections from a supplier and has no getters,
 * no unwrap and no log writer. For tests of code that reads a DataSource's configuration, and of pollers
 * whose source may fail.
 */
public final class OpaqueDataSource implements DataSource {
    /** Where the connections come from. */
    @FunctionalInterface
    public interface Source {
        Connection get() throws SQLException;
    }

    private final Source source;

    private OpaqueDataSource(Source source) {
        this.source = source;
    }

    public static OpaqueDataSource of(Source source) {
        return new OpaqueDataSource(source);
    }

    @Override
    public Connection getConnection() throws SQLException {
        return source.get();
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        return source.get();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() {
        return Logger.getGlobal();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
