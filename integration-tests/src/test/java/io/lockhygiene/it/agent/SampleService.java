package io.lockhygiene.it.agent;

import static io.lockhygiene.it.bed.Sql.bool;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.apache.commons.dbcp2.BasicDataSource;

/**
 * An unchanged service: plain jdbc:postgresql: URL, a connection pool, session advisory locks. It knows
 * nothing of LockHygiene. Args: SCENARIO URL USER PASSWORD KEY [POOL]. Prints one RESULT line.
 * <ul>
 *   <li>{@code leak}: borrow, take pg_advisory_lock(KEY), give the connection back without unlocking;</li>
 *   <li>{@code workers}: the brief's workers (8 x 30 tries of pg_try_advisory_lock, job, unlock);</li>
 *   <li>{@code hold}: print READY, wait for a line on stdin (the test attaches the agent), then {@code leak}.</li>
 * </ul>
 */
public final class SampleService {

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        if ("cast".equals(scenario)) {
            // LISTEN/NOTIFY-style code that casts a DriverManager connection to pgjdbc's interface
            try (Connection c = java.sql.DriverManager.getConnection(args[1], args[2], args[3])) {
                int pid = ((org.postgresql.PGConnection) c).getBackendPID();
                System.out.println("RESULT cast ok pid=" + pid + " class=" + c.getClass().getName());
            }
            return;
        }
        if ("hold".equals(scenario)) {
            System.out.println("READY");
            System.out.flush();
            System.in.read(); // the test attaches the agent, then writes a line; the pool starts after that
            scenario = "leak";
        }
        long key = Long.parseLong(args[4]);
        String pool = args.length > 5 ? args[5] : "hikari";
        try (AutoCloseable closer = (AutoCloseable) dataSource(pool, args[1], args[2], args[3])) {
            DataSource ds = (DataSource) closer;
            switch (scenario) {
                case "leak":
                    boolean unwraps;
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        s.execute("SELECT pg_advisory_lock(" + key + ")");
                        unwraps = c.isWrapperFor(org.postgresql.PGConnection.class);
                    } // back to the pool, still holding the lock
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                         ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                                 + " AND objsubid = 1 AND objid = " + (key & 0xFFFFFFFFL) + " AND classid = " + (key >>> 32))) {
                        rs.next();
                        System.out.println("RESULT leak unwrapsToPg=" + unwraps + " heldAfterReturn=" + rs.getInt(1));
                    }
                    break;
                case "workers":
                    workers(ds, key);
                    break;
                case "borrows":
                    borrows(ds, key);
                    break;
                case "count":
                    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                        for (int i = 0; i < 10; i++) {
                            s.execute("SELECT 1");
                        }
                    }
                    javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
                    javax.management.ObjectName name = new javax.management.ObjectName("io.lockhygiene:type=LockHygiene");
                    for (int i = 0; i < 100 && !server.isRegistered(name); i++) {
                        Thread.sleep(50);
                    }
                    Object seen = server.getAttribute(name, "StatementsSeen");
                    System.out.println("RESULT count seen=" + seen);
                    break;
                default:
                    throw new IllegalArgumentException(scenario);
            }
        }
        System.out.flush();
    }

    private static Object dataSource(String pool, String url, String user, String password) {
        if ("dbcp2".equals(pool)) {
            BasicDataSource ds = new BasicDataSource();
            ds.setUrl(url);
            ds.setUsername(user);
            ds.setPassword(password);
            ds.setMaxTotal(10);
            return ds;
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize("hikari4".equals(pool) ? 4 : 10);
        return new HikariDataSource(config);
    }

    private static void workers(DataSource ds, long key) throws Exception {
        List<long[]> runs = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger errors = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            Thread t = new Thread(() -> {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    start.await();
                    for (int i = 0; i < 30; i++) {
                        if (bool(s, "SELECT pg_try_advisory_lock(" + key + ")")) {
                            long begin = System.nanoTime();
                            s.execute("SELECT count(*) FROM pg_class");
                            Thread.sleep(10);
                            runs.add(new long[] {begin, System.nanoTime()});
                            bool(s, "SELECT pg_advisory_unlock(" + key + ")");
                        }
                        Thread.sleep(3);
                    }
                } catch (SQLException | InterruptedException e) {
                    errors.incrementAndGet();
                    e.printStackTrace();
                }
            });
            threads.add(t);
            t.start();
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        int overlapping = io.lockhygiene.it.demo.WorkersScenario.countOverlapping(runs);
        System.out.println("RESULT workers runs=" + runs.size() + " overlapping=" + overlapping + " errors=" + errors.get());
    }

    /** The Spring pattern: lock, job and unlock each on a borrow of its own, 8 threads over the pool. */
    private static void borrows(DataSource ds, long key) throws Exception {
        io.lockhygiene.it.demo.BorrowsScenario.Result r = io.lockhygiene.it.demo.BorrowsScenario.run(ds, key, 8, 20);
        System.out.println("RESULT borrows runs=" + r.runs() + " overlapping=" + r.overlapping() + " failedUnlocks="
                + r.failedUnlocks() + " errors=" + r.errors());
    }
}
