package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.internal.emulate.EmulateMessages;
import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.emulate.Outcome;
import io.lockhygiene.internal.events.Events;
import io.lockhygiene.internal.events.StatementTally;
import io.lockhygiene.internal.leak.RecentStatements;
import io.lockhygiene.internal.policy.LeakCheckSample;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.leak.CallSite;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.leak.UnlockWatch;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.policy.Situation;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.internal.sql.SqlRewriter;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * Everything LockHygiene does for one application connection, behind one funnel: each execution asks the
 * decision table ({@link LockPolicy#plan}) for its {@link Plan}, fed by {@link #situation()}, the one place
 * that says where we are, and carries out exactly that: run it, record and check it, wrap it in a
 * transaction, rewrite, refuse, or have emulate's lock table decide its calls. Transaction ends and returns
 * carry the leak check ({@link TransactionEnds}). The JDBC faces only route calls here.
 *
 * <p>It never ends a transaction the application opened: whether a statement runs inside one is read from
 * the status the server reported, not from {@code getAutoCommit()}.
 *
 * <p>Not thread-safe beyond what a JDBC connection promises: one thread uses it at a time ({@link #cancel}
 * excepted).
 */
public final class ConnectionGuard {
    private static final AtomicLong IDS = new AtomicLong();

    private final Connection raw;
    private final Settings settings;
    private final String id;
    private final boolean off;
    private final boolean alwaysCheck;
    private final LeakReporter reporter;
    /** Calls seen since the last leak check, for attribution; non-empty means "touched advisory locks". */
    private final RecentCalls calls = new RecentCalls();
    private final PoolerDetection pooler;
    /** Made at the first advisory call (a connection that never sends one loads neither it nor its rate limiter). */
    private LockCallRecorder recorder;
    private final TransactionEnds ends;
    /** emulate's part of this connection (inert in other modes). */
    private final Emulation emulation;
    /** Made at the first SKIP LOCKED statement (most connections never send one: a class less to load). */
    private SkipLockedCheck skipLocked;
    private final StatementTally tally;
    /**
     * The last text that passed the prefilter: the same String again (a constant, an ORM's cached SQL) skips
     * the four passes over it. Identity only, so nothing a text says is ever taken from another text.
     */
    private String lastUnflagged;
    /** Autocommit statements' ends sampled for the leak check (null when not sampling). */
    private final LeakCheckSample autocommitSample;
    /**
     * The text the hot path took for the sample: its plan wraps it and its COMMIT carries the check. Tied to
     * the text (identity), so a turn taken by addBatch, which never runs a plan, cannot fall on another one.
     */
    private String sampledText;
    private final RecentStatements recent = new RecentStatements();

    /**
     * @param route where the connection came from, for emulate's lock holder; null when unknown (emulate then
     *              behaves as detect)
     * @throws SQLException when emulate's {@code lockhygiene.holderUrl} cannot be used
     */
    public ConnectionGuard(Connection raw, Settings settings, HolderRoute route) throws SQLException {
        this.raw = raw;
        this.settings = settings;
        this.id = "lh-" + IDS.incrementAndGet();
        this.off = LockPolicy.off(settings);
        this.alwaysCheck = LockPolicy.checksEveryTransaction(settings);
        this.reporter = new LeakReporter(id, settings);
        this.emulation = new Emulation(raw, settings, id, reporter, route, LockPolicy.emulates(settings));
        this.pooler = new PoolerDetection(raw, settings, id, emulation.threadOwners());
        this.ends = new TransactionEnds(raw, settings, id, reporter, calls, emulation, pooler, recent);
        this.autocommitSample = LeakCheckSample.of(settings);
        Events.installProcessWideOnce();
        this.tally = Events.counters().openTally();
    }

    private LockCallRecorder recorder() {
        if (recorder == null) {
            recorder = new LockCallRecorder(settings, id, reporter, calls);
        }
        return recorder;
    }

    public Settings settings() {
        return settings;
    }

    public String id() {
        return id;
    }

    /**
     * The hot-path test of a Statement's text: true when the statement needs no work at all. Counts it; no
     * allocation; at most one pass over the text.
     */
    public boolean passesUnchecked(String sql) throws SQLException {
        tally.seen();
        emulation.throwIfLockLost();
        if (off) {
            return true;
        }
        recent.add(sql);
        if (emulation.ownerHolds()) {
            return false; // its commits are fenced, DISCARD ALL lets its locks go: the slow path sees to both
        }
        if (sql != lastUnflagged) {
            if (SqlScanner.mightMatter(sql)) {
                return false;
            }
            lastUnflagged = sql;
        }
        if (autocommitSample != null && autocommitSample.next() && takeForSample(sql)) {
            return false;
        }
        return !watchesEveryStatement();
    }

    /**
     * The sample's turn came on this statement: take it when it ends a transaction of its own (autocommit)
     * under transaction pooling and may run inside one; otherwise the turn passes (the next gap is drawn).
     */
    private boolean takeForSample(String sql) {
        try {
            // the first turn of a connection that never met an advisory call asks whether a pooler is in
            // between (one SELECT pg_backend_pid() per connection, as the first lock call would)
            if (raw.getAutoCommit() && SqlScanner.runsInTransactionBlockAsAlone(sql) && pooler.transactionPooling()) {
                sampledText = sql;
                return true;
            }
        } catch (SQLException | RuntimeException e) {
            // the sample is ours: the application's statement runs as it would, unsampled
            Log.debug("LockHygiene: {} skipped a sampled leak check: {}", id, e.toString());
        }
        return false;
    }

    /** The hot-path test of a prepared statement's execution. */
    public boolean passesUnchecked(StatementPlan plan) throws SQLException {
        tally.seen();
        emulation.throwIfLockLost();
        if (off) {
            return true;
        }
        recent.add(plan.original);
        if (!plan.unflagged() || emulation.ownerHolds()) {
            return false;
        }
        if (autocommitSample != null && autocommitSample.next() && takeForSample(plan.sent)) {
            return false;
        }
        return !watchesEveryStatement();
    }

    /**
     * True while every statement must be looked at, whatever its text: under transaction pooling, while a
     * leak check is due at the end of the open transaction (the application may end it with COMMIT as text)
     * or emulate keeps state for it; and with leakCheck=always in autocommit.
     */
    public boolean watchesEveryStatement() throws SQLException {
        if (off) {
            return false;
        }
        if (!calls.isEmpty() || emulation.transactionPending()) {
            return pooler.assumesPooling();
        }
        return alwaysCheck && raw.getAutoCommit() && pooler.transactionPooling();
    }

    /** Where we are now: the server's transaction status, autocommit, pooling, emulate's venue and owner. */
    Situation situation() throws SQLException {
        Situation.TransactionStatus status = Pgjdbc.transactionStatus(raw);
        boolean autoCommit = raw.getAutoCommit();
        boolean pooling = pooler.transactionPooling();
        if (!emulation.on()) {
            return new Situation(status, autoCommit, pooling);
        }
        return new Situation(status, autoCommit, pooling, true, emulation.venue(), emulation.ownerBusy());
    }

    /**
     * Plans a text (a prepare*(sql), a Statement.execute*(sql), an addBatch(sql)): what is sent (rewrite
     * splices it now, with the transaction status of this moment), its scan and, under emulate, its shape.
     * strict refuses here, before anything is sent.
     */
    public StatementPlan plan(String sql, boolean callable) throws SQLException {
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
            if (skipLocked == null) {
                skipLocked = new SkipLockedCheck(raw, settings, reporter); // a racing second one only asks again
            }
            skipLocked.check(sql);
        }
        LockShape shape = emulation.on() && !scan.calls().isEmpty() ? ShapeCache.shape(sql) : null;
        Plan now = LockPolicy.plan(scan, shapeKind(shape, callable, true), null, situation(), settings.mode(),
                settings.leakCheck());
        switch (now.action()) {
            case REJECT:
                throw recorder().reject(sql, scan);
            case REWRITE:
                String rewritten = SqlRewriter.toTransactionScoped(sql, scan,
                        scan.callsInTransaction(situation().statementRunsInTransaction()));
                recorder().announceRewrite(sql, scan, rewritten);
                return new StatementPlan(sql, rewritten, scan, SqlScanner.scan(rewritten), null, callable);
            default:
                return new StatementPlan(sql, sql, scan, scan, shape, callable);
        }
    }

    private static LockPolicy.Shape shapeKind(LockShape shape, boolean callable, boolean hasBinds) {
        if (shape == null) {
            return LockPolicy.Shape.NONE;
        }
        if (shape.isSupported()) {
            if (!hasBinds && shape.parameterCount() > 0) {
                return LockPolicy.Shape.UNBOUND;
            }
            return callable != (shape.form() == LockShape.Form.CALL_ESCAPE) ? LockPolicy.Shape.UNSUPPORTED
                    : LockPolicy.Shape.SUPPORTED;
        }
        return shape.unsupported().startsWith(io.lockhygiene.internal.shape.ShapeParser.SEVERAL_STATEMENTS)
                ? LockPolicy.Shape.SEVERAL : LockPolicy.Shape.UNSUPPORTED;
    }

    /**
     * The funnel of every execution that is not on the fast path: asks the policy for its plan and carries it
     * out.
     *
     * @param binds a prepared statement's bind values (kept under emulate), or null for a Statement's text
     */
    public <R> R run(StatementPlan plan, Binds binds, Face face, Face.Runner<R> runner) throws SQLException {
        Statement app = face.app();
        boolean sampled = sampledText != null && (sampledText == plan.original || sampledText == plan.sent);
        sampledText = null;
        if (off || (plan.unflagged() && !sampled && !watchesEveryStatement())) {
            if (!off && emulation.ownerHolds()) {
                return runOwning(plan, face, runner);
            }
            return runner.run(app, plan.sent); // nothing to plan (a word in a comment matched): as the fast path
        }
        if (plan.finalTransactionEnd() != null && checksAtTextEnd(plan)) {
            return runEndingTransaction(plan, binds, face, runner);
        }
        Situation where = situation();
        boolean prepared = binds != null || plan.callable;
        LockShape shape = plan.shape;
        Plan p = LockPolicy.plan(shape != null ? plan.scan : plan.sentScan, shapeKind(shape, plan.callable, prepared),
                shape == null ? null : shape.unsupported(), where, settings.mode(), settings.leakCheck(), sampled);
        if (sampled && p.wrapped()) {
            ends.sampleNextEnd(); // the COMMIT of our wrapping carries the sampled check
        }
        switch (p.action()) {
            case EMULATE:
                return emulate(plan, binds, face, runner, where);
            case ON_SERVER:
                emulation.ranOnServer(where.statementRunsInTransaction());
                return runAsIs(plan, face, runner, where, false, false);
            case REFUSE:
                throw refuse(plan, binds, p.refusal());
            case SPLIT:
                if (prepared) {
                    throw refuse(plan, binds, "several statements in one prepared statement");
                }
                return split(plan, face, runner, where);
            case REJECT:
                throw recorder().reject(plan.original, plan.scan);
            case RECORD:
            case REWRITE:
                return runAsIs(plan, face, runner, where, true, p.wrapped());
            default:
                return runAsIs(plan, face, runner, where, false, p.wrapped());
        }
    }

    /** True while the owner of this connection's statements holds emulated locks (a volatile read when none does). */
    public boolean ownerHolds() {
        return !off && emulation.ownerHolds();
    }

    /**
     * A statement without advisory calls of an owner that holds emulated locks. In autocommit it is its own
     * commit, so it is fenced in its own round trip: run with the fence after it in one implicit transaction,
     * which the fence undoes when a session holding the owner's locks is gone (then 08006, naming the keys);
     * where that cannot be done exactly it runs in a transaction of ours whose COMMIT carries the fence.
     * Inside a transaction it runs as it is (its end is fenced); one that cannot run inside a transaction
     * block (VACUUM, CREATE INDEX CONCURRENTLY) commits nothing to fence. DISCARD ALL lets the owner's
     * session-level locks go, as on PostgreSQL.
     */
    private <R> R runOwning(StatementPlan plan, Face face, Face.Runner<R> runner) throws SQLException {
        Statement app = face.app();
        if (TransactionControl.discardsAll(plan.original)) {
            R result = runner.run(app, plan.sent);
            emulation.discardedAll();
            return result;
        }
        int[] seals = Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.IDLE && raw.getAutoCommit()
                ? emulation.commitSeals() : null;
        if (seals == null || !plan.runsInTransactionBlockAsAlone()) {
            return runner.run(app, plan.sent);
        }
        Statement fenced;
        try {
            fenced = face.runFenced(plan.sent, emulation.fence(seals));
        } catch (SQLException e) {
            if (io.lockhygiene.internal.holder.Seals.isFenceFailure(e)) {
                throw emulation.fenceFailed(e);
            }
            throw e;
        }
        if (fenced == null) {
            return ends.runWrapped(app, plan.sent, sql -> runner.run(app, sql));
        }
        Statement shown = face.chain(java.util.Collections.singletonList(fenced));
        face.readFrom(shown, null);
        return runner.run(shown, plan.original);
    }

    /**
     * A text whose last statement ends the transaction while a leak check is due: what comes before the end
     * runs as usual (its results are the application's), then the end itself goes with the check in one
     * round trip on a statement of ours, so the check runs on the server that held the transaction. A text
     * that is only the end shows what pgjdbc shows after one; after a longer text, the end's own update
     * count is the one result the application does not see.
     */
    private <R> R runEndingTransaction(StatementPlan plan, Binds binds, Face face, Face.Runner<R> runner)
            throws SQLException {
        TransactionControl end = plan.finalTransactionEnd();
        String endText = end.textIn(plan.original);
        if (end.statementIndex() == 0) {
            Statement ended = face.ended(endTransactionByText(endText));
            face.readFrom(ended, null);
            return runner.run(ended, plan.original);
        }
        // the rewrite splices only before the end: the end starts as far from the text's end in both
        String before = plan.sent.substring(0, plan.sent.length() - (plan.original.length() - end.start()));
        StatementPlan first = plan.sent.equals(plan.original) ? plan(before, false)
                : new StatementPlan(before, before, SqlScanner.scan(before), SqlScanner.scan(before), null, false);
        R result = run(first, binds, face, runner);
        endTransactionByText(endText);
        return result;
    }

    /**
     * Runs the text that is sent (the application's, or rewrite's): its session-level calls recorded for the
     * leak check when {@code record}; inside a transaction of ours when {@code wrapped} (autocommit under
     * transaction pooling), whose end carries the check on the server that held it.
     */
    private <R> R runAsIs(StatementPlan plan, Face face, Face.Runner<R> runner, Situation where, boolean record,
                          boolean wrapped) throws SQLException {
        Statement app = face.app();
        if (record && where.status() != Situation.TransactionStatus.FAILED && plan.sentScan.hasSessionLevelCall()) {
            recorder().record(plan.sentScan, plan.original, where, LockPolicy.rewrites(settings),
                    LockPolicy.emulates(settings) && !emulation.on());
        }
        R result;
        if (wrapped) {
            result = ends.runWrapped(app, plan.sent, sql -> runner.run(app, sql));
        } else {
            try {
                result = runner.run(app, plan.sent);
            } catch (SQLException | RuntimeException appFailure) {
                emulation.statementFailed(appFailure);
                throw appFailure;
            }
        }
        if (record || plan.sentScan.hasSessionLevelCall()) {
            UnlockWatch.check(app, plan.sentScan, plan.original, reporter, settings);
        }
        if (!wrapped) {
            ends.afterExecution(where.status());
        }
        followSavepoints(plan.scan, plan.original);
        return result;
    }

    /** emulate: the lock table decides every call; the answer is made here or computed by the server. */
    private <R> R emulate(StatementPlan plan, Binds binds, Face face, Face.Runner<R> runner, Situation where)
            throws SQLException {
        Outcome outcome = emulation.execute(plan.shape, binds, face.app(), where.statementRunsInTransaction());
        try {
            Statement target;
            String sql;
            if (outcome.rows() != null) {
                target = face.answer(outcome.rows());
                sql = plan.original;
            } else {
                target = face.answer(outcome.query(), binds);
                sql = outcome.query().sql();
            }
            face.readFrom(target, outcome);
            return runner.run(target, sql);
        } catch (SQLException | RuntimeException appFailure) {
            emulation.statementFailed(appFailure);
            throw appFailure;
        } finally {
            outcome.finish();
            ends.afterExecution(where.status());
        }
    }

    /**
     * emulate cannot answer this statement as PostgreSQL would: PostgreSQL's own verdict first (a statement
     * it refuses gets its error), then ours, before anything is sent.
     */
    private SQLException refuse(StatementPlan plan, Binds binds, String why) throws SQLException {
        if (plan.shape != null && !plan.callable) {
            io.lockhygiene.internal.emulate.Validation.describe(plan.original, binds, plan.shape.parameterCount(), raw);
        }
        String message = EmulateMessages.refused(why, settings.loggable(plan.original));
        reporter.publish(EventType.REFUSED, null, null, null, plan.original, message, CallSite.capture("refused here"));
        return new SQLException(message, "0A000");
    }

    /**
     * emulate: a text of several statements runs one statement at a time, each planned on its own (so every
     * call is decided as in PostgreSQL, in order), its results shown in order. In autocommit, a text with no
     * BEGIN or COMMIT of its own runs in one transaction of ours, as PostgreSQL runs such a text in one
     * implicit transaction (a failure undoes all of it).
     */
    private <R> R split(StatementPlan plan, Face face, Face.Runner<R> runner, Situation where) throws SQLException {
        List<String> pieces = pieces(plan.original, plan.scan);
        List<Statement> results = new ArrayList<>(pieces.size());
        SqlCall<Boolean> all = ignored -> {
            for (String piece : pieces) {
                results.add(runPiece(piece, face));
            }
            return Boolean.TRUE;
        };
        boolean ours = !where.statementRunsInTransaction() && !plan.scan.hasTransactionControl();
        try {
            if (ours) {
                ends.runWrapped(face.app(), plan.original, all);
            } else {
                all.run(plan.original);
            }
        } catch (SQLException | RuntimeException e) {
            for (Statement s : results) {
                closeQuietly(s);
            }
            throw e;
        }
        Statement chained = face.chain(results);
        face.readFrom(chained, null);
        return runner.run(chained, plan.original);
    }

    private Statement runPiece(String piece, Face outer) throws SQLException {
        StatementPlan p = plan(piece, false);
        PieceFace face = new PieceFace(outer);
        try {
            run(p, null, face, (target, sql) -> target.execute(sql));
        } catch (SQLException | RuntimeException e) {
            face.close();
            throw e;
        }
        return face.results();
    }

    /** The statements of a text, cut at its top-level semicolons. */
    static List<String> pieces(String sql, ScanResult scan) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int semicolon : scan.semicolons()) {
            String piece = sql.substring(start, semicolon);
            if (!piece.trim().isEmpty()) {
                out.add(piece);
            }
            start = semicolon + 1;
        }
        String last = sql.substring(start);
        if (!last.trim().isEmpty()) {
            out.add(last);
        }
        return out;
    }

    private static void closeQuietly(Statement s) {
        try {
            s.close();
        } catch (SQLException | RuntimeException ignored) {
            // a piece's results the application never saw
        }
    }

    /** A Statement's savepoint commands as text (SAVEPOINT, ROLLBACK TO, RELEASE), for emulate's table. */
    private void followSavepoints(ScanResult scan, String sql) {
        if (scan == null || !scan.hasTransactionControl() || !emulation.on()) {
            return;
        }
        for (TransactionControl tc : scan.transactionControls()) {
            TransactionControl.Kind k = tc.kind();
            if (k == TransactionControl.Kind.SAVEPOINT || k == TransactionControl.Kind.ROLLBACK_TO
                    || k == TransactionControl.Kind.RELEASE) {
                emulation.followSavepoint(k, "text:" + tc.savepointName(sql));
            }
        }
    }

    /** A batch (Statement.addBatch texts, or a prepared statement's): recorded and wrapped like one execution. */
    public <R> R runBatch(List<StatementPlan> texts, Statement app, SqlCall<R> call) throws SQLException {
        if (off) {
            return call.run(null);
        }
        Situation where = situation();
        boolean wrap = false;
        for (StatementPlan p : texts) {
            if (p.shape != null && p.shape.hasSessionLevelCall() && emulation.on() && where.transactionPooling()) {
                throw refuse(p, null, "session-level advisory calls in a batch (a batch's results are update counts, so"
                        + " the calls' answers could not be read anyway)");
            }
            Plan plan = LockPolicy.plan(p.sentScan, LockPolicy.Shape.NONE, null, where, settings.mode(),
                    settings.leakCheck());
            if (plan.action() == Plan.Action.RECORD || plan.action() == Plan.Action.REWRITE) {
                recorder().record(p.sentScan, p.original, where, LockPolicy.rewrites(settings),
                        LockPolicy.emulates(settings) && !emulation.on());
            }
            wrap |= plan.wrapped();
        }
        if (texts.isEmpty() && LockPolicy.plan(ScanResult.NOTHING, LockPolicy.Shape.NONE, null, where, settings.mode(),
                settings.leakCheck()).wrapped()) {
            wrap = true;
        }
        if (wrap) {
            return ends.runWrapped(app, null, call);
        }
        R result;
        try {
            result = call.run(null);
        } catch (SQLException | RuntimeException appFailure) {
            emulation.statementFailed(appFailure);
            throw appFailure;
        }
        ends.afterExecution(where.status());
        return result;
    }

    /** Application close: the return check, then emulate lets go of the connection's locks (reported). */
    public void onClose() {
        Events.counters().closeTally(tally);
        ends.beforeReturn();
        emulation.letGo(true);
    }

    /** A pool's return: the same checks; the connection lives on. */
    public void onReturn() {
        ends.beforeReturn();
        emulation.letGo(false);
    }

    /** Application abort. */
    public void onAbort() {
        Events.counters().closeTally(tally);
        emulation.onAbort();
    }

    /** The application cancels its running statement: a wait of ours for a lock ends with 57014 too. */
    public void cancel() {
        emulation.cancel();
    }

    /** emulate: a savepoint of the JDBC API. */
    public void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        emulation.followSavepoint(kind, savepoint);
    }

    /** True when a text whose last statement ends the transaction must carry the leak check. */
    public boolean checksAtTextEnd(StatementPlan plan) throws SQLException {
        return ends.checksAtTextEnd(plan);
    }

    /** The application's own transaction end as text, with the leak check in its round trip. */
    public SQLWarning endTransactionByText(String endText) throws SQLException {
        return ends.endTransactionByText(endText);
    }

    /** Connection.commit(): plain, or with the leak check piggybacked. */
    public void commit() throws SQLException {
        ends.commit();
    }

    /** Connection.rollback(): plain, or with the leak check piggybacked. */
    public void rollback() throws SQLException {
        ends.rollback();
    }
}
