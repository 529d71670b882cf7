package io.lockhygiene.it.settings;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/** A child JVM's whole program: connect with the URL, user and password given, say what happened. */
public final class ConnectMain {
    private ConnectMain() {
    }

    public static void main(String[] args) {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2])) {
            c.createStatement().execute("SELECT 1 FROM pg_class WHERE relname = 'x' FOR UPDATE SKIP LOCKED");
            System.out.println("RESULT connected");
        } catch (SQLException e) {
            System.out.println("RESULT refused " + e.getSQLState() + " " + e.getMessage());
        }
    }
}
