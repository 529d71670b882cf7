package io.lockhygiene.it.services;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * A leader election as a service ships it: a connection from {@code DriverManager}, a blocking
 * {@code pg_advisory_lock(<literal>)}, never an unlock: the leader leads until its process ends. Prints
 * {@code LEADER} once it leads, then does a leader's work (a statement a second) until the parent ends it.
 * Arguments: url user password key.
 */
public final class LeaderMain {
    public static void main(String[] args) throws Exception {
        Connection c = DriverManager.getConnection(args[0], args[1], args[2]);
        try (Statement s = c.createStatement()) {
            s.execute("select pg_advisory_lock(" + Long.parseLong(args[3]) + ")");
            System.out.println("LEADER");
            System.out.flush();
            while (true) {
                s.execute("SELECT 1");
                Thread.sleep(1000);
            }
        }
    }

    private LeaderMain() {
    }
}
