package io.lockhygiene.it.agent;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * An unchanged service that bounds its lock wait through its session, as job runners do ("lock with timeout"):
 * Args: URL USER PASSWORD KEY SETUP-SQL. Runs SETUP-SQL, then {@code pg_advisory_lock(KEY)}; prints one line
 * {@code RESULT state=<SQLState or granted> millis=<how long the call took> message=<its words>}.
 */
public final class BoundedLockMain {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2]); Statement s = c.createStatement()) {
            s.execute(args[4]);
            s.setQueryTimeout(30);
            long t0 = System.nanoTime();
            String state = "granted";
            String message = "";
            try {
                s.execute("SELECT pg_advisory_lock(" + args[3] + ")");
            } catch (SQLException e) {
                state = e.getSQLState();
                message = e.getMessage();
            }
            System.out.println("RESULT state=" + state + " millis=" + (System.nanoTime() - t0) / 1_000_000
                    + " message=" + message);
        }
    }

    private BoundedLockMain() {
    }
}
