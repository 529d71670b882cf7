package io.lockhygiene.internal.guard;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.guard.PlanRun.Executed;
import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.session.SkipLockedCheck;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.internal.session.TransactionPooling;
import io.lockhygiene.internal.leak.RecentCalls.RecentStatements;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.pgjdbc.Pgjdbc;
import io.lockhygiene.internal.placement.EndpointResolver;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.internal.settings.ModeLine;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;

/**
 * Everything LockHygiene does for one application connection, behind one funnel. A text is read once
 * ({@link #check} on the hot path, {@link #plan} at prepare): the prefilter once, then its analysis from
 * the one cache; each execution then asks the decision table ({@link LockPolicy#plan}) once for its
 * {@link Plan}, fed by {@link #situation()}, the one place that says where we are, and {@link PlanRun}
 * carries out exactly that. Transaction ends and returns carry the leak check ({@link TransactionEnds}).
 * The JDBC faces only route calls here.
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
    /** The front-end-neutral part of this connection: its id, settings, reporter, recent calls, emulation. */
    private final OwnerSession session;
    private final Settings settings;
    private final boolean off;
    private final boolean alwaysCheck;
    private final PoolerDetection pooler;
    private final TransactionEnds ends;
    /** The session's emulation: emulate's part of this connection (inert in other modes). */
    private final Emulation emulation;
    private final PlanRun runs;
    /** The texts of several statements it runs in pieces (emulate's split, the fences and checks inside a text). */
    private final SeveralStatements several;
    /**
     * The last text that passed the prefilter: the same String again (a constant, an ORM's cached SQL) skips
     * the passes over it. Identity only, so nothing a text says is ever taken from another text.
     */
    private String lastUnflagged;
    /**
     * The text a prepared statement's hot path took for the sample: its plan wraps it and its COMMIT carries
     * the check. Tied to the text (identity), so a turn taken by addBatch, which never runs a plan, cannot fall
     * on another one.
     */
    private String sampledText;
    private final RecentStatements recent = new RecentStatements();

    /**
     * @param route where the connection came from, for emulate's lock holder; null when unknown (emulate then
     *              behaves as detect)
     * @throws SQLException when emulate's {@code lockhygiene.holderUrl} cannot be used
     */
    public ConnectionGuard(Connection raw, Settings asked, HolderRoute route) throws SQLException {
        EndpointResolver.ForConnection placed = EndpointResolver.forConnection(route, asked, raw);
        Settings settings = placed.settings;
        ModeLine.sayOnce(settings, "JDBC");
        this.raw = raw;
        boolean threadOwners = route != null && route.threadOwners();
        this.session = new OwnerSession(settings, "lh-" + IDS.incrementAndGet(), raw, placed.holder, threadOwners);
        this.settings = settings;
        this.off = session.off();
        this.alwaysCheck = LockPolicy.checksEveryTransaction(settings);
        this.emulation = session.emulation();
        // emulate chosen by name on connections a pool lends to any thread: the pool is the pooler (a thread's lock lives
        // in the lock holder across borrows, never on one borrowed connection). The default does this only behind a
        // transaction pooler (asked): a pool of the server's own sessions, or of a session pooler's, keeps pgjdbc's
        // meaning, a lock belonging to the connection that took it
        this.pooler = new PoolerDetection(raw, new TransactionPooling(settings, session.id(),
                emulation.threadOwners() && !settings.modeIsDefault()));
        this.ends = new TransactionEnds(raw, session, pooler, recent);
        this.several = new SeveralStatements(this, raw, ends);
        this.runs = new PlanRun(raw, session, ends, several);
    }

    public Settings settings() {
        return settings;
    }

    public String id() {
        return session.id();
    }

    /**
     * The hot path of a Statement's text: null when the statement needs no work at all (no allocation, at
     * most the prefilter's passes over the text, and only once); otherwise the text's plan for this
     * execution, with where the connection stands and the policy's plan decided once. strict refuses here.
     */
    public StatementPlan check(String sql) throws SQLException {
        session.statementSeen();
        emulation.throwIfLockLost();
        if (off) {
            return null;
        }
        recent.add(sql);
        if (sql != lastUnflagged && SqlScanner.mightMatter(sql)) {
            return planNow(sql, true, false);
        }
        if (emulation.ownerHolds()) {
            // an owner holding emulated locks: its commits are fenced, DISCARD ALL lets its locks go (see run)
            return watchesEveryStatement() ? planNow(sql, false, false) : StatementPlan.unflagged(sql);
        }
        lastUnflagged = sql;
        if (session.autocommitSampleTurn() && takeForSample(sql)) {
            return planNow(sql, false, true);
        }
        return watchesEveryStatement() ? planNow(sql, false, false) : null;
    }

    /**
     * The sample's turn came on this statement: take it when it ends a transaction of its own (autocommit)
     * under transaction pooling and may run inside one; otherwise the turn passes (the next gap is drawn).
     */
    private boolean takeForSample(String sql) {
        try {
            // the first turn of a connection that never met an advisory call asks whether a pooler is in
            // between (one SELECT pg_backend_pid() per connection, as the first lock call would); the text is
            // lexed last, only where the turn can be taken (a long text would cost its length on every turn)
            return raw.getAutoCommit() && pooler.transactionPooling() && SqlScanner.runsInTransactionBlockAsAlone(sql);
        } catch (SQLException | RuntimeException e) {
            // the sample is ours: the application's statement runs as it would, unsampled
            Log.debug("LockHygiene: {} skipped a sampled leak check: {}", session.id(), e.toString());
            return false;
        }
    }

    /** The hot-path test of a prepared statement's execution: true when it needs no work at all. */
    public boolean passesUnchecked(StatementPlan plan) throws SQLException {
        session.statementSeen();
        emulation.throwIfLockLost();
        if (off) {
            return true;
        }
        recent.add(plan.original);
        if (!plan.unflagged() || emulation.ownerHolds()) {
            return false;
        }
        if (session.autocommitSampleTurn() && takeForSample(plan.sent)) {
            sampledText = plan.sent;
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
        if (session.watchesEveryStatement(pooler.assumesPooling())) {
            return true; // the core's rule, every front end's
        }
        // leakCheck=always: every autocommit statement is its own transaction to check; none is known unpooled
        return alwaysCheck && raw.getAutoCommit() && pooler.transactionPooling();
    }

    /** Where we are now: the server's transaction status, autocommit, pooling, emulate's venue and owner. */
    Situation situation() throws SQLException {
        return session.situation(Pgjdbc.transactionStatus(raw), raw.getAutoCommit(), pooler.transactionPooling());
    }

    /**
     * Plans a text for later executions (a prepare*(sql), an addBatch(sql)): what is sent (rewrite splices it
     * now, with the transaction status of this moment), its scan and, under emulate, its shape. strict
     * refuses here, before anything is sent.
     */
    public StatementPlan plan(String sql, boolean callable) throws SQLException {
        if (off) {
            return StatementPlan.unflagged(sql);
        }
        return plan(sql, SqlScanner.mightMatter(sql) || watchesEveryStatement(),
                callable ? LockPolicy.Form.CALLABLE : LockPolicy.Form.PREPARED, false, false);
    }

    /**
     * A text to run now (a Statement's, or one statement of a text of several), with this moment's situation
     * and plan, which its run uses.
     *
     * @param flagged the prefilter said it may matter
     * @param sampled the leak check sample took its end
     */
    StatementPlan planNow(String sql, boolean flagged, boolean sampled) throws SQLException {
        return planNow(sql, flagged, sampled, LockPolicy.Form.TEXT);
    }

    /** The same for a part of a text that reached us as {@code form} (the statements before its COMMIT). */
    StatementPlan planNow(String sql, boolean flagged, boolean sampled, LockPolicy.Form form) throws SQLException {
        return plan(sql, flagged || watchesEveryStatement(), form, sampled, true);
    }

    /**
     * @param analyse read the text (it passed the prefilter, or every statement is watched: a COMMIT as text
     *                must be seen)
     */
    private StatementPlan plan(String sql, boolean analyse, LockPolicy.Form form, boolean sampled, boolean now)
            throws SQLException {
        TextAnalysis analysis = analyse && sql != null && !sql.isEmpty() ? TextAnalysis.of(sql) : null;
        ScanResult scan = analysis == null ? ScanResult.NOTHING : analysis.scan();
        if (scan.nothingOfInterest() && !sampled) {
            return StatementPlan.unflagged(sql); // its run decides, if it must (a statement watched)
        }
        SkipLockedCheck skipLocked = session.skipLockedCheck(scan);
        if (skipLocked != null) {
            checkSkipLocked(skipLocked, sql);
        }
        LockShape shape = session.emulates() && !scan.calls().isEmpty() ? analysis.shape() : null;
        Situation where = situation();
        Plan decided = session.plan(sql, scan, shape, form, sampled, where);
        if (decided.action() == Plan.Action.REWRITE) {
            String rewritten = session.rewritten(sql, scan, where.statementRunsInTransaction());
            return new StatementPlan(sql, rewritten, scan, SqlScanner.scan(rewritten), null, form)
                    .decidedNow(now ? where : null, now ? decided : null, sampled);
        }
        return new StatementPlan(sql, sql, scan, scan, shape, form)
                .decidedNow(now ? where : null, now ? decided : null, sampled);
    }

    /**
     * The SKIP LOCKED trap ({@link SkipLockedCheck}, the core's), the catalog read here: the connection's scope at its
     * first such text, a table's unique keys at its first. Strict refuses before anything is sent.
     */
    private void checkSkipLocked(SkipLockedCheck check, String sql) throws SQLException {
        if (!check.knowsScope()) {
            try (Statement s = raw.createStatement(); ResultSet rs = s.executeQuery(SkipLockedCheck.SCOPE_QUERY)) {
                rs.next();
                check.scopeRead(rs.getString(1));
            } catch (SQLException e) {
                return; // e.g. a failed transaction: the statement itself will fail; asked again next time
            }
        }
        String table = check.keysToRead(sql);
        if (table != null) {
            List<String[]> keys = new ArrayList<>();
            try (PreparedStatement ps = raw.prepareStatement(SkipLockedCheck.KEYS_QUERY_JDBC)) {
                ps.setString(1, table);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        keys.add((String[]) rs.getArray(1).getArray());
                    }
                }
                check.keysRead(table, keys);
            } catch (SQLException | RuntimeException e) {
                check.keysUnread(table, e);
                return;
            }
        }
        check.check(sql, null);
    }

    /**
     * The funnel of every execution that is not on the fast path: carries out the plan decided for it (by
     * {@link #check} for a Statement's text, here for a prepared statement's execution), and says where the
     * application reads the results.
     *
     * @param binds a prepared statement's bind values (kept under emulate), or null for a Statement's text
     */
    public <R> Executed<R> run(StatementPlan plan, Binds binds, StatementSource face, Call<R> call) throws SQLException {
        if (off) {
            return Executed.onApp(call.run(face.app(), plan.sent));
        }
        boolean sampled = plan.sampled || (sampledText != null && sampledText == plan.sent);
        sampledText = null;
        if (plan.unflagged() && !sampled && !watchesEveryStatement()) {
            // a prepared statement of an owner holding emulated locks, or a word in a comment that matched
            return emulation.ownerHolds() ? runs.owning(plan, binds, face, call) : Executed.onApp(call.run(face.app(), plan.sent));
        }
        if (plan.scan.finalTransactionEnd() != null && ends.checksAtTextEnd(plan)) {
            return several.endingTransaction(plan, plan.scan.finalTransactionEnd(), binds, face, call);
        }
        LockPolicy.OwnerStep step = ownersStep(plan);
        if (step == LockPolicy.OwnerStep.ENDS_TRANSACTION) {
            return several.endingTransaction(plan, plan.scan.finalEnd(), binds, face, call);
        }
        if (step == LockPolicy.OwnerStep.FENCED || step == LockPolicy.OwnerStep.LETS_GO_AFTER) {
            return runs.owning(plan, binds, face, call); // a text the prefilter flagged (SKIP LOCKED, a word it matched)
        }
        if (step == LockPolicy.OwnerStep.FENCES_IN_TEXT && plan.form == LockPolicy.Form.TEXT) {
            return several.fencingInText(plan, face, call);
        }
        Situation where = plan.where != null ? plan.where : situation();
        Plan p = plan.decided != null ? plan.decided : session.plan(plan.original,
                plan.shape != null ? plan.scan : plan.sentScan, plan.shape, plan.form, sampled, where);
        if (sampled && p.wrapped()) {
            session.sampleNextEnd(); // the COMMIT of our wrapping carries the sampled check
        }
        return runs.carryOut(p, plan, binds, face, call, where);
    }

    /**
     * emulate: what the one rule ({@link LockPolicy#ownerStep}) says of a text without advisory calls while the owner
     * holds emulated locks or its open transaction has emulation state (a text with calls is split, and each part
     * asks this); null otherwise. Its last statement ending such a transaction goes as commit() and rollback() do;
     * an autocommit statement is fenced; a text that keeps work before its end is fenced there.
     */
    private LockPolicy.OwnerStep ownersStep(StatementPlan plan) throws SQLException {
        if (!emulation.on() || !plan.scan.calls().isEmpty()) {
            return null;
        }
        boolean holds = emulation.ownerHolds();
        if (!holds && (plan.scan.finalEnd() == null || !emulation.transactionPending())) {
            return null;
        }
        boolean inTransaction = plan.where != null ? plan.where.statementRunsInTransaction()
                : Pgjdbc.statementRunsInTransaction(raw);
        return LockPolicy.ownerStep(plan, inTransaction, holds);
    }

    /** True while the owner of this connection's statements holds emulated locks (a volatile read when none does). */
    public boolean ownerHolds() {
        return !off && emulation.ownerHolds();
    }

    /**
     * A batch (Statement.addBatch texts, or a prepared statement's): each text's plan from the policy,
     * recorded, and wrapped like one execution when one of them needs it.
     */
    public <R> R runBatch(List<StatementPlan> texts, Statement app, Call<R> call) throws SQLException {
        if (off) {
            return call.run(app, null);
        }
        emulation.throwIfLockLost();
        return runs.batch(texts, app, call, situation());
    }

    /**
     * A batch none of whose texts passed the prefilter: true when it needs no work at all. The loss of the owner's
     * locks is told first (it clears them from the table, after which the batch would pass unfenced); an owner
     * holding emulated locks has its autocommit batch fenced ({@link PlanRun#batch}).
     */
    public boolean batchPasses() throws SQLException {
        emulation.throwIfLockLost();
        return off || (!emulation.ownerHolds() && !watchesEveryStatement());
    }

    /** Application close: the return check, then emulate lets go of the connection's locks (reported). */
    public void onClose() {
        session.closed();
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
        session.closed();
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
