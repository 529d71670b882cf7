package io.lockhygiene.internal.guard;

import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;

/**
 * Scan verdicts for SQL that passed the prefilter, shared by all connections. Bounded: when full it is
 * emptied (verdicts are cheap to recompute; a workload with more distinct flagged texts than the bound
 * is rare and pays one scan per statement, never unbounded memory).
 */
final class ScanCache {
    static final int MAX_ENTRIES = 2048;
    private static final ConcurrentHashMap<String, ScanResult> CACHE = new ConcurrentHashMap<>();

    private ScanCache() {
    }

    /** NOTHING for text the prefilter rules out; otherwise the cached or fresh full scan. */
    static ScanResult scan(String sql) {
        if (!SqlScanner.mightMatter(sql)) {
            return ScanResult.NOTHING;
        }
        return scanAll(sql);
    }

    /**
     * The full scan whatever the prefilter says: for texts that must be looked at while a leak check is
     * due (is this the application's COMMIT?). Null and empty text give NOTHING.
     */
    static ScanResult scanAll(String sql) {
        if (sql == null || sql.isEmpty()) {
            return ScanResult.NOTHING;
        }
        ScanResult r = CACHE.get(sql);
        if (r == null) {
            r = SqlScanner.scan(sql);
            if (CACHE.size() >= MAX_ENTRIES) {
                CACHE.clear();
            }
            CACHE.put(sql, r);
        }
        return r;
    }
}
