package io.lockhygiene.it.bench;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * A minimal service: one plain-pgjdbc query, then prints the JVM's uptime at that moment and the CPU time its
 * main thread had used by then (less moved by a busy machine than the uptime). Args: URL USER PASSWORD.
 */
public final class FirstQuery {
    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0], args[1], args[2]);
             Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
            rs.next();
        }
        long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
        long mainCpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime(); // read after the uptime
        System.out.println("FIRST-QUERY-AT-UPTIME-MS " + uptime);
        System.out.println("MAIN-THREAD-CPU-MS " + mainCpu / 1_000_000);
    }
}
