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
 * String.indexOf passes, one per case of 'v' and 'k'), one such pass alone, two one-pass alternatives that
 * look at every character once (case folded, or through a table; both slower than the four vectorised
 * passes, so not used), and an atomic counter (which the guard no longer uses per statement: see
 * StatementTally).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotPathPartsBenchmark {
    @Param({"100", "1000"})
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

    /** The candidate of issue 34: only the letter every advisory function and SKIP LOCKED share ("lock"). */
    @Benchmark
    public boolean prefilterLockLetter() {
        return lockAround(sql, 'k') || lockAround(sql, 'K');
    }

    static boolean lockAround(String s, char k) {
        for (int i = s.indexOf(k, 3); i >= 0; i = s.indexOf(k, i + 1)) {
            if ((s.charAt(i - 3) | 0x20) == 'l' && (s.charAt(i - 2) | 0x20) == 'o' && (s.charAt(i - 1) | 0x20) == 'c') {
                return true;
            }
        }
        return false;
    }

    @Benchmark
    public int indexOfOnce() {
        return sql.indexOf('v');
    }

    @Benchmark
    public boolean onePassFolded() {
        return foldedPass(sql);
    }

    @Benchmark
    public boolean onePassTable() {
        return tablePass(sql);
    }

    private static final byte[] RARE = new byte[256];

    static {
        RARE['v'] = 1;
        RARE['V'] = 1;
        RARE['k'] = 2;
        RARE['K'] = 2;
    }

    static boolean tablePass(String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 256 && RARE[c] != 0 && SqlScanner.mightMatter(s)) {
                return true;
            }
        }
        return false;
    }

    static boolean foldedPass(String s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            int c = s.charAt(i) | 0x20;
            if ((c == 'v' || c == 'k') && SqlScanner.mightMatter(s)) {
                return true;
            }
        }
        return false;
    }

    @Benchmark
    public void counter() {
        adder.increment();
    }
}
