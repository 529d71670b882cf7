package io.lockhygiene.lint;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.events.Events;
import io.lockhygiene.log.Log;

/**
 * {@code SELECT ... WHERE key = 'x' FOR UPDATE SKIP LOCKED} returns zero rows while the row exists and is
 * merely locked: a worker reads "no job". This lint finds a SKIP LOCKED statement pinned to at most one row
 * by equality on every column of a unique key, reading the key columns from the catalog once per table.
 * A claim-pool query (skipping across a set of rows) is never flagged. Verdicts are cached per SQL text;
 * when the catalog cannot be read it says so once and does not guess.
 */
public final class SkipLockedLint {
    private static final int MAX = 2048;
    private static final ConcurrentHashMap<String, Verdict> VERDICTS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, List<Set<String>>> KEYS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<String, Boolean> CATALOG_FAILURES = new ConcurrentHashMap<>();
    private static final AtomicBoolean NO_PARSER = new AtomicBoolean();

    /** The lint's answer for one SQL text. */
    public static final class Verdict {
        static final Verdict CLEAN = new Verdict(null, null);
        static final Verdict UNKNOWN = new Verdict(null, null);
        private final String table;
        private final Set<String> key;

        Verdict(String table, Set<String> key) {
            this.table = table;
            this.key = key;
        }

        /** True when the statement pins one row by a unique key. */
        public boolean singleKey() {
            return key != null;
        }

        public String table() {
            return table;
        }

        public Set<String> key() {
            return key;
        }
    }

    private SkipLockedLint() {
    }

    /** Only for text whose scan found SKIP LOCKED outside strings and comments. */
    public static Verdict check(String sql, Connection catalog) {
        Verdict cached = VERDICTS.get(sql);
        if (cached != null) {
            return cached;
        }
        SkipLockedAnalysis analysis;
        try {
            analysis = SkipLockedAnalysis.analyze(sql);
        } catch (LinkageError e) {
            if (NO_PARSER.compareAndSet(false, true)) {
                Log.info("LockHygiene: the SKIP LOCKED lint is off: JSqlParser is not on the class path ({})", e.toString());
            }
            return Verdict.UNKNOWN;
        }
        Verdict v;
        switch (analysis.kind()) {
            case UNPARSEABLE:
                Events.counters().skipLockedUnparseable();
                Log.debug("LockHygiene: SKIP LOCKED statement not parsed, passed through: {}", analysis.detail());
                v = Verdict.UNKNOWN;
                break;
            case NOT_APPLICABLE:
                v = Verdict.CLEAN;
                break;
            default:
                List<Set<String>> keys = keysOf(analysis.table(), catalog);
                if (keys == null) {
                    return Verdict.UNKNOWN; // not cached: the catalog may answer next time
                }
                Set<String> covered = KeyCatalog.coveredKey(keys, analysis.pinnedColumns());
                v = covered == null ? Verdict.CLEAN : new Verdict(analysis.table(), covered);
        }
        if (VERDICTS.size() >= MAX) {
            VERDICTS.clear();
        }
        VERDICTS.put(sql, v);
        return v;
    }

    private static List<Set<String>> keysOf(String table, Connection catalog) {
        List<Set<String>> keys = KEYS.get(table);
        if (keys != null) {
            return keys;
        }
        try {
            keys = KeyCatalog.uniqueKeys(catalog, table);
        } catch (SQLException | RuntimeException e) {
            if (CATALOG_FAILURES.putIfAbsent(table, Boolean.TRUE) == null) {
                Log.warn("LockHygiene: cannot read the unique keys of {} from the catalog ({}); its SKIP LOCKED"
                        + " statements are not checked until it can", table, e.toString());
            }
            return null;
        }
        if (KEYS.size() >= MAX) {
            KEYS.clear();
        }
        KEYS.put(table, keys);
        return keys;
    }
}
