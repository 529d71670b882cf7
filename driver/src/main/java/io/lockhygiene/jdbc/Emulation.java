package io.lockhygiene.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.emulate.AdvisoryKey;
import io.lockhygiene.events.EventType;
import io.lockhygiene.leak.Attribution;
import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.leak.LockCall;
import io.lockhygiene.leak.RecentCalls;
import io.lockhygiene.log.Log;
import io.lockhygiene.policy.Decision;
import io.lockhygiene.policy.Situation;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.sql.AdvisoryCall;
import io.lockhygiene.sql.AdvisoryFunction;
import io.lockhygiene.sql.LockStatement;
import io.lockhygiene.sql.ScanResult;
import io.lockhygiene.sql.TransactionControl;

/**
 * What {@code lockhygiene.mode=emulate} adds to one application connection: its lock holder, where the
 * open transaction's advisory calls run (its venue), the locks to move to the holder at the transaction's
 * end, the holder's view of the application's savepoints and errors, and the loss of the holder. The
 * connection guard asks it; in other modes it is inert (no holder).
 */
final class Emulation {
    private final Connection raw;
    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    /** Runs session-level calls; null in other modes or without a way to open it. */
    private final LockHolder holder;
    /** Calls that ran on the holder, for attribution at close. */
    private final RecentCalls emulatedCalls = new RecentCalls();
    /** Calls that ran inside the application's own transaction, whose locks move to the holder. */
    private final RecentCalls adoptable = new RecentCalls();
    /** Where the open application transaction's advisory calls run; null before its first one. */
    private Situation.Venue transactionVenue;
    /** The holder lost its server while holding locks; the next statement fails (set by the watchdog). */
    private volatile boolean lockLost;
    /** The process's lock holder for this connection's endpoint: lock statements are decided in its table. */
    private final SharedHolder shared;
    /** Owners are threads (a pool lends this connection to any thread), not the connection. */
    private final boolean threadOwners;
    private final LockOwner connectionOwner;
    /** The open transaction's token in the lock table, once it took a transaction-level lock there. */
    private Object tableTransaction;
    /** The open transaction counts as one that uses the shared holder as its venue (see SharedHolder#venueStarted). */
    private boolean venueCounted;
    private boolean closed;
    /** The application's savepoints since then (names from text, or JDBC Savepoint objects), innermost last. */
    private final List<Object> tableSavepoints = new ArrayList<>();

    Emulation(Connection raw, Settings settings, String id, LeakReporter reporter, HolderFactory holderFactory) {
        this.raw = raw;
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
        boolean on = settings.mode() == Settings.Mode.EMULATE && holderFactory != null;
        this.holder = on ? new LockHolder(holderFactory, id, settings.lockTimeoutMillis(), this::holderLost) : null;
        this.shared = on ? SharedHolder.of(holderFactory) : null;
        this.threadOwners = on && holderFactory.threadOwners();
        this.connectionOwner = on && !threadOwners ? LockOwner.ofConnection(id, reporter) : null;
        if (connectionOwner != null) {
            shared.userOpened();
        }
    }

    /** emulate with a way to open a holder. */
    boolean available() {
        return holder != null;
    }

    /** emulate on connections a pool lends to any thread: locks belong to threads. */
    boolean threadOwners() {
        return threadOwners;
    }

    /** Who holds the locks this connection's statements take now. */
    private LockOwner owner() {
        return threadOwners ? shared.threadOwner(reporter) : connectionOwner;
    }

    boolean holderHolding() {
        return holder != null && (holder.isHolding() || shared.holdsSessionLocks(owner()));
    }

    /**
     * One execution of a lock statement, decided call by call in the process's lock table, as PostgreSQL
     * would for this connection's session: the answer is the row PostgreSQL would have returned, with its
     * warnings. Returns null, having done nothing, when a key cannot be known here (a bind type PostgreSQL
     * would treat otherwise, or NULL): the statement then runs as it is.
     */
    LocalResult runTable(LockStatement statement, ScanResult scan, String sql, Object[] binds, Statement appStatement,
                         boolean inTransaction) throws SQLException {
        List<LockStatement.Item> items = statement.items();
        AdvisoryKey[] keys = new AdvisoryKey[items.size()];
        for (int i = 0; i < keys.length; i++) {
            if (items.get(i).function() != AdvisoryFunction.UNLOCK_ALL) {
                keys[i] = LockKeys.resolve(items.get(i), binds);
                if (keys[i] == null) {
                    return null;
                }
            }
        }
        LockOwner owner = owner();
        if (statement.hasSessionLevelCall()) {
            Throwable stack = CallSite.capture("session-level advisory lock call sent here");
            for (AdvisoryCall c : scan.calls()) {
                if (c.function().isSessionLevel()) {
                    LockCall call = new LockCall(c.function(), sql, c.argumentText(sql), stack);
                    owner.calls.add(call);
                    UnlockWatch.taken(call);
                }
            }
            reporter.publish(EventType.EMULATED, scan.firstSessionCall().function().sqlName(), null, null, sql,
                    "decided in the lock table of " + shared + " for " + owner, stack);
        }
        int timeout = appStatement.getQueryTimeout();
        long deadline = timeout > 0 ? System.nanoTime() + timeout * 1_000_000_000L : 0;
        String[] labels = new String[keys.length];
        int[] types = new int[keys.length];
        byte[][] row = new byte[keys.length][];
        SQLWarning warnings = null;
        Object autocommitTransaction = null;
        try {
            for (int i = 0; i < keys.length; i++) {
                LockStatement.Item item = items.get(i);
                AdvisoryFunction f = item.function();
                labels[i] = item.label();
                types[i] = f.isTry() || f.kind() == AdvisoryFunction.Kind.RELEASE ? BOOL : VOID;
                boolean answer = true;
                switch (f.kind()) {
                    case ACQUIRE:
                        Object tx = null;
                        int level = 0;
                        if (!f.isSessionLevel()) {
                            if (!inTransaction) {
                                autocommitTransaction = autocommitTransaction == null ? new Object() : autocommitTransaction;
                                tx = autocommitTransaction; // its own transaction: released at the statement's end
                            } else {
                                if (tableTransaction == null) {
                                    tableTransaction = new Object();
                                    tableSavepoints.clear();
                                }
                                tx = tableTransaction;
                                level = tableSavepoints.size();
                            }
                        }
                        answer = shared.acquire(owner, keys[i], f.isShared(), f.isTry(), tx, level,
                                settings.lockTimeoutMillis(), deadline);
                        break;
                    case RELEASE:
                        answer = shared.unlock(owner, keys[i], f.isShared());
                        if (!answer) {
                            SQLWarning w = new SQLWarning("you don't own a lock of type "
                                    + (f.isShared() ? "ShareLock" : "ExclusiveLock"), "01000");
                            if (warnings == null) {
                                warnings = w;
                            } else {
                                warnings.setNextWarning(w);
                            }
                        }
                        break;
                    default:
                        shared.unlockAll(owner);
                        break;
                }
                row[i] = types[i] == VOID ? EMPTY : (answer ? TRUE : FALSE);
            }
        } catch (SQLException | RuntimeException appFailure) {
            if (inTransaction) {
                failApplicationTransaction(appFailure);
            }
            throw appFailure;
        } finally {
            if (autocommitTransaction != null) {
                shared.releaseTransaction(autocommitTransaction, 0);
            }
        }
        LocalResult result = LocalResult.row(appStatement, Pgjdbc.driverResultSet(appStatement, labels, types, row),
                warnings);
        UnlockWatch.check(result, scan, sql, reporter, settings);
        return result;
    }

    private static final int BOOL = 16;
    private static final int VOID = 2278;
    private static final byte[] TRUE = {'t'};
    private static final byte[] FALSE = {'f'};
    private static final byte[] EMPTY = {};

    /** Where the next statement's advisory calls run (see {@link Situation.Venue}). */
    Situation.Venue venue(Situation.TransactionStatus status, boolean autoCommit) {
        Situation.Venue venue = transactionVenue;
        if (venue == null || (status == Situation.TransactionStatus.IDLE && autoCommit)) {
            venue = holderHolding() ? Situation.Venue.HOLDER : Situation.Venue.UNDECIDED;
        }
        return venue;
    }

    /** True while the open transaction has emulation state that its end must settle. */
    boolean transactionPending() {
        return !adoptable.isEmpty() || transactionVenue != null || tableTransaction != null;
    }

    /** True when locks taken on the application's server may have to move to the holder at the end. */
    boolean hasAdoptable() {
        return !adoptable.isEmpty();
    }

    /** The last {@code n} calls recorded ran on the application's own server: their locks may move. */
    void adoptable(RecentCalls calls, int n) {
        adoptable.addLast(calls, n);
    }

    /** Remembers a call that ran on the holder, for attribution. */
    void ranOnHolder(LockCall call) {
        emulatedCalls.add(call);
    }

    /**
     * At the transaction's end (its listing just read): locks this connection took on its own server move
     * to the holder; returns the ones to report (inherited, not ours).
     */
    List<HeldLock> moveToHolder(List<HeldLock> held, String command) {
        if (adoptable.isEmpty()) {
            return held;
        }
        List<HeldLock> notOurs = adoptByHolder(held, command);
        adoptable.clear();
        return notOurs;
    }

    /** The transaction ended without a listing (a failed end, a plain commit): nothing is left to move. */
    void forgetAdoptable() {
        adoptable.clear();
    }

    /** The server says no transaction is open any more (in autocommit): the venue is settled. */
    void transactionGoneOnServer() {
        if (transactionVenue != null) {
            applicationTransactionEnded();
        }
    }

    /** Throws the loss of the holder once, on the statement after it. */
    void throwIfLockLost() throws SQLException {
        if (lockLost) {
            throw lockLostException();
        }
        if (shared != null && shared.lossSeen() && owner().takeLost()) {
            venueGone();
            tableTransaction = null;
            throw lockLost(owner().toString());
        }
    }

    /** Application close (for good) or a pool's return: the holder lets go of everything, reported. */
    void letGo(boolean forGood) {
        if (holder == null) {
            return;
        }
        List<HeldLock> held = forGood ? holder.close() : holder.release();
        if (!held.isEmpty()) {
            reporter.report(held, emulatedCalls, "by the lock holder when the application connection closed");
        }
        emulatedCalls.clear();
        tableTransaction = null;
        boolean first = forGood && closed();
        venueGone();
        if (connectionOwner != null) {
            // a connection's locks end with it, or with its return to a pool (a pooled thread's stay with the thread)
            List<HeldLock> owned = shared.releaseOwner(connectionOwner, forGood);
            if (!owned.isEmpty()) {
                reporter.reportOwnerGone(owned, connectionOwner.calls, "connection " + id
                        + (forGood ? " (closed)" : " (returned to its pool)"));
            }
            connectionOwner.calls.clear();
            if (first) {
                shared.userClosed(); // the last one lets the holder's idle connection go
            }
        }
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
        venueGone();
        lockLost = true;
    }

    /** Thrown once, on the next statement after the loss; the connection is usable again after it. */
    SQLException lockLostException() {
        lockLost = false;
        return lockLost(id);
    }

    private static SQLException lockLost(String owner) {
        return new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder of " + owner + " lost its"
                + " server connection; the advisory locks it held for it are gone. Take them again.", "08006");
    }

    /** emulate: the first advisory call of an application transaction fixes where the rest run. */
    void noteVenue(Situation where, Decision d) {
        if (holder != null && transactionVenue == null && where.statementRunsInTransaction()) {
            transactionVenue = d == Decision.EMULATE ? Situation.Venue.HOLDER : Situation.Venue.APPLICATION;
            if (transactionVenue == Situation.Venue.HOLDER) {
                countVenue();
            }
        }
    }

    /** The holder stays pinned until this transaction ends; never counted after close (a racing statement). */
    private synchronized void countVenue() {
        if (!venueCounted && !closed) {
            venueCounted = true;
            shared.venueStarted();
        }
    }

    /** The transaction's venue is forgotten (its end, a loss, a close). */
    private void venueGone() {
        transactionVenue = null;
        uncountVenue();
    }

    private synchronized void uncountVenue() {
        if (venueCounted) {
            venueCounted = false;
            shared.venueEnded();
        }
    }

    /** Closed or aborted: a statement racing it counts nothing any more. */
    /** Marks it closed; true the first time. */
    private synchronized boolean closed() {
        boolean first = !closed;
        closed = true;
        return first;
    }

    /** The application's transaction ended (any way): its xact locks on the holder go, its venue is forgotten. */
    void applicationTransactionEnded() {
        if (tableTransaction != null) {
            Object tx = tableTransaction;
            tableTransaction = null;
            tableSavepoints.clear();
            try {
                shared.releaseTransaction(tx, 0);
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks of its transaction", e);
            }
        }
        if (holder != null) {
            try {
                holder.endApplicationTransaction();
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while releasing the transaction-level locks its lock holder took for it", e);
            }
        }
        venueGone();
    }

    /**
     * The application's statement failed. If that aborted its transaction, PostgreSQL has released the
     * locks of the innermost (sub)transaction already (at the error, not at the ROLLBACK that follows): so
     * do the xact locks its lock holder took for it there. Never masks the application's exception.
     */
    void afterFailure(Exception appFailure) {
        if ((transactionVenue != Situation.Venue.HOLDER && tableTransaction == null) || holder == null) {
            return;
        }
        try {
            if (Pgjdbc.transactionStatus(raw) == Situation.TransactionStatus.FAILED) {
                if (tableTransaction != null) {
                    shared.releaseTransaction(tableTransaction, tableSavepoints.size());
                }
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
        if ((transactionVenue != Situation.Venue.HOLDER && tableTransaction == null) || scan == null) {
            return;
        }
        for (TransactionControl tc : scan.transactionControls()) {
            TransactionControl.Kind k = tc.kind();
            if (k == TransactionControl.Kind.SAVEPOINT || k == TransactionControl.Kind.ROLLBACK_TO
                    || k == TransactionControl.Kind.RELEASE) {
                followSavepoint(k, "text:" + savepointName(tc.textIn(sql)));
            }
        }
    }

    /** emulate: one savepoint command of the application (a name from text, or a JDBC Savepoint). */
    void followSavepoint(TransactionControl.Kind kind, Object savepoint) {
        if ((transactionVenue != Situation.Venue.HOLDER && tableTransaction == null) || holder == null) {
            return;
        }
        try {
            if (tableTransaction != null) {
                followInTable(kind, savepoint);
            }
            holder.applicationSavepoint(kind, savepoint);
        } catch (SQLException | RuntimeException e) {
            reporter.checkFailed("while following a savepoint of the application on its lock holder", e);
        }
    }

    /**
     * The table's view of the application's savepoints: a transaction-level lock is taken at the depth of
     * savepoints set since the table's transaction began; rolling back to one releases the locks taken at
     * its depth or deeper (one set before the table's transaction: all of them); releasing one merges
     * them into the enclosing depth.
     */
    private void followInTable(TransactionControl.Kind kind, Object savepoint) throws SQLException {
        int i = tableSavepoints.lastIndexOf(savepoint);
        switch (kind) {
            case SAVEPOINT:
                tableSavepoints.add(savepoint);
                break;
            case ROLLBACK_TO:
                shared.releaseTransaction(tableTransaction, i + 1);
                tableSavepoints.subList(i + 1, tableSavepoints.size()).clear();
                break;
            case RELEASE:
                if (i >= 0) {
                    shared.mergeTransactionLevel(tableTransaction, i + 1);
                    tableSavepoints.subList(i, tableSavepoints.size()).clear();
                }
                break;
            default:
                break;
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

    /** The holder's connection, for preparing emulated statements on it. */
    Connection holderConnection() throws SQLException {
        return holder.connection();
    }

    /** Runs an emulated execution on the holder and records it. */
    <R> R runOnHolder(ScanResult scan, String sql, Statement executedOn, boolean inTransaction,
                      LockHolder.HolderCall<R> call) throws SQLException {
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
                LockOwner owner = owner();
                AdvisoryKey key = lock.isBigintKey() ? AdvisoryKey.bigint(lock.bigintKey())
                        : AdvisoryKey.pair(lock.firstIntKey(), lock.secondIntKey());
                for (int i = 0; i < lock.count(); i++) { // as often as the application's session had stacked it
                    shared.acquire(owner, key, lock.isShared(), false, null, 0, settings.lockTimeoutMillis(), 0);
                }
                owner.calls.add(taker); // the holder holds it for that call now: attribute it there
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

    /** Application abort: the holder goes too, its locks with it. */
    void onAbort(java.util.concurrent.Executor executor) {
        if (holder != null) {
            holder.abort(executor);
        }
        tableTransaction = null;
        boolean first = closed();
        venueGone();
        if (connectionOwner != null) {
            shared.releaseOwner(connectionOwner, true);
            if (first) {
                shared.userClosed();
            }
        }
    }
}
