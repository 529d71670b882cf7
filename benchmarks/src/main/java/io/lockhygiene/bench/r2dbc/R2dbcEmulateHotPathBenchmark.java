package io.lockhygiene.bench.r2dbc;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import io.lockhygiene.it.bed.R2dbcOptions;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.r2dbc.LockHygieneConnectionFactory;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What the R2DBC wrapper costs a statement without advisory calls under emulate, the default mode behind a
 * transaction pooler: there every statement is decided when it is executed (a reactive chain makes its statements
 * before the BEGIN or the lock before them ran), so each one is a statement of ours, where detect passes most of them
 * to the driver at {@code createStatement}. The same do-nothing driver connection as {@link R2dbcHotPathBenchmark};
 * the holder is placed on the test bed's PostgreSQL once (it is never used: nothing is locked), so the statements
 * themselves do no I/O. The owner holds nothing, in autocommit: the common case. The leak check's sample is off
 * here: the autocommit statement whose turn it is (1 in 200 by default) runs in a transaction of ours, whose BEGIN
 * and COMMIT are round trips this driver without I/O cannot answer; the end-to-end section measures them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class R2dbcEmulateHotPathBenchmark {
    @Param({"100", "1000"})
    public int size;

    private TestBed bed;
    private Connection plain;
    private Connection emulated;
    private String sql;

    @Setup(Level.Trial)
    public void setup() {
        bed = TestBed.start();
        ConnectionFactory noop = R2dbcHotPathBenchmark.noopFactory();
        plain = Mono.from(noop.create()).block();
        emulated = Mono.from(LockHygieneConnectionFactory.builder(noop)
                .connectsTo(R2dbcOptions.of(bed, Route.TRANSACTION_POOL, "postgresql"))
                .settings(Map.of("lockhygiene.mode", "emulate", "lockhygiene.leakCheckSample", "0")).build().create()).block();
        if (!emulated.getClass().getName().contains("lockhygiene")) {
            throw new IllegalStateException("not wrapped: " + emulated);
        }
        sql = R2dbcHotPathBenchmark.sqlOfSize(size);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        Mono.from(emulated.close()).block();
        bed.close();
    }

    @Benchmark
    public Object plainStatement() {
        return Flux.from(plain.createStatement(sql).bind(0, 1L).execute()).blockLast();
    }

    @Benchmark
    public Object lockHygieneEmulate() {
        return Flux.from(emulated.createStatement(sql).bind(0, 1L).execute()).blockLast();
    }
}
