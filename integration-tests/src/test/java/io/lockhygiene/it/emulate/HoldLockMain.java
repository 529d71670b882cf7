package io.lockhygiene.it.emulate;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.Properties;

/** A child JVM that takes an emulated lock and then waits to be killed: args url user password key. */
public final class HoldLockMain {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.setProperty("user", args[1]);
        p.setProperty("password", args[2]);
        Connection c = DriverManager.getConnection(args[0], p);
        try (Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + args[3] + ")");
        }
        System.out.println("HELD");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
