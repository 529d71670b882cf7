package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.holder.MainSession.LockRequest;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.Answer;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.locktable.SessionHold;
import io.lockhygiene.internal.locktable.ThreadOwners;
import io.lockhygiene.internal.locktable.TransactionHolds;
import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.log.Log;

/**
 * emulate's lock holder: one per process and database, whatever the number of connections, owners, key
 * shapes and locks. Its sessions hold, as real session locks, each key in the modes some owner of this
 * process holds, so other processes see PostgreSQL's exclusion; owners of this process are decided in its
 * {@link LockTable} exactly as PostgreSQL decides sessions, and wait in the JVM for each other.
 *
 * <p>In two layers: the table (the model and its monitor), and the process side in three parts: the main
 * session's batches ({@link MainSession}), the waits in the server's queue ({@link ServerQueue}, dedicated
 * endpoints only) and the holder's life ({@link HolderLife}: loss, events, watchdog, users). This class
 * owns them all and decides, per call, which part goes next; they ask it, not each other, for what the others
 * hold (no part is wired to another after construction). The owner whose statement it is is passed down, never
 * carried.
 */
public final class Holder implements TransactionHolds {
    /**
     * How long a wait through the pooler sleeps between two looks at the server, at first and at most: another
     * process's lock sends no signal, and a transaction pooler gives no session that could wait in PostgreSQL's
     * queue, so the server is asked again after a back-off (a change of the table wakes it sooner).
     */
    private static final long POLL_FIRST_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long POLL_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final HolderEndpoint endpoint;
    private final LockTable table = new LockTable();
    private final HolderLife life;
    /**
     * Its main sessions ({@code lockhygiene.holderSessions}; one on the application's route, which it pins): a key
     * always lives on the same one ({@link #mainFor}), so its modes are never split across sessions.
     */
    private final MainSession[] mains;
    /** Dedicated endpoints only. */
    private final ServerQueue waits;
    private final KeyCache keys = new KeyCache();
    private final ThreadOwners threadOwners = new ThreadOwners();
    private final HolderStats stats = new HolderStats();

    Holder(HolderEndpoint endpoint) {
        this.endpoint = endpoint;
        int n = endpoint.mainSessions(); // 1 on the application's route
        HolderSession[] links = new HolderSession[n];
        for (int i = 0; i < n; i++) {
            links[i] = HolderSession.main(endpoint);
        }
        // the life's loss handling and watchdog ask this holder for its parts (never during construction)
        this.life = new HolderLife(endpoint, table, links, this);
        this.waits = endpoint.dedicated() ? new ServerQueue(endpoint, table, links, life) : null;
        this.mains = new MainSession[n];
        for (int i = 0; i < n; i++) {
            mains[i] = new MainSession(links[i], table, life, waits, stats);
        }
    }

    public HolderEndpoint endpoint() {
        return endpoint;
    }

    /** Values of immutable key expressions on this database. */
    public KeyCache keys() {
        return keys;
    }

    /** The main session's round trips, batches and waits so far. */
    public HolderStats.Snapshot stats() {
        return stats.snapshot();
    }

    /**
     * The process's lock table: an owner's hot path (its loss, whether it holds anything, its commit's seals)
     * asks the table directly.
     */
    public LockTable table() {
        return table;
    }

    /** The pooled owner of the calling thread. */
    public LockOwner threadOwner(LeakReporter reporter) {
        return threadOwners.current(reporter);
    }

    /**
     * Takes {@code key} for {@code owner} as PostgreSQL would for a session: at once when nothing conflicts
     * (here or in another process); otherwise false for a try, or waits within {@code limits}.
     *
     * @param tx null for a session-level lock, else the transaction a transaction-level lock belongs to
     * @param level the savepoint depth of a transaction-level lock
     * @throws SQLException 40P01 (deadlock), 55P03 (lock timeout), 57014 (cancel, query timeout), 08xxx (lost)
     */
    public boolean acquire(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, TransactionId tx, int level,
                           Limits limits) throws SQLException {
        boolean queued = false;
        EmulatedWait wait = null;
        long backoff = POLL_FIRST_NANOS;
        limits.beginAcquisition();
        life.used();
        try {
            while (true) {
                if (owner.isClosed()) {
                    throw new SQLException(EmulateMessages.CLOSED, "08003");
                }
                Answer a = table.request(owner, key, shared, tryLock, tx, level, queued, waits != null);
                switch (a.verdict) {
                    case GRANTED:
                        return true;
                    case REFUSED:
                        return false;
                    case DEADLOCK:
                        throw new SQLException(EmulateMessages.deadlockHere(owner, key, a.blocker), "40P01");
                    case WAIT:
                        queued = true;
                        LockOwner blocker = a.blocker;
                        wait = EmulatedWait.track(wait, owner.toString(), key, shared, EmulatedWait.Where.LOCAL,
                                () -> String.valueOf(blocker));
                        // until the table changes (a release, a grant, a loss, the owner's close, a cancel all
                        // signal it) or a bound of the session ends the wait; no timer looks again
                        awaitTable(limits, a.generation, Long.MAX_VALUE);
                        continue;
                    default:
                        break;
                }
                queued |= !tryLock; // a blocking request is in the key's queue now (see LockTable.request)
                LockRequest.Result took = a.queueCheckOnly ? waits.queueCheck(owner, key, tx, level)
                        : HolderSession.isWaitingSession(a.home)
                        ? waits.takeOn((HolderSession) a.home, owner, key, shared, tx, level, queued)
                        : mainFor(key).take(new LockRequest(owner, key, shared, tryLock, tx, level, queued, false));
                if (took == LockRequest.Result.DECIDE_AGAIN) {
                    settleQuietly(owner); // a server lock taken and not granted is surplus now
                    continue;
                }
                if (took == LockRequest.Result.GRANTED) {
                    queued = false; // granted, and left the queue
                    life.watchNow();
                    return true;
                }
                if (tryLock) {
                    return false; // another process holds it, or waits for it ahead of us
                }
                if (waits != null && (a.home == null || a.queueCheckOnly)) {
                    wait = EmulatedWait.track(wait, owner.toString(), key, shared, EmulatedWait.Where.SERVER, null);
                    if (waits.serverWait(owner, key, shared, tx, level, limits, wait, a.queueCheckOnly)
                            == LockRequest.Result.GRANTED) {
                        queued = false;
                        life.watchNow();
                        return true;
                    }
                    continue;
                }
                // through the pooler (or an upgrade on the key's own session): poll, holding nothing meanwhile
                wait = EmulatedWait.track(wait, owner.toString(), key, shared, EmulatedWait.Where.POLLED, null);
                awaitTable(limits, a.generation, backoff);
                backoff = Math.min(backoff * 2, POLL_MAX_NANOS);
            }
        } finally {
            if (queued) {
                table.leaveQueue(owner, key);
            }
            EmulatedWait.end(wait);
            limits.whileWaiting(null);
            settleQuietly(owner);
        }
    }

    /** Waits for a change of the table after {@code generation}, at most {@code capNanos} and the limits. */
    private void awaitTable(Limits limits, long generation, long capNanos) throws SQLException {
        limits.beginWait();
        long nanos = limits.remainingNanos(capNanos);
        limits.whileWaiting(table::wakeAll);
        try {
            table.awaitChange(generation, nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Limits.cancelledException();
        } finally {
            limits.whileWaiting(null);
        }
        limits.remainingNanos(0); // a cancel or a limit that came while waiting ends it now
    }

    /**
     * Whether {@code owner} would get {@code key} now, taken and let go at once: Kill Bill's
     * {@code CASE WHEN pg_try_advisory_lock(k) THEN pg_advisory_unlock(k) ELSE FALSE END}. Decided in the
     * table when it can; otherwise one round trip that takes and releases the key in the same statement,
     * where PostgreSQL's session would take it in one and release it in the next.
     */
    public boolean probeFree(LockOwner owner, AdvisoryKey key, boolean shared) throws SQLException {
        try {
            while (true) {
                Answer a = table.request(owner, key, shared, true, null, 0, false, waits != null);
                if (a.verdict == Answer.Verdict.GRANTED) {
                    table.unlock(owner, key, shared);
                    return true;
                }
                if (a.verdict == Answer.Verdict.REFUSED) {
                    return false;
                }
                LockRequest.Result free;
                if (a.queueCheckOnly || HolderSession.isWaitingSession(a.home)) {
                    free = a.queueCheckOnly ? waits.queueCheck(owner, key, null, 0)
                            : waits.takeOn((HolderSession) a.home, owner, key, shared, null, 0, false);
                    if (free == LockRequest.Result.GRANTED) {
                        table.unlock(owner, key, shared);
                    }
                } else {
                    free = mainFor(key).take(new LockRequest(owner, key, shared, true, null, 0, false, true));
                }
                if (free != LockRequest.Result.DECIDE_AGAIN) {
                    return free == LockRequest.Result.GRANTED;
                }
                settleQuietly(owner);
            }
        } finally {
            settleQuietly(owner);
        }
    }

    /** pg_advisory_unlock[_shared] of one session-level hold; false when the owner holds none. */
    public boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) throws SQLException {
        boolean ok = table.unlock(owner, key, shared);
        if (ok) {
            settleInFlight(key, owner); // done on the server when this returns, as PostgreSQL's
            life.used();
        }
        return ok;
    }

    /** pg_advisory_unlock_all for one owner (also what DISCARD ALL does to its locks). */
    public void unlockAll(LockOwner owner) throws SQLException {
        table.unlockAll(owner);
        settleInFlight(owner);
        life.used();
    }

    /** The transaction-level holds of {@code tx} from savepoint depth {@code level} on go (end, rollback to, error). */
    @Override
    public void releaseTransaction(TransactionId tx, int level) throws SQLException {
        table.releaseTransaction(tx, level);
        settleInFlight(null);
        life.used();
    }

    /** RELEASE SAVEPOINT at depth {@code level}: its holds belong to the enclosing level now. */
    @Override
    public void mergeTransactionLevel(TransactionId tx, int level) {
        table.mergeTransactionLevel(tx, level);
    }

    /** The keys {@code owner} holds, for a message. */
    public List<AdvisoryKey> keysOf(LockOwner owner) {
        return table.keysOf(owner);
    }

    /** A fenced commit found a seal free: the holder looks at its sessions now, and says the loss if so. */
    public void sessionSuspected(LockOwner caller) {
        life.checkNow(caller);
    }

    /**
     * The owner is gone (its connection closed or returned, its thread ended): everything it held goes, on
     * the server too before this returns; its session holds are returned for the report.
     *
     * @param forGood it takes nothing any more (a closed connection: a statement racing the close takes
     *                nothing after this)
     */
    public List<HeldLock> releaseOwner(LockOwner owner, boolean forGood) {
        // an owner that never held anything (most connections close so) starts no watch: the watchdog thread
        // and its linger are for holders that hold or held something
        boolean had = owner.holding(); // one volatile read: a close takes no table lock for this
        List<HeldLock> held = new ArrayList<>();
        for (SessionHold h : table.releaseOwner(owner, forGood)) {
            held.add(new HeldLock(h.key.classid(), h.key.objid(), h.key.objsubid(), h.shared ? "ShareLock"
                    : "ExclusiveLock", 0, h.count));
        }
        try {
            settleInFlight(owner); // a release another thread has on the wire is done when this returns
        } catch (SQLException | RuntimeException e) {
            Log.debug("LockHygiene: the lock holder for {} lost its server while letting locks go: {}", endpoint,
                    e.toString());
        }
        if (had || !held.isEmpty()) {
            life.used();
        }
        return held;
    }

    /**
     * After an acquire: a server lock taken for nobody (not granted, or a stray) goes, only when there is work;
     * a failure here is the holder's loss, which the owner learns of on its next statement.
     */
    private void settleQuietly(LockOwner caller) {
        try {
            settle(caller);
        } catch (SQLException | RuntimeException e) {
            Log.debug("LockHygiene: the lock holder for {} lost its server while letting locks go: {}", endpoint,
                    e.toString());
        }
    }

    /** The main session {@code key} lives on. */
    private MainSession mainFor(AdvisoryKey key) {
        return mains.length == 1 ? mains[0] : mains[key.spread(mains.length)];
    }

    /** After releases: server locks nobody needs go, each from its own session, only where there is work. */
    private void settle(LockOwner caller) throws SQLException {
        for (MainSession main : mains) {
            if (main.settleDue()) {
                main.settle(caller);
            }
        }
    }

    /**
     * Releases the application asked for (an unlock, the end of a transaction, an owner gone): they are sent,
     * and one that another thread's round trip took with it is answered, before this returns, as PostgreSQL's
     * release is done when its call returns. Surplus is taken under a session's turn, so "nothing due" and
     * then "not busy" means none of the caller's releases is in flight there.
     */
    private void settleInFlight(LockOwner owner) throws SQLException {
        for (MainSession main : mains) {
            settleInFlight(main, owner);
        }
    }

    /** The same for one key's release: only its own session can have it in flight. */
    private void settleInFlight(AdvisoryKey key, LockOwner owner) throws SQLException {
        MainSession home = mainFor(key);
        for (MainSession main : mains) {
            if (main == home) {
                settleInFlight(main, owner);
            } else if (main.settleDue()) {
                main.settle(owner); // a waiting session's release, which any main session sends
            }
        }
    }

    private static void settleInFlight(MainSession main, LockOwner owner) throws SQLException {
        if (main.isOpen() && (main.settleDue() || main.busy())) {
            main.settle(owner);
        }
    }

    /**
     * What an owner's statement gets when the holder lost its server: class 08, as pgjdbc's own connection
     * failures, so retry logic treats it as one.
     *
     * @param whose the owner told (on its next statement), or null for the statement that met the loss
     */
    public static SQLException lostException(String whose, Throwable cause) {
        return new SQLException(EmulateMessages.lockLost(whose), "08006", cause);
    }

    /** A loss: the requests queued on every main session fail with it (their threads return at once). */
    void failQueued(SQLException failure) {
        for (MainSession main : mains) {
            main.failQueued(failure);
        }
    }

    /** The waits in the server's queue; null for an endpoint through the application's pooler. */
    ServerQueue serverQueue() {
        return waits;
    }

    /** The locks of pooled threads that ended are released and reported (the watchdog's full round). */
    void reapGoneThreads() {
        for (LockOwner owner : table.owners()) {
            if (owner.isGone()) {
                List<HeldLock> held = releaseOwner(owner, true);
                LeakReporter r = owner.reporter();
                if (r != null && !held.isEmpty()) {
                    r.reportOwnerGone(held, owner.calls(), owner + " (it took them on a pooled connection and has ended)");
                }
                threadOwners.forget(owner);
            }
        }
    }

    /** An application connection (a connection owner) of this holder opened, or a DataSource placed it. */
    public void userOpened() {
        life.userOpened();
    }

    /** One closed (after its locks were released); the last one lets the holder's idle sessions go. */
    public void userClosed() {
        life.userClosed();
    }

    /** Closes every session (tests, and the end of a holder nobody uses). */
    public void shutdown() {
        life.shutdown();
    }

    @Override
    public String toString() {
        return "lock holder (" + endpoint + ")";
    }
}
