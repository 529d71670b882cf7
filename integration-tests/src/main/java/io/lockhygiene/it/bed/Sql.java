package io.lockhygiene.it.bed;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** Small SQL helpers the tests, the demo and the benchmarks share. */
public final class Sql {
    private Sql() {
    }

    /** The server's version ({@code SHOW server_version}) at {@code url}; a bed that does not answer is a BedException. */
    static String serverVersion(String url, java.util.Properties props) {
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url, props);
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new BedException("PostgreSQL started but does not answer: " + e.getMessage(), e);
        }
    }

    /** The boolean in the first column of the first row of {@code sql} (a try-lock's or an unlock's answer). */
    public static boolean bool(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
