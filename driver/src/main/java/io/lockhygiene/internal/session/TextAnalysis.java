package io.lockhygiene.internal.session;

import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;

/**
 * What LockHygiene read from one text, read once and shared by all connections: its scan and, under
 * emulate, the shape of its calls (which also keeps the parameter types PostgreSQL accepted it with, see
 * {@link LockShape#accepted}). The one analysis cache: bounded, and emptied when full (an analysis is cheap
 * to redo; a workload with more distinct flagged texts than the bound pays one analysis per statement,
 * never unbounded memory). Only texts that passed the prefilter, or that must be read while a leak check
 * is due, are ever analysed.
 */
public final class TextAnalysis {
    static final int MAX_ENTRIES = 2048;
    private static final ConcurrentHashMap<String, TextAnalysis> CACHE = new ConcurrentHashMap<>();

    private final String sql;
    private final ScanResult scan;
    private volatile LockShape shape;

    private TextAnalysis(String sql, ScanResult scan) {
        this.sql = sql;
        this.scan = scan;
    }

    /** The analysis of a non-empty text, cached or made now. */
    public static TextAnalysis of(String sql) {
        TextAnalysis a = CACHE.get(sql);
        if (a == null) {
            a = new TextAnalysis(sql, SqlScanner.scan(sql));
            if (CACHE.size() >= MAX_ENTRIES) {
                CACHE.clear();
            }
            CACHE.put(sql, a);
        }
        return a;
    }

    /** What the scanner found in the text. */
    public ScanResult scan() {
        return scan;
    }

    /** emulate: the shape of the text's calls, parsed at the first ask (a racing second parse is only wasted). */
    public LockShape shape() {
        LockShape s = shape;
        if (s == null) {
            s = ShapeParser.parse(sql);
            shape = s;
        }
        return s;
    }
}
