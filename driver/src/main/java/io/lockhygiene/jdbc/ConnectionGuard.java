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
    /** What emulate adds: the lock holder, the transaction's venue, locks to move (inert in other modes). */
    private final Emulation emulation;
    /** The SKIP LOCKED single-key lint of this connection. */
    private final SkipLockedCheck skipLocked;

    ConnectionGuard(Connection raw, Settings settings, HolderFactory holderFactory) {
        this.raw = raw;
        this.settings = settings;
        this.id = "lh-" + IDS.incrementAndGet();
        this.off = settings.mode() == Settings.Mode.OFF;
        this.alwaysCheck = !off && settings.leakCheck() == Settings.LeakCheck.ALWAYS;
        this.reporter = new LeakReporter(id, settings);
        this.skipLocked = new SkipLockedCheck(raw, settings, reporter);
        this.emulation = new Emulation(raw, settings, id, reporter, holderFactory);
        Events.installProcessWideOnce();
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
        emulation.throwIfLockLost();
        return off || (!SqlScanner.mightMatter(sql) && !watchesEveryStatement());
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
        if (!calls.isEmpty() || emulation.transactionPending()) {
            return assumesPooling();
        }
        // leakCheck=always: autocommit statements are wrapped (and a text BEGIN/COMMIT followed); inside a
        // JDBC-API transaction commit()/rollback() carry the check, and statements take the fast path
        return alwaysCheck && raw.getAutoCommit() && transactionPooling();
    }

    /** Where we are now: the server's transaction status, autocommit, pooling, the holder. */
    Situation situation() throws SQLException {
        Situation.TransactionStatus status = Pgjdbc.transactionStatus(raw);
        boolean autoCommit = raw.getAutoCommit();
        return new Situation(status, autoCommit, transactionPooling(), emulation.holderHolding(),
                emulation.venue(status, autoCommit));
    }

    /**
     * Plans a text (a prepare*(sql), a Statement.execute*(sql), an addBatch(sql)): rejects, rewrites,
     * emulates, or marks the executions that must be recorded.
     */
    StatementPlan plan(String sql) throws SQLException {
        return plan(sql, true);
    }

    /** @param allowTable false for callable statements, which emulate never answers itself */
    StatementPlan plan(String sql, boolean allowTable) throws SQLException {
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
            skipLocked.check(sql);
        }
        if (!scan.hasSessionLevelCall() && (!emulation.available() || scan.calls().isEmpty())) {
            return new StatementPlan(sql, sql, Collections.emptyList(), scan, Decision.PASS);
        }
        io.lockhygiene.sql.LockStatement table = allowTable && emulation.available()
                ? io.lockhygiene.sql.LockStatement.parse(sql, scan) : null;
        if (table != null) {
            // decided again at each execution (see runTable): where it runs depends on the moment
            return new StatementPlan(sql, sql, scan.hasSessionLevelCall() ? Collections.singletonList(new Flagged(scan, sql))
                    : Collections.emptyList(), scan, Decision.EMULATE, table);
        }
        Situation where = situation();
        Decision d = LockPolicy.decide(scan, where, settings.mode(), settings.leakCheck(), emulation.available());
        emulation.noteVenue(where, d);
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

    /**
     * emulate: one execution of a lock statement. When the policy says emulate, the process's lock table
     * decides every call and the answer is PostgreSQL's, made here; returns null when the statement must
     * run as it is (another venue, or a key this JVM cannot know: an unusual bind type), through
     * {@link #execute}.
     *
     * @param binds the bind values of a prepared statement, or null
     */
    LocalResult runTable(StatementPlan plan, Object[] binds, Statement appStatement) throws SQLException {
        Situation where = situation();
        Decision d = LockPolicy.decide(plan.scan, where, settings.mode(), settings.leakCheck(), true);
        if (d != Decision.EMULATE) {
            emulation.noteVenue(where, d);
            return null;
        }
        LocalResult answer = emulation.runTable(plan.table, plan.scan, plan.original, binds, appStatement,
                where.statementRunsInTransaction());
        if (answer != null) {
            emulation.noteVenue(where, d);
        }
        return answer;
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
                Decision fd = LockPolicy.decide(f.scan, where, settings.mode(), settings.leakCheck(), emulation.available());
                if (fd == Decision.EMULATE) {
                    // emulate could not take it (a lock statement with a key only the server knows): it runs
                    // here, wrapped in autocommit, and a lock it takes moves to the holder at the end
                    emulation.noteVenue(where, Decision.PASS);
                    fd = LockPolicy.decide(f.scan, where, Settings.Mode.DETECT, settings.leakCheck(), false);
                }
                d = fd == Decision.WRAP_IN_TRANSACTION ? fd : d;
            }
        }
        if (d == Decision.PASS) {
            d = LockPolicy.decideUnflagged(where, control, settings.mode(), settings.leakCheck());
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
            emulation.afterFailure(appFailure);
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
     * A transaction ended without our check (a COMMIT in a prepared statement or in the middle of a
     * text, a procedure's COMMIT): under transaction pooling its server is no longer ours, so the check
     * cannot run there. Said once per connection and interval; never thrown.
     */
    private void afterExecution() throws SQLException {
        if (!assumesPooling() || Pgjdbc.inTransaction(raw)) {
            return;
        }
        if (raw.getAutoCommit()) {
            emulation.transactionGoneOnServer();
        }
        if (calls.isEmpty() && !emulation.hasAdoptable()) {
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
        emulation.forgetAdoptable();
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
        return alwaysCheck || !calls.isEmpty() || emulation.hasAdoptable() || plan.scan.hasSessionLevelCall();
    }

    /**
     * The application's own transaction end as text ({@code COMMIT}, {@code ROLLBACK}, {@code END}, ...):
     * sent as it is, with the leak check in the same round trip, on a statement of ours. Returns the
     * warnings PostgreSQL gave the end (e.g. "there is no transaction in progress").
     */
    SQLWarning endTransactionByText(String endText) throws SQLException {
        return endTransaction(endText, false);
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
        emulation.letGo(forGood);
    }

    /** Application abort: the holder goes too, its locks with it. */
    void onAbort(java.util.concurrent.Executor executor) {
        emulation.onAbort(executor);
    }

    /** The holder's connection, for preparing emulated statements on it. */
    Connection holderConnection() throws SQLException {
        return emulation.holderConnection();
    }

    /** Runs an emulated execution on the holder (see {@link Emulation#runOnHolder}). */
    <R> R runOnHolder(ScanResult scan, String sql, Statement executedOn, LockHolder.HolderCall<R> call)
            throws SQLException {
        return emulation.runOnHolder(scan, sql, executedOn, situation().statementRunsInTransaction(), call);
    }

    /** emulate: savepoints the application's text set, rolled back to or released. */
    void followSavepoints(ScanResult scan, String sql) {
        emulation.followSavepoints(scan, sql);
    }

    /** emulate: a savepoint of the JDBC API. */
    void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        emulation.followSavepoint(kind, savepoint);
    }

    /** emulate: for prepared statements, which skip {@link #passesUnchecked}. */
    void checkLockLost() throws SQLException {
        emulation.throwIfLockLost();
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
            if (emulation.available()) {
                // emulate: the lock was taken on the application's own server (inside its transaction, or a
                // statement that also writes); a lock still held at the transaction's end moves to the holder
                emulation.adoptable(calls, recorded);
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
        if (settings.leakCheck() == Settings.LeakCheck.TRACKED && calls.isEmpty() && !emulation.hasAdoptable()) {
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
            if (assumesPooling()) {
                calls.clear();
                emulation.forgetAdoptable();
            }
            emulation.applicationTransactionEnded();
            return warnings;
        }
        List<HeldLock> held;
        SQLWarning warnings;
        try (Statement s = raw.createStatement()) {
            // A failure here is the COMMIT's own (serialization, deferred constraint, lost connection):
            // exactly what the application's commit would have thrown, so it propagates as is.
            // counted only where the count matters: emulate moves these locks to its holder
            held = LeakReporter.readHeldLocks(s, s.execute(LeakCheckSql.atTransactionEnd(command,
                    emulation.hasAdoptable())));
            warnings = LeakReporter.withoutCountingWarnings(s.getWarnings());
        } catch (SQLException | RuntimeException e) {
            calls.clear(); // the transaction is over either way
            emulation.forgetAdoptable();
            emulation.applicationTransactionEnded();
            throw e;
        }
        emulation.applicationTransactionEnded();
        held = emulation.moveToHolder(held, command);
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

    /**
     * What {@link #transactionPooling()} answers, without asking the server: a pooler unless known
     * otherwise. Detection can fail (inside an aborted transaction) and is then tried again later; until
     * then every reader must assume the same stricter answer, or a transaction end goes unwatched.
     */
    private boolean assumesPooling() {
        return !Boolean.FALSE.equals(transactionPooling);
    }

    /** Resolved once per connection; auto looks for a pooler (BackendKeyData pid != pg_backend_pid()). */
    boolean transactionPooling() throws SQLException {
        if (transactionPooling == null && emulation.threadOwners()) {
            // emulate on connections a pool lends to any thread: the pool is the pooler (a thread's lock
            // lives in the lock holder across borrows, never on one borrowed connection)
            transactionPooling = true;
        }
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

}
