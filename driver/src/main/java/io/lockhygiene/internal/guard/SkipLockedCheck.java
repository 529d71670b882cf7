package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.SQLException;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.leak.CallSite;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.RateLimiter;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;

/** The SKIP LOCKED single-key trap for one connection: WARN (rate-limited) or, in strict, reject before sending. */
final class SkipLockedCheck {
    private static final RateLimiter WARNINGS = new RateLimiter(60_000);

    private final Connection raw;
    private final Settings settings;
    private final LeakReporter reporter;
    /**
     * The lint's cache scope (server, database, search_path), asked at this connection's first SKIP LOCKED
     * statement: a later {@code SET search_path} on the same connection is not seen.
     */
    private String lintScope;

    SkipLockedCheck(Connection raw, Settings settings, LeakReporter reporter) {
        this.raw = raw;
        this.settings = settings;
        this.reporter = reporter;
    }

    /** The SKIP LOCKED single-key trap: WARN (rate-limited) or, in strict, reject before sending. */
    void check(String sql) throws SQLException {
        if (lintScope == null) {
            try {
                lintScope = io.lockhygiene.internal.lint.SkipLockedLint.scopeOf(raw);
            } catch (SQLException e) {
                return; // e.g. a failed transaction: the statement itself will fail; ask again next time
            }
        }
        io.lockhygiene.internal.lint.SkipLockedLint.Verdict v = io.lockhygiene.internal.lint.SkipLockedLint.check(sql, raw, lintScope);
        if (!v.singleKey()) {
            return;
        }
        String message = io.lockhygiene.internal.policy.Rule.skipLockedProblem("pinned to one row of " + v.table()
                + " by its unique key " + v.key()) + " " + io.lockhygiene.internal.policy.Rule.SKIP_LOCKED_FIX;
        reporter.publish(EventType.SKIP_LOCKED_SINGLE_KEY, null, null, null, sql, message, null);
        if (settings.skipLocked() == Settings.SkipLocked.STRICT) {
            reporter.publish(EventType.REJECTED, null, null, null, sql, message, null);
            throw new SQLException("LockHygiene (lockhygiene.skipLocked=strict) rejected this statement; nothing was sent. "
                    + message + " SQL: " + settings.loggable(sql), "0A000");
        }
        if (WARNINGS.allow("sk:" + sql)) {
            // the stack only when we log: this runs on every execution of a flagged statement
            Log.warn("LockHygiene: {} Sent at {}. SQL: {}", message, CallSite.describe(CallSite.capture("here")),
                    settings.loggable(sql));
        }
    }
}
