package io.lockhygiene.it.bed;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** Small SQL helpers the tests, the demo and the benchmarks share. */
public final class Sql {
    private Sql() {
    }

    /** The boolean in the first column of the first row of {@code sql} (a try-lock's or an unlock's answer). */
    public static boolean bool(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
