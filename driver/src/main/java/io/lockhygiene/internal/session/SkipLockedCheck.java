package io.lockhygiene.internal.session;

import java.sql.SQLException;
import java.util.List;
import java.util.Set;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.leak.CallSite;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.RateLimiter;
import io.lockhygiene.internal.lint.KeyCatalog;
import io.lockhygiene.internal.lint.SkipLockedLint;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.policy.Rule;
import io.lockhygiene.settings.Settings;

/**
 * The SKIP LOCKED single-key trap for one application connection, every front end's: WARN (rate-limited) or, in
 * strict, refuse before sending. It reads nothing itself: the front end asks the server what it is told to ask
 * ({@link #SCOPE_QUERY} once per connection, {@link #KEYS_QUERY} once per table and scope) in its own way (JDBC at
 * once, R2DBC without blocking) and hands the answers here; then {@link #check} decides and says it.
 */
public final class SkipLockedCheck {
    /** Which catalog the connection reads names against (server, database, search_path): one text column. */
    public static final String SCOPE_QUERY = SkipLockedLint.SCOPE_SQL;
    /** A table's unique keys, {@code $1} its name as text: one row per key, its columns as {@code text[]}. */
    public static final String KEYS_QUERY = KeyCatalog.NUMBERED_SQL;
    /** The same with pgjdbc's placeholder. */
    public static final String KEYS_QUERY_JDBC = KeyCatalog.SQL;

    private static final RateLimiter WARNINGS = new RateLimiter(60_000);
    /** Tables whose keys the catalog did not give: each said once per process. */
    private static final java.util.concurrent.ConcurrentHashMap<String, Boolean> CATALOG_FAILURES =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final Settings settings;
    private final LeakReporter reporter;
    /**
     * The lint's cache scope, asked at this connection's first SKIP LOCKED statement: a later
     * {@code SET search_path} on the same connection is not seen.
     */
    private volatile String scope;

    /**
     * Where a connection is made: {@code lockhygiene.skipLocked=strict} without JSqlParser cannot keep its promise,
     * so the front end refuses with this message (the missing dependency named); null when it may go ahead
     * ({@code warn} then goes on with the lint off, said once).
     */
    public static String refusal(Settings settings) {
        return SkipLockedLint.checkAtConnect(settings.skipLocked(), SkipLockedLint.parserAvailable());
    }

    SkipLockedCheck(Settings settings, LeakReporter reporter) {
        this.settings = settings;
        this.reporter = reporter;
    }

    /** True when {@link #SCOPE_QUERY}'s answer is known. */
    public boolean knowsScope() {
        return scope != null;
    }

    /** {@link #SCOPE_QUERY}'s answer. */
    public void scopeRead(String scope) {
        this.scope = scope;
    }

    /**
     * The table whose unique keys {@link #KEYS_QUERY} must read before {@code sql} has a verdict ({@link #keysRead});
     * null when it has one, or when the scope is not known (the statement then passes unchecked).
     */
    public String keysToRead(String sql) {
        String s = scope;
        return s == null ? null : SkipLockedLint.check(sql, s).keysToRead();
    }

    /** {@link #KEYS_QUERY}'s rows for {@code table}: each key's columns. */
    public void keysRead(String table, List<String[]> rows) {
        List<Set<String>> keys = new java.util.ArrayList<>(rows.size());
        for (String[] columns : rows) {
            keys.add(KeyCatalog.key(columns));
        }
        SkipLockedLint.keysRead(scope, table, keys);
    }

    /** {@link #KEYS_QUERY} failed for {@code table}: said once; its statements pass unchecked until it answers. */
    public void keysUnread(String table, Throwable e) {
        if (CATALOG_FAILURES.putIfAbsent(table, Boolean.TRUE) == null) {
            Log.warn("LockHygiene: cannot read the unique keys of {} from the catalog ({}); its SKIP LOCKED"
                    + " statements are not checked until it can", table, e.toString());
        }
    }

    /**
     * The verdict on {@code sql}, from what was read: a statement pinned to one row by a unique key is reported
     * ({@link EventType#SKIP_LOCKED_SINGLE_KEY}), then refused under {@code lockhygiene.skipLocked=strict}
     * (SQLState 0A000, nothing sent) or logged at WARN, at most once a minute per text. A statement whose verdict is
     * not known (no scope, keys unread, not parsed) passes.
     *
     * @param callSite where the application made the statement, or null: here
     */
    public void check(String sql, Throwable callSite) throws SQLException {
        String s = scope;
        if (s == null) {
            return;
        }
        SkipLockedLint.Verdict v = SkipLockedLint.check(sql, s);
        if (!v.singleKey()) {
            return;
        }
        String message = Rule.skipLockedProblem("pinned to one row of " + v.table() + " by its unique key " + v.key())
                + " " + Rule.SKIP_LOCKED_FIX;
        reporter.publish(EventType.SKIP_LOCKED_SINGLE_KEY, null, null, null, sql, message, null);
        if (settings.skipLocked() == Settings.SkipLocked.STRICT) {
            reporter.publish(EventType.REJECTED, null, null, null, sql, message, null);
            throw new SQLException("LockHygiene (lockhygiene.skipLocked=strict) rejected this statement; nothing was sent. "
                    + message + " SQL: " + settings.loggable(sql), "0A000");
        }
        if (WARNINGS.allow("sk:" + sql)) {
            // the stack only when we log: this runs on every execution of a flagged statement
            Log.warn("LockHygiene: {} Sent at {}. SQL: {}", message,
                    CallSite.describe(callSite != null ? callSite : CallSite.capture("here")), settings.loggable(sql));
        }
    }
}
