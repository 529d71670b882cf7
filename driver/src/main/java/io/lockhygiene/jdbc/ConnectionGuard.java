package io.lockhygiene.jdbc;

import io.lockhygiene.log.Log;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.Events;
import io.lockhygiene.leak.Attribution;
import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.leak.LeakCheckSql;
import io.lockhygiene.leak.LockCall;
import io.lockhygiene.leak.RecentCalls;
import io.lockhygiene.policy.Decision;
import io.lockhygiene.policy.LockPolicy;
import io.lockhygiene.policy.Situation;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.sql.AdvisoryCall;
import io.lockhygiene.sql.ScanResult;
import io.lockhygiene.sql.SqlRewriter;
import io.lockhygiene.sql.SqlScanner;
import io.lockhygiene.sql.TransactionControl;

/**
 * Everything LockHygiene does for one application connection: the per-statement decision (from
 * {@link LockPolicy}, fed by {@link #situation()}, the one place that says where we are), the
 * transaction wrapping of autocommit lock calls, the leak check at every real transaction end (the JDBC
 * API's or the application's own COMMIT / ROLLBACK text) and at return. The JDBC wrappers only route
 * calls here.
 *
 * <p>It never ends a transaction the application opened: whether a statement runs inside one is read
 * from the status the server reported, not from {@code getAutoCommit()}.
 *
 * <p>Not thread-safe beyond what a JDBC connection promises: one thread uses it at a time.
 */
final class ConnectionGuard {
    private static final AtomicLong IDS = new AtomicLong();
    private static final RateLimiter WARNINGS = new RateLimiter(60_000);

    private final Connection raw;
    private final Settings settings;
    private final String id;
    private final boolean off;
    private final boolean alwaysCheck;
    private final LeakReporter reporter;
    /** Calls seen since the last leak check, for attribution; non-empty means "touched advisory locks". */
    private final RecentCalls calls = new RecentCalls();
    private Boolean transactionPooling; // resolved lazily: null until first needed
    /** emulate only: runs session-level calls; null in other modes or without a way to open it. */
    private final LockHolder holder;
    /** Calls that ran on the holder, for attribution at close. */
    private final RecentCalls emulatedCalls = new RecentCalls();
    /** emulate: calls that ran inside the application's own transaction, whose locks move to the holder. */
    private final RecentCalls adoptable = new RecentCalls();
    /** emulate: where the open application transaction's advisory calls run; null before its first one. */
    private Situation.Venue transactionVenue;
    /**
     * The SKIP LOCKED lint's cache scope (server, database, search_path), asked at this connection's first
     * SKIP LOCKED statement: a later {@code SET search_path} on the same connection is not seen.
     */
    private String lintScope;
    /** emulate: the holder lost its server while holding locks; the next statement fails (set by the watchdog). */
    private volatile boolean lockLost;

    ConnectionGuard(Connection raw, Settings settings, HolderFactory holderFactory) {
        this.raw = raw;
        this.settings = settings;
        this.id = "lh-" + IDS.incrementAndGet();
        this.off = settings.mode() == Settings.Mode.OFF;
        this.alwaysCheck = !off && settings.leakCheck() == Settings.LeakCheck.ALWAYS;
        this.reporter = new LeakReporter(id, settings);
        this.holder = settings.mode() == Settings.Mode.EMULATE && holderFactory != null
                ? new LockHolder(holderFactory, id, settings.lockTimeoutMillis(), this::holderLost) : null;
        Events.registerMBeanOnce();
    }

    Settings settings() {
        return settings;
    }

    String id() {
        return id;
    }

    /**
     * The hot-path test: true when the statement needs no work at all. Counts it; no allocation; at most
     * one pass over the text.
     */
    boolean passesUnchecked(String sql) throws SQLException {
        Events.counters().statementSeen();
        if (lockLost) {
            throw lockLostException();
        }
        return off || (!SqlScanner.mightMatter(sql) && !watchesEveryStatement());
    }

    /**
     * emulate: the lock holder's server connection is gone, and with it every lock it held for this
     * connection. Said at once (event, ERROR), and as an SQLException of class 08 on the connection's next
     * statement, so that exclusion is never lost silently.
     */
    private void holderLost() {
        String message = "LockHygiene (lockhygiene.mode=emulate): " + id + " lost the connection of its lock holder"
                + " (terminated backend, pooler or server restart, timeout); the advisory locks it held for this"
                + " connection are released, so other clients may now take them. Whatever they protected is no"
                + " longer exclusive: stop that work, take the locks again, and start it over.";
        Log.error(message);
        reporter.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
        transactionVenue = null;
        lockLost = true;
    }

    /** Thrown once, on the next statement after the loss; the connection is usable again after it. */
    SQLException lockLostException() {
        lockLost = false;
        return new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder of " + id + " lost its"
                + " server connection; the advisory locks it held for this connection are gone. Take them again.",
                "08006");
    }

    /** For prepared statements, which skip {@link #passesUnchecked}: the loss is said on their next execution. */
    void checkLockLost() throws SQLException {
        if (lockLost) {
            throw lockLostException();
        }
    }

    /**
     * True while every statement must be looked at, whatever its text: under transaction pooling, while
     * a leak check is due at the end of the open transaction (the application may end it with COMMIT as
     * text), and always with leakCheck=always.
     */
    boolean watchesEveryStatement() throws SQLException {
        if (off) {
            return false;
        }
        if (!calls.isEmpty() || !adoptable.isEmpty() || transactionVenue != null) {
            return Boolean.TRUE.equals(transactionPooling);
        }
        // leakCheck=always: autocommit statements are wrapped (and a text BEGIN/COMMIT followed); inside a
        // JDBC-API transaction commit()/rollback() carry the check, and statements take the fast path
        return alwaysCheck && raw.getAutoCommit() && transactionPooling();
    }

    /** Where we are now: the server's transaction status, autocommit, pooling, the holder. */
    Situation situation() throws SQLException {
        Situation.TransactionStatus status = Pgjdbc.transactionStatus(raw);
        boolean autoCommit = raw.getAutoCommit();
        boolean holding = holder != null && holder.isHolding();
        Situation.Venue venue = transactionVenue;
        if (venue == null || (status == Situation.TransactionStatus.IDLE && autoCommit)) {
            venue = holding ? Situation.Venue.HOLDER : Situation.Venue.UNDECIDED;
        }
        return new Situation(status, autoCommit, transactionPooling(), holding, venue);
    }

    /** emulate: the first advisory call of an application transaction fixes where the rest run. */
    private void noteVenue(Situation where, Decision d) {
        if (holder != null && transactionVenue == null && where.statementRunsInTransaction()) {
            transactionVenue = d == Decision.EMULATE ? Situation.Venue.HOLDER : Situation.Venue.APPLICATION;
        }
    }

    /** The application's transaction ended (any way): its xact locks on the holder go, its venue is forgotten. */
    private void applicationTransactionEnded() {
        transactionVenue = null;
        if (holder != null) {
            try {
                holder.endApplicationTransaction();
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks its lock holder took for it", e);
            }
        }
    }

    /**
     * Plans a text (a prepare*(sql), a Statement.execute*(sql), an addBatch(sql)): rejects, rewrites,
     * emulates, or marks the executions that must be recorded.
     */
    StatementPlan plan(String sql) throws SQLException {
        if (off) {
            return StatementPlan.unflagged(sql);
        }
        boolean mightMatter = SqlScanner.mightMatter(sql);
        if (!mightMatter && !watchesEveryStatement()) {
            return StatementPlan.unflagged(sql);
        }
        ScanResult scan = mightMatter ? ScanCache.scan(sql) : ScanCache.scanAll(sql);
        if (scan == ScanResult.NOTHING) {
            return StatementPlan.unflagged(sql);
        }
        if (scan.hasSkipLocked() && settings.skipLocked() != Settings.SkipLocked.OFF) {
            checkSkipLocked(sql);
        }
        if (!scan.hasSessionLevelCall() && (holder == null || scan.calls().isEmpty())) {
            return new StatementPlan(sql, sql, Collections.emptyList(), scan, Decision.PASS);
        }
        Situation where = situation();
        Decision d = LockPolicy.decide(scan, where, settings.mode(), settings.leakCheck(), holder != null);
        noteVenue(where, d);
        if (!scan.hasSessionLevelCall() && d != Decision.EMULATE) {
            return new StatementPlan(sql, sql, Collections.emptyList(), scan, Decision.PASS);
        }
        switch (d) {
            case REJECT:
                throw reject(sql, scan);
            case EMULATE:
                return new StatementPlan(sql, sql, Collections.emptyList(), scan, d);
            case REWRITE:
                String rewritten = SqlRewriter.toTransactionScoped(sql, scan,
                        scan.callsInTransaction(where.statementRunsInTransaction()));
                announceRewrite(sql, scan, rewritten);
                // calls the text's own COMMIT left in autocommit keep their session form: record them
                ScanResult left = SqlScanner.scan(rewritten);
                return new StatementPlan(sql, rewritten, left.hasSessionLevelCall()
                        ? Collections.singletonList(new Flagged(left, rewritten)) : Collections.emptyList(), left, d);
            default:
                return new StatementPlan(sql, sql, Collections.singletonList(new Flagged(scan, sql)), scan, d);
        }
    }

    private void announceRewrite(String sql, ScanResult scan, String rewritten) {
        if (WARNINGS.allow("rw:" + sql)) {
            Log.info("LockHygiene rewrote session-level advisory calls to transaction-scoped ones (lockhygiene.mode=rewrite,"
                    + " transaction pooling): the locks now end with this transaction, and unlocks inside it are"
                    + " no-ops that return true. Was: {} Now: {}", settings.loggable(sql), settings.loggable(rewritten));
        }
        reporter.publish(EventType.REWRITTEN, scan.firstSessionCall().function().sqlName(), null, null, sql,
                "rewritten to " + settings.loggable(rewritten), null);
    }

    /** The SKIP LOCKED single-key trap: WARN (rate-limited) or, in strict, reject before sending. */
    private void checkSkipLocked(String sql) throws SQLException {
        if (lintScope == null) {
            try {
                lintScope = io.lockhygiene.lint.SkipLockedLint.scopeOf(raw);
            } catch (SQLException e) {
                return; // e.g. a failed transaction: the statement itself will fail; ask again next time
            }
        }
        io.lockhygiene.lint.SkipLockedLint.Verdict v = io.lockhygiene.lint.SkipLockedLint.check(sql, raw, lintScope);
        if (!v.singleKey()) {
            return;
        }
        String message = "FOR UPDATE ... SKIP LOCKED pinned to one row of " + v.table() + " by its unique key "
                + v.key() + ": when that row is merely locked by another transaction this returns no row, and the"
                + " caller reads \"no such job\". SKIP LOCKED is for claiming any of many rows. Fix: wait with plain"
                + " FOR UPDATE, or use NOWAIT and handle the lock_not_available error (SQLState 55P03).";
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

    /**
     * Runs one execution (a statement, a prepared execution, a batch) whose texts may call session-level
     * functions, or that is watched: records the calls, warns, and wraps an autocommit execution under
     * transaction pooling in a transaction whose end carries the leak check (only when no transaction is
     * open on the server and the text opens or ends none itself).
     *
     * @param flagged the texts that passed the prefilter, as the application wrote them, with the scan
     *                of what is sent (a rewritten text has no session-level call left)
     * @param appStatement the pgjdbc statement that runs it (its fetch size is pinned while wrapped)
     */
    <R> R execute(List<Flagged> flagged, Statement appStatement, String sent, SqlCall<R> call) throws SQLException {
        if (off) {
            return call.run(sent);
        }
        boolean session = false;
        boolean control = false;
        for (Flagged f : flagged) {
            session |= f.scan.hasSessionLevelCall();
            control |= f.scan.hasTransactionControl();
        }
        boolean watched = watchesEveryStatement();
        if (!session && !watched) {
            return call.run(sent);
        }
        Situation where = situation();
        Decision d = Decision.PASS;
        // In a failed transaction PostgreSQL refuses everything but its end (25P02): nothing of ours is
        // recorded or sent with it, and only what follows the statement (its end, maybe) is looked at.
        for (Flagged f : where.status() == Situation.TransactionStatus.FAILED ? Collections.<Flagged>emptyList() : flagged) {
            if (f.scan.hasSessionLevelCall()) {
                record(f.scan, f.original, where);
                Decision fd = LockPolicy.decide(f.scan, where, settings.mode(), settings.leakCheck(), holder != null);
                d = fd == Decision.WRAP_IN_TRANSACTION ? fd : d;
            }
        }
        if (alwaysCheck && where.transactionPooling() && !where.statementRunsInTransaction() && !control
                && where.status() != Situation.TransactionStatus.FAILED) {
            d = Decision.WRAP_IN_TRANSACTION; // leakCheck=always: every autocommit statement ends a transaction
        }
        if (d == Decision.WRAP_IN_TRANSACTION) {
            R result = runWrapped(appStatement, sent, call);
            checkUnlocks(flagged, appStatement);
            return result;
        }
        R result;
        try {
            result = call.run(sent);
        } catch (SQLException | RuntimeException appFailure) {
            afterFailure(appFailure);
            throw appFailure;
        }
        checkUnlocks(flagged, appStatement);
        afterExecution();
        return result;
    }

    /** Unlocks PostgreSQL answered with "you don't own a lock" (see {@link UnlockWatch}). */
    private void checkUnlocks(List<Flagged> flagged, Statement appStatement) {
        for (Flagged f : flagged) {
            UnlockWatch.check(appStatement, f.scan, f.original, reporter, settings);
        }
    }

    /**
     * The application's statement failed. If that aborted its transaction, PostgreSQL has released the
     * locks of the innermost (sub)transaction already (at the error, not at the ROLLBACK that follows): so
     * do the xact locks its lock holder took for it there. Never masks the application's exception.
     */
    private void afterFailure(Exception appFailure) {
        if (transactionVenue != Situation.Venue.HOLDER || holder == null) {
            return;
        }
        try {
            if (Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.FAILED) {
                holder.applicationStatementFailed();
            }
        } catch (SQLException | RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
    }

    /**
     * emulate: the application's text set, rolled back to or released savepoints; while the holder keeps
     * xact locks for this transaction, it mirrors them (see {@link HolderSavepoints}).
     */
    void followSavepoints(ScanResult scan, String sql) {
        if (transactionVenue != Situation.Venue.HOLDER || scan == null) {
            return;
        }
        for (TransactionControl tc : scan.transactionControls()) {
            TransactionControl.Kind k = tc.kind();
            if (k == TransactionControl.Kind.SAVEPOINT || k == TransactionControl.Kind.ROLLBACK_TO
                    || k == TransactionControl.Kind.RELEASE) {
                followSavepoint(k, "text:" + savepointName(sql.substring(tc.start(), tc.end())));
            }
        }
    }

    /** emulate: one savepoint command of the application (a name from text, or a JDBC Savepoint). */
    void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        if (transactionVenue != Situation.Venue.HOLDER || holder == null) {
            return;
        }
        try {
            holder.applicationSavepoint(kind, savepoint);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while following a savepoint of the application on its lock holder", e);
        }
    }

    /** The savepoint's name in a SAVEPOINT / ROLLBACK TO / RELEASE statement: its last word, folded as PostgreSQL does. */
    static String savepointName(String statement) {
        String s = statement.trim();
        if (s.endsWith(";")) {
            s = s.substring(0, s.length() - 1).trim();
        }
        int i = s.length();
        if (s.endsWith("\"")) {
            return s.substring(s.lastIndexOf('"', s.length() - 2) + 1, s.length() - 1).replace("\"\"", "\"");
        }
        while (i > 0 && !Character.isWhitespace(s.charAt(i - 1))) {
            i--;
        }
        return s.substring(i).toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * A transaction ended without our check (a COMMIT in a prepared statement or in the middle of a
     * text, a procedure's COMMIT): under transaction pooling its server is no longer ours, so the check
     * cannot run there. Said once per connection and interval; never thrown.
     */
    private void afterExecution() throws SQLException {
        if (!Boolean.TRUE.equals(transactionPooling) || Pgjdbc.inTransaction(raw)) {
            return;
        }
        if (transactionVenue != null && raw.getAutoCommit()) {
            applicationTransactionEnded();
        }
        if (calls.isEmpty() && adoptable.isEmpty()) {
            return;
        }
        String message = "LockHygiene: " + id + " ended a transaction that called session-level advisory functions"
                + " in a way LockHygiene could not follow on the same server (a COMMIT or ROLLBACK that is not the last"
                + " statement of its text, or one sent as a prepared statement): the leak check could not run there,"
                + " so a session lock taken in it may stay on that server. End the transaction with commit()/rollback()"
                + " or a COMMIT of its own.";
        ReportLog.warn("missed-check", "transaction ends LockHygiene could not follow on their server", id, "{}",
                message);
        reporter.publish(EventType.CHECK_FAILED, null, null, null, null, message, null);
        calls.clear();
        adoptable.clear();
    }

    /**
     * True when a text whose last statement ends the transaction must carry the leak check: the check is
     * due (locks were touched, or leakCheck=always) under transaction pooling.
     */
    boolean checksAtTextEnd(StatementPlan plan) throws SQLException {
        if (off || settings.leakCheck() == Settings.LeakCheck.NEVER || plan.scan == null
                || plan.scan.finalTransactionEnd() == null || !transactionPooling()) {
            return false;
        }
        if (!Pgjdbc.inTransaction(raw) && raw.getAutoCommit() && !plan.scan.opensTransactionBefore(
                plan.scan.finalTransactionEnd())) {
            return false; // no transaction to end on a server of ours: the text runs as it is
        }
        return alwaysCheck || !calls.isEmpty() || !adoptable.isEmpty() || plan.scan.hasSessionLevelCall();
    }

    /**
     * The application's own transaction end as text ({@code COMMIT}, {@code ROLLBACK}, {@code END}, ...):
     * sent as it is, with the leak check in the same round trip, on a statement of ours. Returns the
     * warnings PostgreSQL gave the end (e.g. "there is no transaction in progress").
     */
    SQLWarning endTransactionByText(String endText) throws SQLException {
        return endTransaction(endText, false);
    }

    /** emulate under transaction pooling, and a statement the holder can run (one statement, no writes). */
    boolean emulates(ScanResult scan) throws SQLException {
        return holder != null && LockPolicy.decide(scan, situation(), settings.mode(), settings.leakCheck(), true)
                == Decision.EMULATE;
    }

    /** The holder's connection, for preparing emulated statements on it. */
    Connection holderConnection() throws SQLException {
        return holder.connection();
    }

    /** Runs an emulated execution on the holder and records it. */
    <R> R runOnHolder(ScanResult scan, String sql, Statement executedOn, LockHolder.HolderCall<R> call)
            throws SQLException {
        Throwable stack = CallSite.capture("session-level advisory lock call sent here");
        for (AdvisoryCall c : scan.calls()) {
            if (c.function().isSessionLevel()) {
                LockCall emulated = new LockCall(c.function(), sql, c.argumentText(sql), stack);
                emulatedCalls.add(emulated);
                UnlockWatch.taken(emulated);
            }
        }
        reporter.publish(EventType.EMULATED, scan.calls().get(0).function().sqlName(), null, null, sql,
                "ran on the lock holder of " + id, stack);
        boolean inTransaction = situation().statementRunsInTransaction();
        try {
            R result = holder.run(scan, call, inTransaction);
            UnlockWatch.check(executedOn, scan, sql, reporter, settings);
            return result;
        } catch (SQLException | RuntimeException appFailure) {
            if (inTransaction) {
                failApplicationTransaction(appFailure);
            }
            throw appFailure;
        }
    }

    /**
     * A statement of the application's transaction failed on the lock holder: in PostgreSQL that error
     * would have aborted the transaction (every later statement gets 25P02 until ROLLBACK, and its locks
     * are gone). So the application's own transaction is aborted the same way, with a statement that fails
     * on purpose, and the holder lets go of the transaction's xact locks. The application sees its own
     * error, never ours.
     */
    private void failApplicationTransaction(Exception appFailure) {
        try (Statement s = raw.createStatement()) {
            s.execute("ROLLBACK TO SAVEPOINT lockhygiene_statement_failed_on_the_lock_holder");
        } catch (SQLException expected) {
            // 3B001 (no such savepoint): the transaction is aborted now, as PostgreSQL would have it
        } catch (RuntimeException ours) {
            appFailure.addSuppressed(ours);
        }
        afterFailure(appFailure);
    }

    /**
     * emulate: locks this connection took inside its transaction and still held at its end were just
     * released with the transaction's end (on the backend that held them); the holder takes them again.
     * Between the two another client can take the key: said at WARN. Returns the locks left to report
     * (inherited ones, which are not ours to keep).
     */
    private List<HeldLock> adoptByHolder(List<HeldLock> held, String command) {
        List<HeldLock> notOurs = new ArrayList<>();
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, adoptable.list());
            if (taker == null) {
                notOurs.add(lock);
                continue;
            }
            try {
                holder.adopt(lock);
                emulatedCalls.add(taker); // the holder holds it for that call now: attribute it there
                ReportLog.warn("moved@" + CallSite.describe(taker.takenAt()), "session locks moved to the lock holder"
                        + " at their transaction's end, taken at " + CallSite.describe(taker.takenAt()), lock.key(),
                        "LockHygiene: {} still held session advisory lock {} ({}) at {} of the transaction that took it;"
                        + " the lock holder took it over (between release and re-acquisition another client could take"
                        + " the key). Take such locks outside the transaction, or release them before it ends.",
                        id, lock.key(), lock.mode(), command);
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while moving lock " + lock.key() + " to the lock holder", e);
            }
        }
        return notOurs;
    }

    /** Application close: the return check, then the holder lets go of everything (reported), for good. */
    void onClose() {
        letGo(true);
    }

    /** A pool's return: the same checks; the holder can be opened again by the next borrower. */
    void onReturn() {
        letGo(false);
    }

    private void letGo(boolean forGood) {
        beforeReturn();
        if (holder != null) {
            List<HeldLock> held = forGood ? holder.close() : holder.release();
            if (!held.isEmpty()) {
                reporter.report(held, emulatedCalls, "by the lock holder when the application connection closed");
            }
            emulatedCalls.clear();
        }
    }

    /** Application abort: the holder goes too, its locks with it. */
    void onAbort(java.util.concurrent.Executor executor) {
        if (holder != null) {
            holder.abort(executor);
        }
    }

    private void record(ScanResult scan, String sql, Situation where) {
        Throwable stack = null;
        int recorded = 0;
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
            recorded++;
        }
        if (!where.transactionPooling() || stack == null) {
            return; // session pooling or direct: session locks are legitimate
        }
        boolean inTransaction = where.statementRunsInTransaction();
        AdvisoryCall first = scan.firstSessionCall();
        String fix;
        if (settings.mode() == Settings.Mode.EMULATE) {
            if (holder != null) {
                // emulate: the lock was taken on the application's own server (inside its transaction, or a
                // statement that also writes); a lock still held at the transaction's end moves to the holder
                adoptable.addLast(calls, recorded);
                Log.debug("LockHygiene: {} ran {} on its own server; a lock still held at the transaction's end moves to"
                        + " the lock holder", id, first.function().sqlName());
                return;
            }
            fix = " It cannot be emulated: this connection has no way to open a lock holder (it was not opened by the"
                    + " LockHygiene driver or DataSource).";
        } else if (settings.mode() == Settings.Mode.REWRITE && !inTransaction) {
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

    /** Autocommit under transaction pooling: BEGIN + statement, then COMMIT + check in one round trip. */
    private <R> R runWrapped(Statement appStatement, String sent, SqlCall<R> call) throws SQLException {
        int fetchSize = appStatement == null ? 0 : appStatement.getFetchSize();
        raw.setAutoCommit(false);
        if (fetchSize != 0) {
            appStatement.setFetchSize(0); // a cursor would not survive our COMMIT
        }
        R result;
        try {
            result = call.run(sent);
        } catch (SQLException | RuntimeException | Error appFailure) {
            try {
                endTransaction("ROLLBACK", true);
            } catch (SQLException | RuntimeException ours) {
                appFailure.addSuppressed(ours);
            }
            try {
                raw.setAutoCommit(true);
                if (fetchSize != 0) {
                    appStatement.setFetchSize(fetchSize);
                }
            } catch (SQLException | RuntimeException ours) {
                appFailure.addSuppressed(ours);
            }
            throw appFailure;
        }
        try {
            endTransaction("COMMIT", true);
        } finally {
            raw.setAutoCommit(true);
            if (fetchSize != 0) {
                appStatement.setFetchSize(fetchSize);
            }
        }
        return result;
    }

    /** Connection.commit(): plain, or with the leak check piggybacked. */
    void commit() throws SQLException {
        if (raw.getAutoCommit()) {
            raw.commit(); // pgjdbc refuses it ("Cannot commit when autoCommit is enabled."), as it should
            return;
        }
        endTransaction("COMMIT", true);
    }

    /** Connection.rollback(): plain, or with the leak check piggybacked. */
    void rollback() throws SQLException {
        if (raw.getAutoCommit()) {
            raw.rollback(); // refused by pgjdbc in autocommit, whatever the server's status
            return;
        }
        endTransaction("ROLLBACK", true);
    }

    private boolean checkAtTransactionEnd() throws SQLException {
        if (off || settings.leakCheck() == Settings.LeakCheck.NEVER) {
            return false;
        }
        if (settings.leakCheck() == Settings.LeakCheck.TRACKED && calls.isEmpty() && adoptable.isEmpty()) {
            return false;
        }
        return transactionPooling();
    }

    /**
     * Ends the transaction with {@code command} (COMMIT, ROLLBACK, or the application's own end text), with
     * the leak check in the same round trip when it is due. Returns the end's warnings.
     *
     * @param api the JDBC API's commit() / rollback() (pgjdbc's own when no check is due), else a text
     */
    private SQLWarning endTransaction(String command, boolean api) throws SQLException {
        if (!checkAtTransactionEnd() || !Pgjdbc.inTransaction(raw)) {
            SQLWarning warnings = null;
            if (api && "COMMIT".equals(command)) {
                raw.commit();
            } else if (api) {
                raw.rollback();
            } else {
                try (Statement s = raw.createStatement()) {
                    s.execute(command);
                    warnings = s.getWarnings();
                }
            }
            if (Boolean.TRUE.equals(transactionPooling)) {
                calls.clear();
                adoptable.clear();
            }
            applicationTransactionEnded();
            return warnings;
        }
        List<HeldLock> held;
        SQLWarning warnings;
        try (Statement s = raw.createStatement()) {
            // A failure here is the COMMIT's own (serialization, deferred constraint, lost connection):
            // exactly what the application's commit would have thrown, so it propagates as is.
            // counted only where the count matters: emulate moves these locks to its holder
            held = LeakReporter.readHeldLocks(s, s.execute(LeakCheckSql.atTransactionEnd(command, !adoptable.isEmpty())));
            warnings = withoutCountingWarnings(s.getWarnings());
        } catch (SQLException | RuntimeException e) {
            calls.clear(); // the transaction is over either way
            adoptable.clear();
            applicationTransactionEnded();
            throw e;
        }
        applicationTransactionEnded();
        if (!adoptable.isEmpty()) {
            held = adoptByHolder(held, command);
            adoptable.clear();
        }
        reporter.report(held, calls, "at " + command + " under transaction pooling");
        calls.clear();
        return warnings;
    }

    /**
     * The return event (DataSource wrapper close, physical close): under session pooling or direct,
     * session locks still held now were never unlocked. Never throws: a failed check is logged.
     */
    void beforeReturn() {
        try {
            if (off || settings.leakCheck() == Settings.LeakCheck.NEVER || raw.isClosed()) {
                return;
            }
            if (settings.leakCheck() == Settings.LeakCheck.TRACKED && calls.isEmpty()) {
                return;
            }
            if (transactionPooling()) {
                calls.clear();
                return; // checked at every transaction end; between transactions no backend is ours
            }
            if (Pgjdbc.inTransaction(raw)) {
                Log.debug("LockHygiene: {} returned inside an open transaction; its locks cannot be told apart from"
                        + " transaction-level ones, so the return check is skipped", id);
                return;
            }
            List<HeldLock> held;
            try (Statement s = raw.createStatement()) {
                held = LeakReporter.readHeldLocks(s, s.execute(LeakCheckSql.atReturn(raw.getAutoCommit())));
            }
            reporter.report(held, calls, "when the connection was returned");
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("at return", e);
        } finally {
            calls.clear();
        }
    }

    private SQLException reject(String sql, ScanResult scan) {
        AdvisoryCall c = scan.firstSessionCall();
        for (AdvisoryCall call : scan.calls()) {
            if (call.function().isSessionLevel() && call.function().isAcquire()) {
                c = call;
                break;
            }
        }
        String xact = c.function().rewriteTo();
        String message = "LockHygiene (lockhygiene.mode=strict) rejected " + c.function().sqlName()
                + ": a session-level advisory lock outlives its transaction, and behind a transaction pooler the"
                + " next client of the same server inherits it while others wait forever. Nothing was sent."
                + " Fix: call " + xact + " inside a transaction (BEGIN ... COMMIT), or use lockhygiene.mode=emulate"
                + " to keep session-lock code working. SQL: " + settings.loggable(sql);
        reporter.publish(EventType.REJECTED, c.function().sqlName(), null, null, sql, message,
                CallSite.capture("rejected here"));
        return new SQLException(message, "0A000");
    }

    /** Resolved once per connection; auto looks for a pooler (BackendKeyData pid != pg_backend_pid()). */
    boolean transactionPooling() throws SQLException {
        if (transactionPooling == null) {
            switch (settings.poolMode()) {
                case TRANSACTION:
                    transactionPooling = true;
                    break;
                case SESSION:
                    transactionPooling = false;
                    break;
                default:
                    Boolean detected = detectPooler();
                    if (detected == null) {
                        return true;
                    }
                    transactionPooling = detected;
            }
        }
        return transactionPooling;
    }

    private Boolean detectPooler() throws SQLException {
        int announced = Pgjdbc.backendPid(raw);
        try (Statement s = raw.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_catalog.pg_backend_pid()")) {
            rs.next();
            boolean pooler = rs.getInt(1) != announced;
            Log.debug("LockHygiene: {} {}", id, pooler
                    ? "reaches PostgreSQL through a pooler: treated as transaction pooling (lockhygiene.poolMode=session if it is not)"
                    : "is connected directly");
            return pooler;
        } catch (SQLException e) {
            // e.g. inside an aborted transaction: the application's own statement will fail with the real
            // reason. Assume the stricter answer for now and ask again next time.
            Log.debug("LockHygiene: {} could not tell whether a pooler is in between ({}); assuming one", id, e.toString());
            return null;
        }
    }

    /** The end's own warnings: those of our counting release (see {@link LeakCheckSql#LIST}) are not the application's. */
    private static SQLWarning withoutCountingWarnings(SQLWarning warnings) {
        SQLWarning kept = null;
        SQLWarning last = null;
        for (SQLWarning w = warnings; w != null; w = w.getNextWarning()) {
            String m = w.getMessage();
            if (m != null && m.startsWith(LeakCheckSql.COUNTING_WARNING)) {
                continue;
            }
            SQLWarning copy = new SQLWarning(m, w.getSQLState(), w.getErrorCode());
            if (kept == null) {
                kept = copy;
            } else {
                last.setNextWarning(copy);
            }
            last = copy;
        }
        return kept;
    }

    /** The text of a transaction end, as the application wrote it. */
    static String textOf(String sql, TransactionControl end) {
        return sql.substring(end.start(), end.end());
    }
}
