package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.session.TransactionPooling;

/**
 * JDBC's way of asking the server whether one connection reaches PostgreSQL through a transaction pooler; the
 * answer and its rule are the core's ({@link TransactionPooling}): pgjdbc's announced pid against
 * {@code pg_backend_pid()}, once, at once.
 */
final class PoolerDetection {
    private final Connection raw;
    private final TransactionPooling pooling;

    PoolerDetection(Connection raw, TransactionPooling pooling) {
        this.raw = raw;
        this.pooling = pooling;
    }

    /** See {@link TransactionPooling#assumed()}. */
    boolean assumesPooling() {
        return pooling.assumed();
    }

    /** Resolved once per connection (asked again after a failed question, assuming a pooler meanwhile). */
    boolean transactionPooling() throws SQLException {
        Boolean known = pooling.known();
        if (known != null) {
            return known;
        }
        int announced = Pgjdbc.backendPid(raw);
        try (Statement s = raw.createStatement(); ResultSet rs = s.executeQuery(TransactionPooling.BACKEND_PID_QUERY)) {
            rs.next();
            return pooling.detected(announced, rs.getInt(1));
        } catch (SQLException e) {
            return pooling.undetected(e);
        }
    }
}
