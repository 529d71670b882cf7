package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;
import java.sql.Wrapper;

/**
 * java.sql.Wrapper for every wrapper of ours: this object first, then whatever the wrapped object
 * reaches (pgjdbc's own types), so nested wrappers are found and work is never done twice.
 */
final class Wrappers {
    private Wrappers() {
    }

    static <U> U unwrap(Object self, Wrapper delegate, Class<U> iface) throws SQLException {
        return iface.isInstance(self) ? iface.cast(self) : delegate.unwrap(iface);
    }

    static boolean isWrapperFor(Object self, Wrapper delegate, Class<?> iface) throws SQLException {
        return iface.isInstance(self) || delegate.isWrapperFor(iface);
    }
}
