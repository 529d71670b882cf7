package io.lockhygiene.internal.placement;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.Properties;

/**
 * Marks, per thread, a pgjdbc connect whose connection must stay raw: the one the jdbc:lockhygiene: driver
 * is about to wrap itself, or a lock holder's. The agent's hook on pgjdbc's connect asks {@link #active()}
 * and leaves such a connection alone. A class of its own so that the agent's hook can ask without loading
 * (and registering) the driver; in placement, beside the routes a holder connects by, so that every front end
 * (the JDBC driver, the agent, R2DBC) connects its holders raw without knowing the JDBC front end.
 */
public final class RawConnect {
    private static final ThreadLocal<Boolean> ACTIVE = new ThreadLocal<>();

    private RawConnect() {
    }

    public static boolean active() {
        return ACTIVE.get() != null;
    }

    /** {@code pgjdbc.connect(url, props)}, marked: the connection it returns stays raw. */
    public static Connection connect(Driver pgjdbc, String url, Properties props) throws SQLException {
        Boolean previous = ACTIVE.get(); // a raw connect inside another stays marked
        ACTIVE.set(Boolean.TRUE);
        try {
            return pgjdbc.connect(url, props);
        } finally {
            if (previous == null) {
                ACTIVE.remove();
            } else {
                ACTIVE.set(previous);
            }
        }
    }
}
