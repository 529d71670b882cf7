package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.settings.Settings;

/**
 * Whether one connection reaches PostgreSQL through a transaction pooler: from {@code lockhygiene.poolMode} (which
 * the default sets to session for a route it found direct), or detected once (the BackendKeyData pid pgjdbc was
 * given differs from {@code pg_backend_pid()}).
 */
final class PoolerDetection {
    private final Connection raw;
    private final Settings settings;
    private final String id;
    /** emulate on connections a pool lends to any thread. */
    private final boolean threadOwners;
    private Boolean transactionPooling; // resolved lazily: null until first needed, or while detection fails

    PoolerDetection(Connection raw, Settings settings, String id, boolean threadOwners) {
        this.raw = raw;
        this.settings = settings;
        this.id = id;
        this.threadOwners = threadOwners;
    }

    /**
     * What {@link #transactionPooling()} answers, without asking the server: a pooler unless known
     * otherwise. Detection can fail (inside an aborted transaction) and is then tried again later; until
     * then every reader must assume the same stricter answer, or a transaction end goes unwatched.
     */
    boolean assumesPooling() {
        return !Boolean.FALSE.equals(transactionPooling);
    }

    /** Resolved once per connection; auto looks for a pooler (BackendKeyData pid != pg_backend_pid()). */
    boolean transactionPooling() throws SQLException {
        if (transactionPooling == null && threadOwners && !settings.modeIsDefault()) {
            // emulate chosen on connections a pool lends to any thread: the pool is the pooler (a thread's lock
            // lives in the lock holder across borrows, never on one borrowed connection). The default does this
            // only behind a transaction pooler (asked below): a pool of the server's own sessions, or of a
            // session pooler's, keeps pgjdbc's meaning, a lock belonging to the connection that took it
            transactionPooling = true;
        }
        if (transactionPooling == null) {
            switch (settings.poolMode()) {
                case TRANSACTION:
                    transactionPooling = true;
                    break;
                case SESSION:
                    transactionPooling = false;
                    break;
                default:
                    Boolean detected = detectPooler();
                    if (detected == null) {
                        return true;
                    }
                    transactionPooling = detected;
            }
        }
        return transactionPooling;
    }

    private Boolean detectPooler() throws SQLException {
        int announced = Pgjdbc.backendPid(raw);
        try (Statement s = raw.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_catalog.pg_backend_pid()")) {
            rs.next();
            boolean pooler = rs.getInt(1) != announced;
            Log.debug("LockHygiene: {} {}", id, pooler
                    ? "reaches PostgreSQL through a pooler: treated as transaction pooling (lockhygiene.poolMode=session if it is not)"
                    : "is connected directly");
            return pooler;
        } catch (SQLException e) {
            // e.g. inside an aborted transaction: the application's own statement will fail with the real
            // reason. Assume the stricter answer for now and ask again next time.
            Log.debug("LockHygiene: {} could not tell whether a pooler is in between ({}); assuming one", id, e.toString());
            return null;
        }
    }
}
