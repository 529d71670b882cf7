package io.lockhygiene.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Opens the raw pgjdbc connection a lock holder uses: the same URL (so the same pooler) as the application's. */
@FunctionalInterface
public interface HolderFactory {
    Connection open() throws SQLException;
}
