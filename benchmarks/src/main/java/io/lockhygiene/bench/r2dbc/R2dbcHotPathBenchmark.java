package io.lockhygiene.bench.r2dbc;

import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.lockhygiene.r2dbc.LockHygieneConnectionFactory;
import io.r2dbc.proxy.ProxyConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.Statement;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the R2DBC wrapper costs a statement without advisory calls: {@code createStatement(sql)}, a bind and
 * {@code execute()} subscribed to the end, on a do-nothing driver connection (no I/O), directly, through
 * r2dbc-proxy alone (what any r2dbc-proxy user pays), and through LockHygiene (r2dbc-proxy and the guard).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class R2dbcHotPathBenchmark {
    @Param({"100", "1000"})
    public int size;

    private Connection plain;
    private Connection proxied;
    private Connection guarded;
    private String sql;

    /** A driver that answers nothing, at once. */
    static ConnectionFactory noopFactory() {
        Statement statement = (Statement) Proxy.newProxyInstance(R2dbcHotPathBenchmark.class.getClassLoader(),
                new Class<?>[] {Statement.class}, (p, m, a) -> "execute".equals(m.getName()) ? Flux.empty() : p);
        Connection connection = (Connection) Proxy.newProxyInstance(R2dbcHotPathBenchmark.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (p, m, a) -> {
                    switch (m.getName()) {
                        case "createStatement":
                            return statement;
                        case "isAutoCommit":
                            return Boolean.TRUE;
                        case "close":
                            return Mono.empty();
                        default:
                            return null;
                    }
                });
        return new ConnectionFactory() {
            @Override
            public Publisher<? extends Connection> create() {
                return Mono.just(connection);
            }

            @Override
            public ConnectionFactoryMetadata getMetadata() {
                return () -> "noop";
            }
        };
    }

    @Setup
    public void setup() {
        ConnectionFactory noop = noopFactory();
        plain = Mono.from(noop.create()).block();
        proxied = Mono.from(ProxyConnectionFactory.builder(noop).build().create()).block();
        // told the pooling (the stub cannot answer the pooler question)
        guarded = Mono.from(LockHygieneConnectionFactory.builder(noop).settings(Map.of("lockhygiene.poolMode", "session"))
                .build().create()).block();
        sql = sqlOfSize(size);
    }

    /** A statement without advisory calls of {@code size} characters, one bind. */
    static String sqlOfSize(int size) {
        StringBuilder sb = new StringBuilder("SELECT o.id, o.customer_id, o.total, o.status FROM orders o WHERE o.id = $1");
        int i = 0;
        while (sb.length() < size) {
            sb.append(" AND o.col").append(i++).append(" = $1");
        }
        return sb.substring(0, size);
    }

    @Benchmark
    public Object plainStatement() {
        return Flux.from(plain.createStatement(sql).bind(0, 1L).execute()).blockLast();
    }

    @Benchmark
    public Object r2dbcProxyOnly() {
        return Flux.from(proxied.createStatement(sql).bind(0, 1L).execute()).blockLast();
    }

    @Benchmark
    public Object lockHygiene() {
        return Flux.from(guarded.createStatement(sql).bind(0, 1L).execute()).blockLast();
    }
}
