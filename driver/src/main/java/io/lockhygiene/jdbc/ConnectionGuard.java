package io.lockhygiene.jdbc;

import io.lockhygiene.log.Log;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.Events;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.leak.Attribution;
import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.leak.LeakCheckSql;
import io.lockhygiene.leak.LockCall;
import io.lockhygiene.policy.Decision;
import io.lockhygiene.policy.LockPolicy;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.sql.AdvisoryCall;
import io.lockhygiene.sql.ScanResult;
import io.lockhygiene.sql.SqlRewriter;

/**
 * Everything LockHygiene does for one application connection: the per-statement decision, the
 * transaction wrapping of autocommit lock calls, the leak check at transaction end and at return, and
 * the reports. The JDBC wrappers only route calls here.
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
    /** Calls seen since the last leak check, for attribution; non-empty means "touched advisory locks". */
    private final List<LockCall> calls = new ArrayList<>(2);
    private Boolean transactionPooling; // resolved lazily: null until first needed
    /** emulate only: runs session-level calls; null in other modes or without a way to open it. */
    private final LockHolder holder;
    /** Calls that ran on the holder, for attribution at close. */
    private final List<LockCall> emulatedCalls = new ArrayList<>(2);
    /** emulate: calls that ran inside the application's own transaction, whose locks move to the holder. */
    private final List<LockCall> adoptable = new ArrayList<>(2);

    ConnectionGuard(Connection raw, Settings settings, HolderFactory holderFactory) {
        this.raw = raw;
        this.settings = settings;
        this.id = "lh-" + IDS.incrementAndGet();
        this.off = settings.mode() == Settings.Mode.OFF;
        this.alwaysCheck = !off && settings.leakCheck() == Settings.LeakCheck.ALWAYS;
        this.holder = settings.mode() == Settings.Mode.EMULATE && holderFactory != null
                ? new LockHolder(holderFactory, id, settings.lockTimeoutMillis()) : null;
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
        return off || (!io.lockhygiene.sql.SqlScanner.mightMatter(sql) && !checksEveryStatement());
    }

    /** leakCheck=always in autocommit under transaction pooling: every statement ends a transaction. */
    boolean checksEveryStatement() throws SQLException {
        return alwaysCheck && raw.getAutoCommit() && transactionPooling();
    }

    /** Plans a prepare*(sql): rejects, rewrites, or marks the executions that must be recorded. */
    StatementPlan plan(String sql) throws SQLException {
        if (off || !io.lockhygiene.sql.SqlScanner.mightMatter(sql)) {
            return StatementPlan.unflagged(sql);
        }
        ScanResult scan = scan(sql);
        if (emulates(scan)) {
            return new StatementPlan(sql, sql, java.util.Collections.emptyList(), scan);
        }
        if (!scan.hasSessionLevelCall() && !scan.hasSkipLocked()) {
            return StatementPlan.unflagged(sql);
        }
        String sent = textToSend(sql, scan);
        if (sent != sql || !scan.hasSessionLevelCall()) {
            return new StatementPlan(sql, sent, java.util.Collections.emptyList());
        }
        return new StatementPlan(sql, sent, java.util.Collections.singletonList(new Flagged(scan, sql)));
    }

    /** The verdict for a statement's text: reject, rewrite or pass; called when the prefilter hit. */
    private ScanResult scan(String sql) {
        return ScanCache.scan(sql);
    }

    /**
     * For Statement.execute*(sql) and addBatch(sql) now, and for prepare*(sql) at prepare time: throws
     * for REJECT, returns the text to send (rewritten for REWRITE).
     */
    private String textToSend(String sql, ScanResult scan) throws SQLException {
        if (scan.hasSkipLocked() && settings.skipLocked() != Settings.SkipLocked.OFF) {
            checkSkipLocked(sql);
        }
        if (!scan.hasSessionLevelCall()) {
            return sql;
        }
        boolean txPool = transactionPooling();
        Decision d = LockPolicy.decide(scan, txPool, raw.getAutoCommit(), settings.mode());
        if (d == Decision.REJECT) {
            throw reject(sql, scan);
        }
        if (d == Decision.REWRITE) {
            String rewritten = SqlRewriter.toTransactionScoped(sql, scan);
            if (WARNINGS.allow("rw:" + sql)) {
                Log.info("LockHygiene rewrote session-level advisory calls to transaction-scoped ones (lockhygiene.mode=rewrite,"
                        + " transaction pooling): the locks now end with this transaction, and unlocks inside it are"
                        + " no-ops that return true. Was: {} Now: {}", settings.loggable(sql), settings.loggable(rewritten));
            }
            publish(EventType.REWRITTEN, scan.firstSessionCall().function().sqlName(), null, null, sql,
                    "rewritten to " + settings.loggable(rewritten), null);
            return rewritten;
        }
        return sql;
    }

    /** The SKIP LOCKED single-key trap: WARN (rate-limited) or, in strict, reject before sending. */
    private void checkSkipLocked(String sql) throws SQLException {
        io.lockhygiene.lint.SkipLockedLint.Verdict v = io.lockhygiene.lint.SkipLockedLint.check(sql, raw);
        if (!v.singleKey()) {
            return;
        }
        String message = "FOR UPDATE ... SKIP LOCKED pinned to one row of " + v.table() + " by its unique key "
                + v.key() + ": when that row is merely locked by another transaction this returns no row, and the"
                + " caller reads \"no such job\". SKIP LOCKED is for claiming any of many rows. Fix: wait with plain"
                + " FOR UPDATE, or use NOWAIT and handle the lock_not_available error (SQLState 55P03).";
        publish(EventType.SKIP_LOCKED_SINGLE_KEY, null, null, null, sql, message, null);
        if (settings.skipLocked() == Settings.SkipLocked.STRICT) {
            publish(EventType.REJECTED, null, null, null, sql, message, null);
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
     * functions, or that must be checked under leakCheck=always: records the calls, warns, and wraps
     * autocommit executions under transaction pooling in a transaction whose end carries the leak check.
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
        for (Flagged f : flagged) {
            session |= f.scan.hasSessionLevelCall();
        }
        if (!session && !alwaysCheck) {
            return call.run(sent);
        }
        boolean autoCommit = raw.getAutoCommit();
        boolean txPool = transactionPooling();
        for (Flagged f : flagged) {
            if (f.scan.hasSessionLevelCall()) {
                record(f.scan, f.original, txPool, autoCommit);
            }
        }
        if (txPool && autoCommit && settings.leakCheck() != Settings.LeakCheck.NEVER) {
            return runWrapped(appStatement, sent, call);
        }
        return call.run(sent);
    }

    /** emulate under transaction pooling, and a statement the holder can run (one statement, no writes). */
    boolean emulates(ScanResult scan) throws SQLException {
        return holder != null && LockPolicy.canEmulate(scan) && transactionPooling() && !adoptsInTransaction();
    }

    /**
     * Inside a transaction the application already holds a server for, while the holder holds nothing, a
     * session-level call runs on the application's own backend, exactly as PostgreSQL would: it needs no
     * second server (so transactions that wait for a lock cannot starve the pool of the servers the
     * holders need), and lock and unlock in one transaction stay there. A lock still held when that
     * transaction ends is moved to the holder (see endTransaction).
     */
    private boolean adoptsInTransaction() throws SQLException {
        return !holder.isHolding() && Pgjdbc.inTransaction(raw);
    }

    /** The holder's connection, for preparing emulated statements on it. */
    Connection holderConnection() throws SQLException {
        return holder.connection();
    }

    /** Runs an emulated execution on the holder and records it. */
    <R> R runOnHolder(ScanResult scan, String sql, LockHolder.HolderCall<R> call) throws SQLException {
        Throwable stack = CallSite.capture("session-level advisory lock call sent here");
        for (AdvisoryCall c : scan.calls()) {
            if (c.function().isSessionLevel()) {
                emulatedCalls.add(new LockCall(c.function(), sql, c.argumentText(sql), stack));
            }
        }
        if (emulatedCalls.size() > 64) {
            emulatedCalls.subList(0, emulatedCalls.size() - 64).clear(); // attribution needs the recent ones only
        }
        publish(EventType.EMULATED, scan.firstSessionCall().function().sqlName(), null, null, sql,
                "ran on the lock holder of " + id, stack);
        return holder.run(scan, call);
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
            if (Attribution.takerOf(lock, adoptable) == null) {
                notOurs.add(lock);
                continue;
            }
            try {
                holder.adopt(lock);
                Log.warn("LockHygiene: {} still held session advisory lock {} ({}) at {} of the transaction that took it;"
                        + " the lock holder took it over (between release and re-acquisition another client could take"
                        + " the key). Take such locks outside the transaction, or release them before it ends.",
                        id, lock.key(), lock.mode(), command);
            } catch (SQLException | RuntimeException e) {
                checkFailed("while moving lock " + lock.key() + " to the lock holder", e);
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
                List<LockCall> saved = new ArrayList<>(calls);
                calls.clear();
                calls.addAll(emulatedCalls);
                report(held, "by the lock holder when the application connection closed");
                calls.clear();
                calls.addAll(saved);
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

    private void record(ScanResult scan, String sql, boolean txPool, boolean autoCommit) {
        Throwable stack = null;
        for (AdvisoryCall c : scan.calls()) {
            if (!c.function().isSessionLevel()) {
                continue;
            }
            if (stack == null) {
                stack = CallSite.capture("session-level advisory lock call sent here");
            }
            calls.add(new LockCall(c.function(), sql, c.argumentText(sql), stack));
        }
        if (!txPool || stack == null) {
            return; // session pooling or direct: session locks are legitimate
        }
        AdvisoryCall first = scan.firstSessionCall();
        String fix;
        if (settings.mode() == Settings.Mode.EMULATE) {
            fix = holder == null
                    ? " It cannot be emulated: this connection has no way to open a lock holder (it was not opened by the"
                    + " LockHygiene driver or DataSource)."
                    : " It cannot be emulated: the statement also changes data, locks rows or session state, or holds"
                    + " several statements, so it cannot move to the lock holder; it runs as in detect. Take the lock"
                    + " in a statement of its own.";
        } else if (settings.mode() == Settings.Mode.REWRITE && autoCommit) {
            fix = " In autocommit it cannot be rewritten (an xact lock would end with the statement): mutual exclusion"
                    + " is lost. lockhygiene.mode=emulate keeps it; or take the lock inside a transaction.";
        } else {
            fix = " Use pg_advisory_xact_lock inside a transaction, or lockhygiene.mode=rewrite / emulate.";
        }
        String message = "session-level " + first.function().sqlName() + " under transaction pooling at "
                + CallSite.describe(stack) + ": the lock cannot outlive "
                + (autoCommit ? "this autocommit statement" : "this transaction")
                + "; LockHygiene releases it at transaction end so no other client inherits it." + fix;
        if (holder != null && LockPolicy.canEmulate(scan)) {
            // emulate, inside the application's own transaction: legitimate, and handled at its end
            adoptable.addAll(calls.subList(calls.size() - countSessionCalls(scan), calls.size()));
            Log.debug("LockHygiene: {} ran {} inside its own transaction; a lock still held at its end moves to the"
                    + " lock holder", id, first.function().sqlName());
            return;
        }
        if (WARNINGS.allow("d:" + sql)) {
            Log.warn("LockHygiene: {} SQL: {}", message, settings.loggable(sql));
        }
        publish(EventType.SESSION_LOCK_CALL, first.function().sqlName(), null, null, sql, message, stack);
    }

    private static int countSessionCalls(ScanResult scan) {
        int n = 0;
        for (AdvisoryCall c : scan.calls()) {
            n += c.function().isSessionLevel() ? 1 : 0;
        }
        return n;
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
                endTransaction("ROLLBACK");
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
            endTransaction("COMMIT");
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
        endTransaction("COMMIT");
    }

    /** Connection.rollback(): plain, or with the leak check piggybacked. */
    void rollback() throws SQLException {
        endTransaction("ROLLBACK");
    }

    private boolean checkAtTransactionEnd() throws SQLException {
        if (off || settings.leakCheck() == Settings.LeakCheck.NEVER) {
            return false;
        }
        if (settings.leakCheck() == Settings.LeakCheck.TRACKED && calls.isEmpty()) {
            return false;
        }
        return transactionPooling();
    }

    /** COMMIT or ROLLBACK, with the leak check in the same round trip when it is due. */
    private void endTransaction(String command) throws SQLException {
        if (!checkAtTransactionEnd() || !Pgjdbc.inTransaction(raw)) {
            if ("COMMIT".equals(command)) {
                raw.commit();
            } else {
                raw.rollback();
            }
            if (transactionPooling != null && transactionPooling) {
                calls.clear();
                adoptable.clear();
            }
            return;
        }
        List<HeldLock> held;
        try (Statement s = raw.createStatement()) {
            // A failure here is the COMMIT's own (serialization, deferred constraint, lost connection):
            // exactly what the application's commit() would have thrown, so it propagates as is.
            held = readHeldLocks(s, s.execute(LeakCheckSql.atTransactionEnd(command)));
        } catch (SQLException | RuntimeException e) {
            calls.clear(); // the transaction is over either way
            adoptable.clear();
            throw e;
        }
        if (!adoptable.isEmpty()) {
            held = adoptByHolder(held, command);
            adoptable.clear();
        }
        report(held, "at " + command + " under transaction pooling");
        calls.clear();
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
                held = readHeldLocks(s, s.execute(LeakCheckSql.atReturn(raw.getAutoCommit())));
            }
            report(held, "when the connection was returned");
        } catch (SQLException | RuntimeException e) {
            checkFailed("at return", e);
        } finally {
            calls.clear();
        }
    }

    void checkFailed(String when, Exception e) {
        String message = "LockHygiene could not check " + id + " for leaked advisory locks " + when + ": " + e;
        Log.warn(message);
        publish(EventType.CHECK_FAILED, null, null, null, null, message, null);
    }

    /** Walks the piggyback's results ([COMMIT], LIST, RELEASE, [COMMIT]) to the five-column listing. */
    private static List<HeldLock> readHeldLocks(Statement s, boolean isResultSet) throws SQLException {
        List<HeldLock> held = new ArrayList<>();
        while (isResultSet || s.getUpdateCount() != -1) {
            if (isResultSet) {
                try (ResultSet rs = s.getResultSet()) {
                    if (rs.getMetaData().getColumnCount() == 5) {
                        while (rs.next()) {
                            held.add(new HeldLock(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getString(4),
                                    rs.getInt(5)));
                        }
                        return held;
                    }
                }
            }
            isResultSet = s.getMoreResults();
        }
        return held;
    }

    private void report(List<HeldLock> held, String when) {
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, calls);
            if (taker != null) {
                String message = "released leaked session advisory lock " + lock.key() + " (" + lock.mode()
                        + ") held by backend " + lock.backendPid() + " " + when + ". It was taken by "
                        + taker.function().sqlName() + " at " + CallSite.describe(taker.takenAt())
                        + " and never unlocked on that backend; the next client of this server would have inherited it."
                        + " Fix: pg_advisory_xact_lock inside a transaction, or lockhygiene.mode=emulate.";
                Log.error("LockHygiene: {} SQL: {}", message, settings.loggable(taker.sql()), taker.takenAt());
                publish(EventType.LEAK_RELEASED, taker.function().sqlName(), lock.key(), lock.mode(), taker.sql(),
                        message, taker.takenAt());
            } else {
                String message = "released inherited session advisory lock " + lock.key() + " (" + lock.mode()
                        + ") held by backend " + lock.backendPid() + " " + when + ": this connection never took it,"
                        + " so another client of the same server left it there (or a function or DO block took it)."
                        + " Find that client; LockHygiene in front of it reports where it takes the lock.";
                Log.error("LockHygiene: {}", message);
                publish(EventType.INHERITED_RELEASED, null, lock.key(), lock.mode(), null, message, null);
            }
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
        publish(EventType.REJECTED, c.function().sqlName(), null, null, sql, message, CallSite.capture("rejected here"));
        return new SQLException(message, "0A000");
    }

    private void publish(EventType type, String function, String key, String mode, String sql, String message,
                         Throwable stack) {
        Events.publish(new LockHygieneEvent(type, id, function, key, mode, sql == null ? null : settings.loggable(sql),
                message, stack));
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

}
