package io.lockhygiene.internal.leak;

import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;

/**
 * The most common real failure: an unlock that PostgreSQL answers with false and "you don't own a lock",
 * because it ran on another session than the lock. Seen from the unlock statement's warnings (no extra
 * round trip); reported in every mode, logged once per call site with where this process last took that
 * key (literal keys; bind-parameter and expression keys cannot be matched). Process-wide, bounded.
 */
public final class UnlockWatch {
    private static final String NOT_OWNED = "you don't own a lock of type";
    private static final int MAX_KEYS = 1024;
    private static final int MAX_SITES = 1024;
    /** Literal key text ("42", "7742, -5") to the last call of this process that took it. */
    private static final Map<String, LockCall> TAKEN = Collections.synchronizedMap(
            new LinkedHashMap<String, LockCall>(64, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, LockCall> eldest) {
                    return size() > MAX_KEYS;
                }
            });
    private static final Set<String> LOGGED_SITES = ConcurrentHashMap.newKeySet();

    private UnlockWatch() {
    }

    /** Remembers where a literal key was taken (acquire calls only). */
    public static void taken(LockCall call) {
        if (call.function().isAcquire() && LockCall.isLiteral(call.argumentText())) {
            TAKEN.put(normal(call.argumentText()), call);
        }
    }

    /** The arguments without whitespace; the same String when there is none (every lock call passes here: no regex). */
    static String normal(String args) {
        int n = args.length();
        int i = 0;
        while (i < n && !Character.isWhitespace(args.charAt(i))) {
            i++;
        }
        if (i == n) {
            return args;
        }
        StringBuilder b = new StringBuilder(n).append(args, 0, i);
        for (; i < n; i++) {
            char c = args.charAt(i);
            if (!Character.isWhitespace(c)) {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** After a statement with unlock calls ran on {@code executedOn}: did PostgreSQL say "you don't own"? */
    public static void check(Statement executedOn, ScanResult scan, String sql, LeakReporter reporter,
                      io.lockhygiene.settings.Settings settings) {
        AdvisoryCall unlock = unlockOf(scan);
        if (unlock == null || executedOn == null) {
            return;
        }
        SQLWarning warning;
        try {
            warning = executedOn.getWarnings();
        } catch (SQLException | RuntimeException e) {
            return; // the application's statement is what matters; its own warnings stay where they are
        }
        for (SQLWarning w = warning; w != null; w = w.getNextWarning()) {
            if (answered(unlock, w.getMessage(), sql, reporter, settings, null)) {
                return;
            }
        }
    }

    /** The first unlock call of {@code scan}, or null: only a statement with one can be answered "you don't own". */
    public static AdvisoryCall unlockOf(ScanResult scan) {
        for (AdvisoryCall c : scan.calls()) {
            if (c.function().kind() == io.lockhygiene.internal.sql.AdvisoryFunction.Kind.RELEASE) {
                return c;
            }
        }
        return null;
    }

    /**
     * PostgreSQL sent {@code message} (a notice) for a statement with {@code unlock} in it, as a front end that reads
     * notices as they come sees it (R2DBC's message segments): reported when it says the session does not hold the
     * lock; true then.
     *
     * @param callSite where the application made the statement, or null: captured here
     */
    public static boolean answered(AdvisoryCall unlock, String message, String sql, LeakReporter reporter,
                                   io.lockhygiene.settings.Settings settings, Throwable callSite) {
        if (message == null || !message.startsWith(NOT_OWNED)) {
            return false;
        }
        report(unlock, sql, message, reporter, settings, callSite);
        return true;
    }

    private static void report(AdvisoryCall unlock, String sql, String postgres, LeakReporter reporter,
                               io.lockhygiene.settings.Settings settings, Throwable callSite) {
        Throwable here = callSite != null ? callSite : CallSite.capture("unlock that PostgreSQL answered with false sent here");
        String site = CallSite.describe(here);
        String args = unlock.argumentText(sql);
        LockCall taker = LockCall.isLiteral(args) ? TAKEN.get(normal(args)) : null;
        String where = taker != null
                ? " This process took that key with " + taker.function().sqlName() + " at " + CallSite.describe(taker.takenAt())
                + ": lock and unlock ran on different sessions (transaction pooling, or two borrows of a pool)."
                : LockCall.isLiteral(args)
                ? " This process never took that key through LockHygiene (another process holds it, or a function did)."
                : " Its key is an expression or a bind parameter, so where it was taken cannot be matched.";
        String message = unlock.function().sqlName() + "(" + args + ") at " + site + " returned false: PostgreSQL says"
                + " this session does not hold that lock (\"" + postgres + "\")." + where
                + " Fix: take and release the lock in one transaction with pg_advisory_xact_lock, or"
                + " lockhygiene.mode=emulate to keep session locks working.";
        if (LOGGED_SITES.size() < MAX_SITES && LOGGED_SITES.add(site)) {
            Log.warn("LockHygiene: {} SQL: {}", message, settings.loggable(sql));
        }
        reporter.publish(EventType.UNLOCK_NOT_HELD, unlock.function().sqlName(), null, null, sql, message, here);
    }

    /**
     * emulate answered an unlock with false, as PostgreSQL answers a session that does not hold the lock:
     * the owner ({@code threadOwns}: the thread of a pool; else the connection) never took it, or let it go already. Said once per
     * call site; emulate is in use, so the advice is about the code, not the mode.
     */
    public static void notHeldInEmulate(SQLWarning warnings, String sql, LeakReporter reporter,
                                        io.lockhygiene.settings.Settings settings, Object owner, boolean threadOwns) {
        Throwable here = CallSite.capture("unlock of a lock its owner does not hold sent here");
        String site = CallSite.describe(here);
        String message = EmulateMessages.unlockNotHeld(site, warnings.getMessage(), owner, threadOwns);
        if (LOGGED_SITES.size() < MAX_SITES && LOGGED_SITES.add("emulate@" + site)) {
            Log.warn("LockHygiene: {} SQL: {}", message, settings.loggable(sql));
        }
        reporter.publish(EventType.UNLOCK_NOT_HELD, null, null, null, sql, message, here);
    }
}
