package io.lockhygiene.internal.session;

import java.sql.SQLException;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.leak.CallSite;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.RateLimiter;
import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.leak.UnlockWatch;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.Rule;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.settings.Settings;

/**
 * Records what one connection's statements call (with the stack that called, for attribution at the
 * leak check) and words what LockHygiene says about them: the session-lock warning, the rewrite notice,
 * strict mode's rejection, emulate's refusal. Each message names what happened and what to do.
 */
public final class LockCallRecorder {
    private static final RateLimiter WARNINGS = new RateLimiter(60_000);

    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    private final RecentCalls calls;

    public LockCallRecorder(Settings settings, String id, LeakReporter reporter, RecentCalls calls) {
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
        this.calls = calls;
    }

    public void announceRewrite(String sql, ScanResult scan, String rewritten) {
        if (WARNINGS.allow("rw:" + sql)) {
            Log.info("LockHygiene rewrote session-level advisory calls to transaction-scoped ones (lockhygiene.mode=rewrite,"
                    + " transaction pooling): the locks now end with this transaction, and unlocks inside it are"
                    + " no-ops that return true. Was: {} Now: {}", settings.loggable(sql), settings.loggable(rewritten));
        }
        reporter.publish(EventType.REWRITTEN, scan.firstSessionCall().function().sqlName(), null, null, sql,
                "rewritten to " + settings.loggable(rewritten), null);
    }

    /**
     * @param rewrite the mode is rewrite (the advice in autocommit says what rewrite cannot do)
     * @param emulateWithoutHolder the mode is emulate but the connection has no way to place a lock holder
     */
    public void record(ScanResult scan, String sql, Situation where, boolean rewrite, boolean emulateWithoutHolder) {
        record(scan, sql, where, rewrite, emulateWithoutHolder, null);
    }

    /**
     * @param callSite where the application sent the statement, captured by a front end that does not run it on
     *                 the application's own stack (R2DBC: at {@code execute()}); null to capture it here
     */
    public void record(ScanResult scan, String sql, Situation where, boolean rewrite, boolean emulateWithoutHolder,
                       Throwable callSite) {
        Throwable stack = callSite;
        for (AdvisoryCall c : scan.calls()) {
            if (!c.function().isSessionLevel()) {
                continue;
            }
            if (stack == null) {
                stack = CallSite.capture("session-level advisory lock call sent here");
            }
            LockCall call = new LockCall(c.function(), sql, c.argumentText(sql), stack);
            calls.add(call);
            UnlockWatch.taken(call);
        }
        if (!where.transactionPooling() || stack == null) {
            return; // session pooling or direct: session locks are legitimate
        }
        boolean inTransaction = where.statementRunsInTransaction();
        AdvisoryCall first = scan.firstSessionCall();
        String fix;
        if (emulateWithoutHolder) {
            fix = " It cannot be emulated: this connection has no way to open a lock holder (it was not opened by the"
                    + " LockHygiene driver, DataSource or agent).";
        } else if (rewrite && !inTransaction) {
            fix = " In autocommit it cannot be rewritten (an xact lock would end with the statement): mutual exclusion"
                    + " is lost. lockhygiene.mode=emulate keeps it; or take the lock inside a transaction.";
        } else {
            fix = " Use pg_advisory_xact_lock inside a transaction, or lockhygiene.mode=rewrite / emulate.";
        }
        String message = "session-level " + first.function().sqlName() + " under transaction pooling at "
                + CallSite.describe(stack) + ": the lock cannot outlive "
                + (inTransaction ? "this transaction" : "this autocommit statement")
                + "; LockHygiene releases it at transaction end so no other client inherits it." + fix;
        if (WARNINGS.allow("d:" + sql)) {
            Log.warn("LockHygiene: {} SQL: {}", message, settings.loggable(sql));
        }
        reporter.publish(EventType.SESSION_LOCK_CALL, first.function().sqlName(), null, null, sql, message, stack);
    }

    /**
     * emulate cannot answer the statement as PostgreSQL would on this connection: the error (SQLState 0A000, nothing
     * sent) with the reason and its fix, published as REFUSED; for every front end.
     */
    public SQLException refuse(String why, String sql) {
        String message = EmulateMessages.refused(why, settings.loggable(sql));
        reporter.publish(EventType.REFUSED, null, null, null, sql, message, CallSite.capture("refused here"));
        return new SQLException(message, "0A000");
    }

    public SQLException reject(String sql, ScanResult scan) {
        AdvisoryCall c = scan.firstSessionCall();
        for (AdvisoryCall call : scan.calls()) {
            if (call.function().isSessionLevel() && call.function().isAcquire()) {
                c = call;
                break;
            }
        }
        String xact = c.function().rewriteTo();
        String message = "LockHygiene (lockhygiene.mode=strict) rejected " + c.function().sqlName() + ": "
                + Rule.sessionLockProblem(c.function().sqlName()) + " Nothing was sent. " + Rule.sessionLockFix(xact)
                + " SQL: " + settings.loggable(sql);
        reporter.publish(EventType.REJECTED, c.function().sqlName(), null, null, sql, message,
                CallSite.capture("rejected here"));
        return new SQLException(message, "0A000");
    }
}
