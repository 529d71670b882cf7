package io.lockhygiene.internal.guard;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import io.lockhygiene.internal.sql.SqlScanner;

/**
 * Where the hot path's nanoseconds go for a text seen for the first time: the prefilter (four vectorised
 * String.indexOf passes, one per case of 'v' and 'k'), one such pass alone, and an atomic counter (which the
 * guard no longer uses per statement: see StatementTally).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotPathPartsBenchmark {
    @Param({"100"})
    public int size;

    private String sql;
    private final LongAdder adder = new LongAdder();

    @Setup
    public void setup() {
        sql = HotPathBenchmark.typical(size);
    }

    @Benchmark
    public boolean prefilter() {
        return SqlScanner.mightMatter(sql);
    }

    @Benchmark
    public int indexOfOnce() {
        return sql.indexOf('v');
    }

    @Benchmark
    public void counter() {
        adder.increment();
    }
}
