package io.lockhygiene.internal.lint;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.internal.events.Events;
import io.lockhygiene.internal.log.Log;

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
    private static final AtomicBoolean NO_PARSER = new AtomicBoolean();
    /** Texts whose verdict waits for their table's unique keys: their analysis, kept until they are asked again. */
    private static final ConcurrentHashMap<String, SkipLockedAnalysis> AWAITING_KEYS = new ConcurrentHashMap<>();

    /** The lint's answer for one SQL text. */
    public static final class Verdict {
        static final Verdict CLEAN = new Verdict(null, null);
        static final Verdict UNKNOWN = new Verdict(null, null);
        private final String table;
        private final Set<String> key;
        private final String keysToRead;

        Verdict(String table, Set<String> key) {
            this(table, key, null);
        }

        private Verdict(String table, Set<String> key, String keysToRead) {
            this.table = table;
            this.key = key;
            this.keysToRead = keysToRead;
        }

        static Verdict keysOf(String table) {
            return new Verdict(null, null, table);
        }

        /** The table whose unique keys must be read before there is a verdict; null when there is one. */
        public String keysToRead() {
            return keysToRead;
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

    /** Whether JSqlParser (an optional dependency of the driver) can be loaded next to this class. */
    public static boolean parserAvailable() {
        return PARSER_AVAILABLE;
    }

    private static final boolean PARSER_AVAILABLE = probeParser();

    private static boolean probeParser() {
        try {
            Class.forName("net.sf.jsqlparser.parser.CCJSqlParserUtil", false, SkipLockedLint.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * At connect: {@code strict} without JSqlParser cannot keep its promise, so the connection is refused
     * with the missing dependency named; {@code warn} degrades, said once per JVM at WARN.
     *
     * @return the refusal's message, or null when the connection may go ahead
     */
    public static String checkAtConnect(io.lockhygiene.settings.Settings.SkipLocked mode, boolean parserAvailable) {
        if (parserAvailable || mode == io.lockhygiene.settings.Settings.SkipLocked.OFF) {
            return null;
        }
        String missing = "JSqlParser (com.github.jsqlparser:jsqlparser 5.x) is not on the class path";
        if (mode == io.lockhygiene.settings.Settings.SkipLocked.STRICT) {
            return "lockhygiene.skipLocked=strict needs the SKIP LOCKED lint, and " + missing + ": add that dependency,"
                    + " or choose lockhygiene.skipLocked=warn (the lint is then off, with a WARN) or off";
        }
        if (NO_PARSER.compareAndSet(false, true)) {
            Log.warn("LockHygiene: the SKIP LOCKED lint (lockhygiene.skipLocked=warn) is off: " + missing + "; every"
                    + " SKIP LOCKED statement passes unchecked. Add the dependency, or set lockhygiene.skipLocked=off to"
                    + " say that this is meant.");
        }
        return null;
    }

    /**
     * Only for text whose scan found SKIP LOCKED outside strings and comments. Reads nothing: a statement pinned by
     * equality on a table whose unique keys are not known yet gets {@link Verdict#keysToRead()}, the table whose keys
     * the front end reads ({@link KeyCatalog}) and hands to {@link #keysRead} (or {@link #keysUnread}) before it asks
     * again; so a front end that must not block (R2DBC) reads them its own way.
     *
     * @param scope which catalog the text is read against ({@link #SCOPE_SQL}): the same SQL text and table
     *              name mean different tables in two databases or under two search_paths
     */
    public static Verdict check(String sql, String scope) {
        String cacheKey = scope + '\u0000' + sql;
        Verdict cached = VERDICTS.get(cacheKey);
        if (cached != null) {
            return cached;
        }
        SkipLockedAnalysis analysis = AWAITING_KEYS.remove(sql); // parsed when it asked for its table's keys
        try {
            if (analysis == null) {
                analysis = SkipLockedAnalysis.analyze(sql);
            }
        } catch (LinkageError e) {
            if (NO_PARSER.compareAndSet(false, true)) {
                Log.warn("LockHygiene: the SKIP LOCKED lint is off: JSqlParser is not on the class path ({})", e.toString());
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
                List<Set<String>> keys = KEYS.get(scope + '\u0000' + analysis.table());
                if (keys == null) {
                    if (AWAITING_KEYS.size() >= MAX) {
                        AWAITING_KEYS.clear();
                    }
                    AWAITING_KEYS.put(sql, analysis); // not parsed again when asked once the keys are read
                    return Verdict.keysOf(analysis.table());
                }
                Set<String> covered = KeyCatalog.coveredKey(keys, analysis.pinnedColumns());
                v = covered == null ? Verdict.CLEAN : new Verdict(analysis.table(), covered);
        }
        if (VERDICTS.size() >= MAX) {
            VERDICTS.clear();
        }
        VERDICTS.put(cacheKey, v);
        return v;
    }

    /** The unique keys of {@code table} in {@code scope}, as the catalog gave them ({@link KeyCatalog}). */
    public static void keysRead(String scope, String table, List<Set<String>> keys) {
        if (KEYS.size() >= MAX) {
            KEYS.clear();
        }
        KEYS.put(scope + '\u0000' + table, keys);
    }

    /** The SQL that says which catalog a connection reads names against: server, database, search_path. */
    public static final String SCOPE_SQL = "SELECT coalesce(pg_catalog.inet_server_addr()::text, 'local') || ':'"
            + " || coalesce(pg_catalog.inet_server_port()::text, pg_catalog.current_setting('port')) || '/'"
            + " || pg_catalog.current_database() || '?' || pg_catalog.current_setting('search_path')";
}
