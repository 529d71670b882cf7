package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Opens the raw pgjdbc connection a lock holder uses: the same place (so the same pooler) as the
 * application's. Connections whose factories name the same {@link #endpoint} share one lock holder.
 */
@FunctionalInterface
public interface HolderFactory {
    Connection open() throws SQLException;

    /** What identifies the place: equal endpoints share the process's lock holder. */
    default Object endpoint() {
        return this;
    }

    /**
     * True when {@link #open} borrows from the application's own pool: the holder then gives its
     * connection back whenever it holds nothing.
     */
    default boolean pooled() {
        return false;
    }

    /**
     * True when the application's connections come from a pool that lends them to any thread: a lock then
     * belongs to the thread that took it, across borrows, not to one borrowed connection.
     */
    default boolean threadOwners() {
        return false;
    }

    /** A factory for {@code endpoint} that opens with {@code opener}. */
    static HolderFactory of(Object endpoint, boolean pooled, HolderFactory opener) {
        return of(endpoint, pooled, pooled, opener);
    }

    /** As {@link #of(Object, boolean, HolderFactory)}, with owners that are threads or connections. */
    static HolderFactory of(Object endpoint, boolean pooled, boolean threadOwners, HolderFactory opener) {
        return new HolderFactory() {
            @Override
            public boolean threadOwners() {
                return threadOwners;
            }

            @Override
            public Connection open() throws SQLException {
                return opener.open();
            }

            @Override
            public Object endpoint() {
                return endpoint;
            }

            @Override
            public boolean pooled() {
                return pooled;
            }
        };
    }
}
