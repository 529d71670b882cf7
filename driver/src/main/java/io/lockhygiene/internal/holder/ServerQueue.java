package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.holder.MainSession.LockRequest;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.locktable.ServerLock;
import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.log.Log;

/**
 * A dedicated holder's waiting sessions at work: a blocking call that another process makes wait waits in
 * PostgreSQL's own queue on a session of its own (so queue order, refused tries and pg_locks are
 * PostgreSQL's), bounded by lockTimeout, the query timeout and a cancel; the key it gets stays on that
 * session until the process lets go of it. The watchdog looks at these waits: a deadlock with another
 * process (once a second after the first), an interrupt, and a session the server no longer has (a
 * half-open socket would otherwise wait forever).
 */
final class ServerQueue {
    private static final long DEADLOCK_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A wait older than this is checked each round for its session still being on the server. */
    private static final long LIVENESS_AFTER_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final WaitingSessions waiters;
    private final LockTable table;
    private final HolderSession[] mains;
    private final HolderLife life;
    private final Set<QueuedOwner> active = ConcurrentHashMap.newKeySet();

    ServerQueue(HolderEndpoint endpoint, LockTable table, HolderSession[] mains, HolderLife life) {
        this.waiters = new WaitingSessions(endpoint);
        this.table = table;
        this.mains = mains;
        this.life = life;
    }

    /** One owner's wait in PostgreSQL's queue, for the watchdog. */
    static final class QueuedOwner {
        final LockOwner owner;
        final AdvisoryKey key;
        final HolderSession waiter;
        final EmulatedWait wait;
        final Limits limits;
        final Thread thread = Thread.currentThread();
        volatile boolean deadlock;
        volatile String cycleWith;
        long lastProbeNanos;

        QueuedOwner(LockOwner owner, AdvisoryKey key, HolderSession waiter, EmulatedWait wait, Limits limits) {
            this.owner = owner;
            this.key = key;
            this.waiter = waiter;
            this.wait = wait;
            this.limits = limits;
        }
    }

    boolean anyWaiting() {
        return !active.isEmpty();
    }

    /**
     * A mode of a key whose other mode lives on a waiting session: taken on that same session (one session
     * per key, as PostgreSQL's own session would hold both), as a try.
     */
    LockRequest.Result takeOn(HolderSession w, LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level, boolean queued)
            throws SQLException {
        String[] row;
        try (SessionTurn turn = w.turn()) {
            try {
                if (w.isClosed()) {
                    return LockRequest.Result.DECIDE_AGAIN;
                }
                row = w.query("SELECT pg_catalog." + (shared ? "pg_try_advisory_lock_shared(" : "pg_try_advisory_lock(")
                        + key.sqlArguments() + ")::text", 1);
            } catch (SQLException e) {
                throw life.lost(e, new ArrayList<>(0), owner); // under the turn, as every loss found on a session
            }
        } finally {
            life.publishPending();
        }
        if (!"true".equals(row[0])) {
            return LockRequest.Result.REFUSED;
        }
        return table.serverTook(owner, key, shared, w, w.seal(), tx, level, queued) ? LockRequest.Result.GRANTED
                : LockRequest.Result.DECIDE_AGAIN;
    }

    /**
     * The server holds the shared mode already, for other owners; PostgreSQL would still refuse a new
     * session's shared request while another process waits in its queue for the exclusive mode. Asked on a
     * session that holds nothing of the key: a try that lets go at once.
     */
    LockRequest.Result queueCheck(LockOwner owner, AdvisoryKey key, TransactionId tx, int level) throws SQLException {
        String[] row = null;
        for (int attempt = 0; row == null; attempt++) {
            HolderSession w = waiters.borrow();
            try {
                try (SessionTurn turn = w.turn()) {
                    row = w.query("SELECT (pg_catalog.pg_try_advisory_lock_shared(" + key.sqlArguments()
                            + ") AND pg_catalog.pg_advisory_unlock_shared(" + key.sqlArguments() + "))::text", 1);
                }
            } catch (SQLException e) {
                w.close();
                if (attempt > 0 || !HolderLife.brokenConnection(e)) {
                    throw e; // an idle session that died meanwhile is replaced once
                }
            } finally {
                waiters.giveBack(w, false);
            }
        }
        if (!"true".equals(row[0])) {
            return LockRequest.Result.REFUSED;
        }
        return table.grantShared(owner, key, tx, level) ? LockRequest.Result.GRANTED : LockRequest.Result.DECIDE_AGAIN;
    }

    /**
     * Waits in PostgreSQL's queue for {@code key} on a waiting session: GRANTED (the key now lives on that
     * session), DECIDE_AGAIN, or the server's own error (55P03 lock timeout, 57014 cancel or query
     * timeout), 40P01 when the watchdog found a deadlock with another process.
     *
     * @param turnOnly the server holds the mode for other owners already: wait for PostgreSQL to let the
     *                 request through its queue, and let go of it at once
     */
    LockRequest.Result serverWait(LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level, Limits limits,
                       EmulatedWait wait, boolean turnOnly) throws SQLException {
        limits.beginWait();
        limits.remainingNanos(0);
        for (int attempt = 0; ; attempt++) {
            try {
                return serverWaitOn(waiters.borrow(), owner, key, shared, tx, level, limits, wait, turnOnly);
            } catch (StaleWaitingSession e) {
                if (attempt > 0) {
                    throw e;
                }
            }
        }
    }

    /** A waiting session that was found dead when its wait began (it held nothing): another one is tried. */
    private static final class StaleWaitingSession extends SQLException {
        private static final long serialVersionUID = 1L;

        StaleWaitingSession(SQLException cause) {
            super(cause.getMessage(), cause.getSQLState(), cause);
        }
    }

    private LockRequest.Result serverWaitOn(HolderSession w, LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level,
                                 Limits limits, EmulatedWait wait, boolean turnOnly) throws SQLException {
        long started = System.nanoTime();
        QueuedOwner sw = new QueuedOwner(owner, key, w, wait, limits);
        boolean holds = false;
        active.add(sw);
        life.watchNow();
        try {
            wait.moved(EmulatedWait.Where.SERVER, null, w.backendPid());
            String f = shared ? "pg_advisory_lock_shared(" : "pg_advisory_lock(";
            // the session's bounds as the server's own: lock_timeout for this wait, and what is left of the
            // statement's statement_timeout, set back to none in the same implicit transaction (a failed wait
            // rolls the SET back with it), so nothing else on this session runs under it
            long statementLeft = limits.statementTimeoutLeftMillis();
            String sql = "SET lock_timeout = " + limits.lockTimeoutLeftMillis() + "; "
                    + (statementLeft > 0 ? "SET statement_timeout = " + statementLeft + "; " : "")
                    + "SELECT pg_catalog." + f + key.sqlArguments() + ")::text"
                    + (turnOnly ? ", pg_catalog.pg_advisory_unlock_shared(" + key.sqlArguments() + ")" : "")
                    + (statementLeft > 0 ? "; SET statement_timeout = 0" : "");
            limits.whileWaiting(w::cancel);
            limits.remainingNanos(0); // a cancel that came before the wait could be cancelled ends it now
            try (SessionTurn turn = w.turn()) {
                w.link().await(sql, 1, limits.queryTimeoutLeftSeconds());
            }
            limits.whileWaiting(null);
            if (turnOnly) {
                return table.grantShared(owner, key, tx, level) ? LockRequest.Result.GRANTED : LockRequest.Result.DECIDE_AGAIN;
            }
            holds = true;
            if (!table.serverTook(owner, key, shared, w, w.seal(), tx, level, true)) {
                return LockRequest.Result.DECIDE_AGAIN; // closed meanwhile: the lock goes in the settle that follows
            }
            return LockRequest.Result.GRANTED;
        } catch (SQLException e) {
            if (sw.deadlock) {
                throw new SQLException(EmulateMessages.deadlockAcrossProcesses(owner, key, sw.cycleWith), "40P01", e);
            }
            if (limits.cancelled() || Thread.currentThread().isInterrupted()) {
                throw Limits.cancelledException();
            }
            String state = e.getSQLState();
            if ("55P03".equals(state)) {
                throw new SQLException(e.getMessage() + (limits.ourLockTimeoutFirst()
                        ? EmulateMessages.lockTimeoutSuffix(limits.lockTimeoutMillis()) : ""), state, e);
            }
            if (state == null || !state.equals("57014")) {
                w.close(); // broken: it held nothing (it was waiting)
                if (HolderLife.brokenConnection(e) && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(1)) {
                    throw new StaleWaitingSession(e);
                }
            }
            throw e;
        } finally {
            limits.whileWaiting(null);
            active.remove(sw);
            waiters.giveBack(w, holds && table.backendHolds(w));
        }
    }

    /** Releases of server locks nobody needs that live on waiting sessions (under the main session's io). */
    void release(List<ServerLock> releases, LockOwner caller) throws SQLException {
        for (ServerLock l : releases) {
            HolderSession w = (HolderSession) l.on;
            try (SessionTurn turn = w.turn()) {
                try {
                    if (!w.isClosed()) {
                        w.query("SELECT pg_catalog." + (l.shared ? "pg_advisory_unlock_shared(" : "pg_advisory_unlock(")
                                + l.key.sqlArguments() + ")", 1);
                    }
                } catch (SQLException | RuntimeException e) {
                    throw life.lost(e, new ArrayList<>(0), caller); // under the turn, as every loss found on a session
                }
            }
            waiters.giveBack(w, table.backendHolds(w));
        }
    }

    /**
     * The watchdog's checks of each wait in PostgreSQL's queue: an interrupt or a cancel is sent again (one
     * that came before the statement started is lost), a wait older than a second is checked for a deadlock
     * with another process, and one older than two for its session still being on the server: a session the
     * server has ended, or never answers about, is closed, so its wait ends.
     */
    void watchdogChecks(HolderLife owner) {
        for (QueuedOwner sw : active) {
            if (sw.thread.isInterrupted() || sw.limits.cancelled() || sw.deadlock) {
                sw.waiter.cancel();
                continue;
            }
            if (sw.wait.waitedNanos() > DEADLOCK_TIMEOUT_NANOS) {
                DeadlockProbe.check(this::probe, table, sw);
            }
            if (sw.wait.waitedNanos() > LIVENESS_AFTER_NANOS) {
                List<String[]> rows = probe("SELECT count(*)::text FROM pg_catalog.pg_stat_activity WHERE pid = "
                        + sw.waiter.backendPid(), 1);
                if (rows != null && !rows.isEmpty() && "0".equals(rows.get(0)[0])) {
                    Log.warn("LockHygiene: a waiting session of the lock holder (backend {}) is no longer on the"
                            + " server; its wait for advisory lock {} ends", sw.waiter.backendPid(), sw.key);
                    sw.waiter.close(); // its await ends with a connection error, which its owner gets
                }
            }
        }
    }

    /** Looks, without a round trip, at each waiting session that holds keys and is idle: a gone one is the loss. */
    void peekIdle(HolderLife owner) {
        for (HolderSession w : waiters.holdingKeys()) {
            SessionTurn turn = w.tryTurn();
            if (turn == null) {
                continue; // in use: that use finds out itself
            }
            try (turn) {
                try {
                    if (!w.isClosed()) {
                        w.peek();
                    }
                } catch (SQLException | RuntimeException e) {
                    life.lost(e, new ArrayList<>(0), null); // under the turn, as every loss found on a session
                    return;
                }
            }
        }
    }

    /** Under no lock: a statement on the main session for the watchdog; null when it is busy too long. */
    private List<String[]> probe(String sql, int columns) {
        for (HolderSession main : mains) {
            if (main.isOpen()) {
                return probe(main, sql, columns); // any open one: it reads pg_locks, which every session sees
            }
        }
        return null;
    }

    private static List<String[]> probe(HolderSession main, String sql, int columns) {
        SessionTurn turn;
        try {
            turn = main.tryTurn(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        if (turn == null) {
            return null;
        }
        try (turn) {
            if (!main.isOpen()) {
                return null;
            }
            return main.link().rows(sql, columns);
        } catch (SQLException | RuntimeException e) {
            Log.debug("LockHygiene: a watchdog probe failed: {}", e.toString());
            return null;
        }
    }

    /** True while a waiting session is open and idle (the holder's idle close looks). */
    boolean anyIdleSession() {
        return waiters.anyIdle();
    }

    /** The holder is idle: its idle waiting sessions close; one lent out (holding a key, or waiting) stays. */
    void closeIdle() {
        waiters.closeIdle();
    }

    /** The holder lost its server: every waiting session goes (their locks are gone anyway), waits end. */
    void closeAll() {
        for (QueuedOwner sw : active) {
            sw.waiter.cancel();
        }
        waiters.closeAll();
    }
}
