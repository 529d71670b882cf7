package io.lockhygiene.internal.session;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.events.Events.Counters.StatementTally;
import io.lockhygiene.internal.events.Events;
import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.holder.SessionBounds;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.leak.ReportLog;
import io.lockhygiene.internal.leak.RecentCalls.RecentStatements;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.internal.policy.LeakCheckSample;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.SqlRewriter;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.settings.Settings;

/**
 * One application connection as LockHygiene's core sees it, whichever front end it came through (JDBC's driver,
 * DataSource wrapper and agent, or R2DBC): its id, settings, leak reporter, the advisory calls seen since the last
 * leak check, emulate's part (its {@link Emulation}), and every decision about one execution that does not depend
 * on how statements are sent:
 *
 * <ol>
 *   <li>where the connection stands ({@link #situation}), from the transaction status the server reported;</li>
 *   <li>the text's plan ({@link #plan}, {@link #inBatch}): rejected (strict), or decided by the one table;</li>
 *   <li>what a rewrite sends, announced ({@link #rewritten});</li>
 *   <li>what the plan asks of the core before anything is sent ({@link #beforeSend}): refused (emulate),
 *       recorded for the leak check (detect, rewrite), noted as run on the application's server (emulate);</li>
 *   <li>what an owner's statement without advisory calls needs ({@link #ownerStep}), and what any statement
 *       without them needs of a front end that sends a text as one statement ({@link StatementStep}); a chained
 *       end followed in the lock table ({@link #followChain});</li>
 *   <li>the leak check at a transaction end and at a return: whether it is due, and why
 *       ({@link #checkAtTransactionEnd}, {@link #checkDueAtReturn}), and what it found reported.</li>
 * </ol>
 *
 * <p>It never sends a statement (no port, no completion stage): each front end carries out what it is told in
 * its own way, JDBC at once on the caller's thread, a reactive front end without blocking, so the blocking front
 * end pays nothing for the reactive ones. A reactive front end's own statements (its transaction ends, the check at
 * close, the pooler's detection, the SKIP LOCKED catalog) are sequenced once for all of them by
 * {@link ReactiveSession}, over the port each implements ({@link ReactiveConnection}). A third front end
 * (Vert.x's {@code SqlClient}) makes one of each per connection; see docs/architecture.md.
 *
 * <p>One operation at a time, as a JDBC or R2DBC connection is used.
 */
public final class OwnerSession {
    private final Settings settings;
    private final String id;
    private final boolean off;
    private final LeakReporter reporter;
    /** Calls seen since the last leak check, for attribution; non-empty means "touched advisory locks". */
    private final RecentCalls calls = new RecentCalls();
    /** See {@link #skipLockedCheck}. */
    private volatile SkipLockedCheck skipLocked;
    /** emulate's part: JDBC's is never null (inert unless emulate has a holder); R2DBC's is null unless it has. */
    private final Emulation emulation;
    private final StatementTally tally;
    /** Made at the first advisory call (a connection that never sends one loads neither it nor its rate limiter). */
    private LockCallRecorder recorder;
    /** Explicit transactions' ends sampled for the leak check (null when not sampling). */
    private final LeakCheckSample endSample;
    /** Autocommit statements' ends sampled for the leak check (null when not sampling). */
    private final LeakCheckSample autocommitSample;
    /** The next end is the COMMIT of the transaction of ours an autocommit statement the sample took runs in. */
    private boolean sampledNextEnd;

    /**
     * A JDBC connection's (the driver, the DataSource wrapper, the agent): its emulation works on the application's
     * own connection {@code raw} (inert when {@code holder} is null).
     *
     * @param holder the holder placed for the connection's route, or null (emulate off, or no holder placed)
     * @param threadOwners locks belong to threads, across a pool's borrows
     */
    public OwnerSession(Settings settings, String id, Connection raw, Holder holder, boolean threadOwners) {
        this(settings, id, true, raw, holder, threadOwners, null);
    }

    /**
     * A connection of a front end without a JDBC connection (R2DBC): no emulation when {@code holder} is null,
     * else one that reads the session's bounds through {@code sessionBounds} and decides only what the JVM can
     * decide alone ({@link #withoutConnection(LockShape)}).
     */
    public OwnerSession(Settings settings, String id, Holder holder, SessionBounds.Source sessionBounds) {
        this(settings, id, false, null, holder, false, sessionBounds);
    }

    /** The one way the fields are set; {@code jdbc}: emulation over {@code raw}, else over {@code sessionBounds}. */
    private OwnerSession(Settings settings, String id, boolean jdbc, Connection raw, Holder holder,
                         boolean threadOwners, SessionBounds.Source sessionBounds) {
        this.settings = settings;
        this.id = id;
        this.off = LockPolicy.off(settings);
        this.reporter = new LeakReporter(id, settings);
        this.emulation = jdbc ? new Emulation(raw, settings, id, reporter, holder, threadOwners)
                : holder == null ? null : Emulation.withoutConnection(holder, settings, id, reporter, sessionBounds);
        this.endSample = LeakCheckSample.of(settings);
        this.autocommitSample = LeakCheckSample.of(settings);
        Events.installProcessWideOnce();
        this.tally = Events.counters().openTally();
    }

    public Settings settings() {
        return settings;
    }

    public String id() {
        return id;
    }

    /** lockhygiene.mode=off: every statement goes to the driver untouched. */
    public boolean off() {
        return off;
    }

    public LeakReporter reporter() {
        return reporter;
    }

    public RecentCalls calls() {
        return calls;
    }

    /**
     * The SKIP LOCKED single-key trap's check for a text the scan found {@code SKIP LOCKED} in, or null (none there,
     * or {@code lockhygiene.skipLocked=off}). Made at the connection's first such text: most never send one.
     */
    public SkipLockedCheck skipLockedCheck(ScanResult scan) {
        if (!scan.hasSkipLocked() || settings.skipLocked() == Settings.SkipLocked.OFF) {
            return null;
        }
        SkipLockedCheck check = skipLocked;
        if (check == null) {
            check = new SkipLockedCheck(settings, reporter); // a racing second one only asks the scope again
            skipLocked = check;
        }
        return check;
    }

    /** emulate's part, or null (R2DBC without emulate); see the field. */
    public Emulation emulation() {
        return emulation;
    }

    /** emulate with a holder: the lock table decides this connection's calls. */
    public boolean emulates() {
        return emulation != null && emulation.on();
    }

    /** Counts one statement of the connection (the hot path: a plain counter of this connection's). */
    public void statementSeen() {
        tally.seen();
    }

    /** The connection is closed: its statements counted into the process's. */
    public void closed() {
        Events.counters().closeTally(tally);
    }

    public LockCallRecorder recorder() {
        if (recorder == null) {
            recorder = new LockCallRecorder(settings, id, reporter, calls);
        }
        return recorder;
    }

    /**
     * Where the connection stands now, for the decision table: the transaction status the server reported, the
     * autocommit the application asked for, whether a transaction pooler is in between, and under emulate where
     * the open transaction's calls run and whether the owner is busy (volatile reads: R2DBC asks on an event loop).
     */
    public Situation situation(Situation.TransactionStatus status, boolean autoCommit, boolean pooling) {
        if (!emulates()) {
            return new Situation(status, autoCommit, pooling);
        }
        return new Situation(status, autoCommit, pooling, true, emulation.venue(), emulation.ownerBusy());
    }

    /**
     * For a front end without a JDBC connection (R2DBC): the shape emulate decides a text's calls with, refused
     * where only the application's own server could decide it ({@link Emulation#whyNot}).
     */
    public static LockShape withoutConnection(LockShape shape) {
        String why = Emulation.whyNot(shape);
        return why != null && shape.isSupported() ? shape.refusedBecause(why) : shape;
    }

    /**
     * One execution's plan from the decision table; strict's rejection thrown here, before anything is sent.
     *
     * @param sql the application's text (for the rejection's words)
     */
    public Plan plan(String sql, ScanResult scan, LockShape shape, LockPolicy.Form form, boolean sampled,
                     Situation where) throws SQLException {
        Plan p = LockPolicy.plan(scan, shape, form, sampled, where, settings);
        if (p.action() == Plan.Action.REJECT) {
            throw recorder().reject(sql, scan);
        }
        // a transaction of ours must not go around what PostgreSQL refuses in one (lexed only where one would)
        return p.wrapped() ? LockPolicy.asItIsWhereRefused(p, SqlScanner.refusesTransactionBlock(sql)) : p;
    }

    /** One text of a batch: its plan from the decision table (a batch's texts are never split or emulated). */
    public Plan inBatch(String sql, ScanResult scan, LockShape shape, Situation where) throws SQLException {
        Plan p = LockPolicy.inBatch(scan, shape, where, settings);
        if (p.action() == Plan.Action.REJECT) {
            throw recorder().reject(sql, scan);
        }
        return p;
    }

    /**
     * rewrite: the text with its session-level calls made transaction-scoped (those that run inside a transaction
     * block: {@code inTransaction}), announced (a log line, rate-limited, and an event).
     */
    public String rewritten(String sql, ScanResult scan, boolean inTransaction) {
        String rewritten = SqlRewriter.toTransactionScoped(sql, scan, scan.callsInTransaction(inTransaction));
        recorder().announceRewrite(sql, scan, rewritten);
        return rewritten;
    }

    /**
     * What a plan asks of the core before its text is sent, the same for every front end: emulate's refusal
     * (thrown, worded and published once); the session-level calls of what is sent recorded for the leak check
     * (not in a failed transaction: the server runs nothing there); a statement emulate leaves to the application's
     * own server noted, so the open transaction's calls keep running there.
     *
     * @param original the application's text
     * @param sentScan the scan of what is sent (a rewrite's, or the application's)
     * @param callSite where the application sent it, captured by a front end that does not run on its stack; null
     *                 to capture it here
     */
    public void beforeSend(Plan p, String original, ScanResult sentScan, Situation where, Throwable callSite)
            throws SQLException {
        switch (p.action()) {
            case REFUSE:
                throw recorder().refuse(p.refusal(), original);
            case RECORD:
            case REWRITE:
                if (where.status() != Situation.TransactionStatus.FAILED && sentScan.hasSessionLevelCall()) {
                    recorder().record(sentScan, original, where, LockPolicy.rewrites(settings),
                            LockPolicy.emulates(settings) && !emulates(), callSite);
                }
                return;
            case ON_SERVER:
                emulation.ranOnServer(where.statementRunsInTransaction());
                return;
            default:
                return;
        }
    }

    /** emulate refuses a statement for {@code why} (worded, published, 0A000). */
    public SQLException refuse(String why, String sql) {
        return recorder().refuse(why, sql);
    }

    /**
     * What an owner's statement without advisory calls needs ({@link LockPolicy#ownerStep}); AS_IS when emulate
     * keeps nothing for this connection's owner.
     */
    public LockPolicy.OwnerStep ownerStep(LockPolicy.OwnerText text, boolean inTransaction) {
        if (!emulates()) {
            return LockPolicy.OwnerStep.AS_IS;
        }
        return LockPolicy.ownerStep(text, inTransaction, emulation.ownerHolds());
    }

    /**
     * Every statement of the connection must be looked at, whatever its text, while what it does matters to a leak
     * check or to emulate's state: calls recorded for the check, or a transaction kept in the lock table, under
     * transaction pooling (a transaction end sent as text must carry the check, or be followed in the table).
     *
     * @param assumesPooling transaction pooling unless known otherwise
     */
    public boolean watchesEveryStatement(boolean assumesPooling) {
        return !off && assumesPooling && (!calls.isEmpty() || (emulation != null && emulation.transactionPending()));
    }

    /**
     * True while this connection's owner holds emulated locks (a volatile read when none does): its commits are
     * fenced, its batches too ({@link LockPolicy#fencesBatch}).
     */
    public boolean ownerHolds() {
        return emulates() && emulation.ownerHolds();
    }

    /**
     * A text that ran inside a transaction and chained it (COMMIT or ROLLBACK AND CHAIN before its last statement):
     * that transaction ended there, so its transaction-level locks in the lock table go, as on PostgreSQL.
     */
    public void followChain(ScanResult scan) {
        if (scan != null && scan.chainsTransaction() && emulates()) {
            emulation.transactionEnded();
        }
    }

    /**
     * The connection's transaction is over on the server (an end of the front end's, or a statement of the
     * application that ended it there): the lock table lets go of its transaction-level locks, and under
     * transaction pooling the calls recorded in it are cleared (its server is no longer the connection's; with a
     * session of its own they stay for the check at the return). It may wait for the lock table's lock.
     *
     * @param pooling transaction pooling, as the front end assumes it now
     */
    public void transactionEnded(boolean pooling) {
        if (pooling) {
            calls.clear();
        }
        if (emulation != null) {
            emulation.transactionEnded();
        }
    }

    /**
     * Under transaction pooling the server's transaction ended in a way the front end could not follow with the leak
     * check (a COMMIT or ROLLBACK in the middle of a text, one sent as a prepared statement, a procedure's COMMIT):
     * its server is no longer the connection's, so a session lock taken in it may stay there. Said once per
     * connection and interval when calls were recorded in it (then forgotten: the next check cannot find them on
     * another server); never thrown.
     */
    public void transactionEndedUnchecked() {
        if (calls.isEmpty()) {
            return;
        }
        String message = "LockHygiene: " + id + " ended a transaction that called session-level advisory functions"
                + " in a way LockHygiene could not follow on the same server (a COMMIT or ROLLBACK that is not the last"
                + " statement of its text, or one sent as a prepared statement): the leak check could not run there,"
                + " so a session lock taken in it may stay on that server. End the transaction with its driver's"
                + " commit/rollback or a COMMIT of its own.";
        ReportLog.warn("missed-check", "transaction ends LockHygiene could not follow on their server", id, "{}",
                message);
        reporter.publish(EventType.CHECK_FAILED, null, null, null, null, message, null);
        calls.clear();
    }

    /**
     * Whether the leak check rides in the end of the open transaction, and why, in its report's words; null when it
     * is not due. Calls recorded in the transaction make it due under transaction pooling; otherwise the sample may
     * take the end ({@code lockhygiene.leakCheckSample}), or {@code leakCheck=always} does.
     *
     * @param pooling transaction pooling, as known now (a front end that has not asked yet assumes it)
     */
    public String checkAtTransactionEnd(boolean pooling) {
        boolean sampled = sampledNextEnd;
        sampledNextEnd = false;
        if (off) {
            return null;
        }
        boolean tracked = !calls.isEmpty();
        if (!sampled && !tracked && endSample != null && pooling) {
            sampled = endSample.next(); // an explicit transaction's end nothing else makes due
        }
        if (!LockPolicy.checkDue(LockPolicy.CheckPoint.TRANSACTION_END, settings.leakCheck(), tracked, pooling, sampled)) {
            return null;
        }
        return tracked ? "(checked because this transaction called session-level advisory functions)"
                : sampled ? "(found by a sampled check: lockhygiene.leakCheckSample=" + settings.leakCheckSample() + ")"
                : "(checked at every transaction end: lockhygiene.leakCheck=always)";
    }

    /**
     * Counts one autocommit statement for the sample ({@code lockhygiene.leakCheckSample}); true when its turn came.
     * The front end takes the turn when the statement ends a transaction of its own under transaction pooling and
     * may run inside one (then it runs in a transaction of ours and {@link #sampleNextEnd} marks its COMMIT);
     * otherwise the turn passes and the next gap is drawn. One field test when not sampling (the hot path).
     */
    public boolean autocommitSampleTurn() {
        return autocommitSample != null && autocommitSample.next();
    }

    /** The next transaction end (the COMMIT of our wrapping of a sampled autocommit statement) carries the check. */
    public void sampleNextEnd() {
        sampledNextEnd = true;
    }

    /**
     * The leak check that rode in a transaction end found {@code held} (released by the same text): reported with
     * the call that took each, and the recorded calls cleared (the transaction is over).
     *
     * @param why {@link #checkAtTransactionEnd}'s words
     * @param recent the connection's last statements, for a lock no recorded call explains; null when not kept
     */
    public void checkedAtTransactionEnd(List<HeldLock> held, String command, String why, RecentStatements recent) {
        reporter.report(held, calls, "at " + command + " under transaction pooling " + why, recent);
        calls.clear();
    }

    /**
     * At a connection's return or close, with no transaction pooler in between: session locks it still holds were
     * never unlocked, and the check is due when it called session-level functions (or {@code leakCheck=always}).
     */
    public boolean checkDueAtReturn() {
        return !off && LockPolicy.checkDue(LockPolicy.CheckPoint.RETURN, settings.leakCheck(), !calls.isEmpty(), false);
    }

    /** The check at a return or close found {@code held} (released by the same text): reported, calls cleared. */
    public void checkedAtReturn(List<HeldLock> held, String when, RecentStatements recent) {
        reporter.report(held, calls, when, recent);
        calls.clear();
    }
}
