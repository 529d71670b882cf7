package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.internal.events.Events;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.policy.Decision;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Situation;
import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.internal.sql.SqlRewriter;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

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
    private final PoolerDetection pooler;
    private final LockCallRecorder recorder;
    private final TransactionEnds ends;
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
        this.pooler = new PoolerDetection(raw, settings, id, emulation);
        this.recorder = new LockCallRecorder(settings, id, reporter, calls, emulation);
        this.ends = new TransactionEnds(raw, settings, id, reporter, calls, emulation, pooler);
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
            return pooler.assumesPooling();
        }
        // leakCheck=always: autocommit statements are wrapped (and a text BEGIN/COMMIT followed); inside a
        // JDBC-API transaction commit()/rollback() carry the check, and statements take the fast path
        return alwaysCheck && raw.getAutoCommit() && pooler.transactionPooling();
    }

    /** Where we are now: the server's transaction status, autocommit, pooling, the holder. */
    Situation situation() throws SQLException {
        Situation.TransactionStatus status = Pgjdbc.transactionStatus(raw);
        boolean autoCommit = raw.getAutoCommit();
        return new Situation(status, autoCommit, pooler.transactionPooling(), emulation.holderHolding(),
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
        io.lockhygiene.internal.sql.LockStatement table = allowTable && emulation.available()
                ? io.lockhygiene.internal.sql.LockStatement.parse(sql, scan) : null;
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
                throw recorder.reject(sql, scan);
            case EMULATE:
                return new StatementPlan(sql, sql, Collections.emptyList(), scan, d);
            case REWRITE:
                String rewritten = SqlRewriter.toTransactionScoped(sql, scan,
                        scan.callsInTransaction(where.statementRunsInTransaction()));
                recorder.announceRewrite(sql, scan, rewritten);
                // calls the text's own COMMIT left in autocommit keep their session form: record them
                ScanResult left = SqlScanner.scan(rewritten);
                return new StatementPlan(sql, rewritten, left.hasSessionLevelCall()
                        ? Collections.singletonList(new Flagged(left, rewritten)) : Collections.emptyList(), left, d);
            default:
                return new StatementPlan(sql, sql, Collections.singletonList(new Flagged(scan, sql)), scan, d);
        }
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
            // runs on the application's server, unless PostgreSQL would refuse it: another owner's key on
            // its way to the holder (released on its server, not yet taken again)
            return where.status() == Situation.TransactionStatus.FAILED ? null
                    : emulation.refusedByHandOver(plan.table, binds, appStatement);
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
                recorder.record(f.scan, f.original, where);
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
            R result = ends.runWrapped(appStatement, sent, call);
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
        ends.afterExecution();
        return result;
    }

    /** Unlocks PostgreSQL answered with "you don't own a lock" (see {@link UnlockWatch}). */
    private void checkUnlocks(List<Flagged> flagged, Statement appStatement) {
        for (Flagged f : flagged) {
            UnlockWatch.check(appStatement, f.scan, f.original, reporter, settings);
        }
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
        ends.beforeReturn();
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

    /**
     * emulate: savepoints the application's text set, rolled back to or released; while the holder keeps
     * xact locks for this transaction, it mirrors them (see {@link HolderSavepoints}).
     */
    void followSavepoints(ScanResult scan, String sql) {
        if (scan == null) {
            return;
        }
        for (TransactionControl tc : scan.transactionControls()) {
            TransactionControl.Kind k = tc.kind();
            if (k == TransactionControl.Kind.SAVEPOINT || k == TransactionControl.Kind.ROLLBACK_TO
                    || k == TransactionControl.Kind.RELEASE) {
                emulation.followSavepoint(k, "text:" + TableTransaction.savepointName(tc.textIn(sql)));
            }
        }
    }

    /** emulate: a savepoint of the JDBC API. */
    void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        emulation.followSavepoint(kind, savepoint);
    }

    /** emulate: for prepared statements, which skip {@link #passesUnchecked}. */
    void checkLockLost() throws SQLException {
        emulation.throwIfLockLost();
    }

    /** True when a text whose last statement ends the transaction must carry the leak check. */
    boolean checksAtTextEnd(StatementPlan plan) throws SQLException {
        return ends.checksAtTextEnd(plan);
    }

    /** The application's own transaction end as text, with the leak check in its round trip. */
    SQLWarning endTransactionByText(String endText) throws SQLException {
        return ends.endTransactionByText(endText);
    }

    /** Connection.commit(): plain, or with the leak check piggybacked. */
    void commit() throws SQLException {
        ends.commit();
    }

    /** Connection.rollback(): plain, or with the leak check piggybacked. */
    void rollback() throws SQLException {
        ends.rollback();
    }
}
