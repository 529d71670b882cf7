package io.lockhygiene.internal.guard;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.bench.NoopStatement;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.internal.jdbc.LockHygieneConnection;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The per-statement cost of LockHygiene's layer: the same do-nothing Statement called directly and
 * through a guarded connection's Statement, for SQL without advisory calls of 100 B, 1 KB and 100 KB, as the
 * same String each time (a constant) and as equal Strings that are new objects (built at run time);
 * and the lexer for SQL that has one, at first sight and from the verdict cache. In package
 * io.lockhygiene.internal.jdbc to reach the cache.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotPathBenchmark {
    @Param({"100", "1000", "100000"})
    public int size;

    private Statement plain;
    private Statement guarded;
    private String sql;
    private String flagged;
    /** 64 equal texts, distinct String objects: each call sees another object, as dynamic SQL does. */
    private final String[] distinct = new String[64];
    private int next;

    @Setup
    public void setup() throws SQLException {
        Connection raw = (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "createStatement":
                            return new NoopStatement((Connection) proxy);
                        case "getAutoCommit":
                        case "isWrapperFor":
                            return "getAutoCommit".equals(method.getName());
                        default:
                            return null;
                    }
                });
        plain = new NoopStatement(raw);
        // The default settings, told the route (the stub cannot answer the pooler question); the leak check
        // sample's turn (one statement in 100) then costs a getAutoCommit() here. Under transaction pooling
        // that statement takes the slow path (wrapped and checked): measured end to end, not here.
        // detect by name: the path of a statement without advisory calls is the default's (emulate) but for one
        // volatile read (does anyone hold an emulated lock?), and this stub has no holder to place, where the
        // default would step back and skip the sample
        Settings defaults = Settings.DEFAULTS.toBuilder().mode(Settings.Mode.DETECT).build();
        Settings told = defaults.toBuilder().poolMode(Settings.PoolMode.SESSION).build();
        guarded = LockHygieneConnection.wrap(raw, told, null).createStatement();
        sql = typical(size);
        for (int i = 0; i < distinct.length; i++) {
            distinct[i] = new String(sql.toCharArray());
        }
        flagged = "SELECT pg_try_advisory_lock(" + size + ") /* " + "x".repeat(Math.max(0, size - 40)) + " */";
        TextAnalysis.of(flagged); // warm the cache for the cached case
    }

    /** A statement of about n characters that mentions no advisory function and no SKIP. */
    static String typical(int n) {
        StringBuilder sb = new StringBuilder("SELECT o.id, o.customer_id, o.total, o.status FROM orders o WHERE o.id = ?");
        int i = 0;
        while (sb.length() < n) {
            sb.append(" AND o.col").append(i++).append(" = ?");
        }
        return sb.substring(0, n);
    }

    @Benchmark
    public boolean plainExecute() throws SQLException {
        return plain.execute(sql);
    }

    @Benchmark
    public boolean guardedExecute() throws SQLException {
        return guarded.execute(sql);
    }

    /** The same text as another String object each time (SQL built at run time): the prefilter runs. */
    @Benchmark
    public boolean plainExecuteNewText() throws SQLException {
        return plain.execute(distinct[next++ & 63]);
    }

    @Benchmark
    public boolean guardedExecuteNewText() throws SQLException {
        return guarded.execute(distinct[next++ & 63]);
    }

    @Benchmark
    public ScanResult flaggedFirstSight() {
        return SqlScanner.scan(flagged);
    }

    @Benchmark
    public ScanResult flaggedCached() {
        return TextAnalysis.of(flagged).scan();
    }
}
