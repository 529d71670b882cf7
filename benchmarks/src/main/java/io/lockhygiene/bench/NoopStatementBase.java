package io.lockhygiene.bench;

import java.sql.Connection;
import java.sql.Statement;

import io.lockhygiene.build.Forwarding;

/**
 * A Statement that does nothing, so a benchmark measures only the layer in front of it. Its leaf,
 * {@code NoopStatement}, is written at build time by the same processor as the driver's wrappers.
 */
@Forwarding(leaf = "NoopStatement", noop = true)
public abstract class NoopStatementBase implements Statement {
    private final Connection connection;

    public NoopStatementBase(Connection connection) {
        this.connection = connection;
    }

    @Override
    public Connection getConnection() {
        return connection;
    }
}
