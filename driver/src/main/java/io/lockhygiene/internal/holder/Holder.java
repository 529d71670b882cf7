package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.emulate.EmulateMessages;
import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.ServerLock;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.log.Log;

/**
 * emulate's lock holder: one per process and database, whatever the number of connections, owners, key
 * shapes and locks. Its backends hold, as real session locks, each key in the modes some owner of this
 * process holds, so other processes see PostgreSQL's exclusion; owners of this process are decided in its
 * table ({@link Arbiter}) exactly as PostgreSQL decides sessions, and wait in the JVM for each other.
 *
 * <p>A request the table cannot grant alone goes to the server: tries of all owners share one round trip
 * of the main connection; a blocking call that another process makes wait waits in PostgreSQL's own queue
 * on a waiting connection of its own (dedicated endpoints), bounded by lockTimeout, the query timeout and
 * a cancel, and checked for deadlocks with the other process once a second after the first; through the
 * application's pooler it polls instead, holding nothing in between.
 *
 * <p>Lock order, outermost first: the main connection's {@code io} ({@link MainLink#io}), a waiting
 * connection's {@code io} ({@link Waiter#io}), the table's {@code state} (inside {@link Arbiter}); the
 * watchdog's own lock is never held while it calls a holder. No round trip runs under {@code state}, and no
 * listener or log of an event runs under any of them: events are published after the locks are let go.
 */
public final class Holder {
    private static final long LOCAL_RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long DEADLOCK_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A round trip through the pooler longer than this while unpinned waited for a server: said once. */
    private static final long STARVED_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final HolderEndpoint endpoint;
    private final Arbiter arbiter = new Arbiter();
    private final MainLink main;
    /** Dedicated endpoints only. */
    private final Waiters waiters;
    private final KeyCache keys = new KeyCache();
    private final ConcurrentLinkedQueue<Take> takes = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> pendingEvents = new ConcurrentLinkedQueue<>();
    private final Set<ServerWait> serverWaits = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Map<Thread, LockOwner> threadOwners = Collections.synchronizedMap(new WeakHashMap<>());
    private final AtomicInteger users = new AtomicInteger();
    private final AtomicBoolean starvationTold = new AtomicBoolean();
    private final HolderWatchdog.Watched watch = this::watchdogRound;
    /** The owner whose own statement meets a loss now: it gets pgjdbc's exception, not the later notice. */
    private final ThreadLocal<LockOwner> current = new ThreadLocal<>();
    /** Set at the first loss that told owners: from then on, statements ask their owner. */
    private volatile boolean anyLost;

    Holder(HolderEndpoint endpoint) {
        this.endpoint = endpoint;
        this.main = new MainLink(endpoint);
        this.waiters = endpoint.dedicated() ? new Waiters(endpoint) : null;
    }

    public HolderEndpoint endpoint() {
        return endpoint;
    }

    /** Values of immutable key expressions on this database. */
    public KeyCache keys() {
        return keys;
    }

    /** False until some owner was told of a loss: the hot path reads one volatile field. */
    public boolean lossSeen() {
        return anyLost;
    }

    /** The pooled owner of the calling thread. */
    public LockOwner threadOwner(LeakReporter reporter) {
        LockOwner o = threadOwners.computeIfAbsent(Thread.currentThread(), t -> LockOwner.ofThread(t, reporter));
        o.usedBy(reporter);
        return o;
    }

    /**
     * Takes {@code key} for {@code owner} as PostgreSQL would for a session: at once when nothing conflicts
     * (here or in another process); otherwise false for a try, or waits within {@code limits}.
     *
     * @param tx null for a session-level lock, else the transaction a transaction-level lock belongs to
     * @param level the savepoint depth of a transaction-level lock
     * @throws SQLException 40P01 (deadlock), 55P03 (lock timeout), 57014 (cancel, query timeout), 08xxx (lost)
     */
    public boolean acquire(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                           Limits limits) throws SQLException {
        boolean queued = false;
        Waits.Wait wait = null;
        long backoff = TimeUnit.MILLISECONDS.toNanos(2);
        current.set(owner);
        try {
            while (true) {
                if (owner.isClosed()) {
                    throw new SQLException(EmulateMessages.CLOSED, "08003");
                }
                Arbiter.Answer a = arbiter.request(owner, key, shared, tryLock, tx, level, queued, waiters != null);
                switch (a.verdict) {
                    case GRANTED:
                        return true;
                    case REFUSED:
                        return false;
                    case DEADLOCK:
                        throw deadlock(owner, key, String.valueOf(a.other));
                    case WAIT:
                        queued = true;
                        Object blocker = a.other;
                        wait = track(wait, owner, key, shared, Waits.Where.LOCAL, () -> String.valueOf(blocker), 0);
                        awaitTable(limits, LOCAL_RECHECK_NANOS);
                        continue;
                    default:
                        break;
                }
                if (!tryLock) {
                    queued = true; // the table queued it (see Arbiter.request)
                }
                Object home = a.other;
                Boolean took;
                if (a.queueCheckOnly) {
                    took = queueCheck(owner, key, tx, level);
                } else if (home instanceof Waiter) {
                    took = takeOnWaiter((Waiter) home, owner, key, shared, tx, level, queued);
                } else {
                    took = takeOnMain(owner, key, shared, tryLock, tx, level, queued);
                }
                if (took == null) {
                    continue;
                }
                if (took) {
                    queued = false; // granted, and left the queue
                    watchNow();
                    return true;
                }
                if (tryLock) {
                    return false; // another process holds it, or waits for it ahead of us
                }
                if (!queued) {
                    queued = true;
                    arbiter.enqueueForServer(owner, key, shared);
                }
                if (waiters != null && (home == null || a.queueCheckOnly)) {
                    wait = track(wait, owner, key, shared, Waits.Where.SERVER, null, 0);
                    Boolean granted = serverWait(owner, key, shared, tx, level, limits, wait, a.queueCheckOnly);
                    if (granted != null) {
                        queued = false;
                        watchNow();
                        return true;
                    }
                    continue;
                }
                // through the pooler (or an upgrade on the key's own backend): poll, holding nothing meanwhile
                wait = track(wait, owner, key, shared, Waits.Where.POLLED, null, 0);
                awaitTable(limits, backoff);
                backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(50));
            }
        } finally {
            current.remove();
            if (queued) {
                arbiter.leaveQueue(owner, key);
            }
            Waits.end(wait);
            limits.whileWaiting(null);
            settleQuietly(owner);
        }
    }

    private Waits.Wait track(Waits.Wait wait, LockOwner owner, AdvisoryKey key, boolean shared, Waits.Where where,
                             java.util.function.Supplier<String> holder, int pid) {
        if (wait == null) {
            return Waits.begin(owner.toString(), key, shared, where, holder);
        }
        wait.moved(where, holder, pid);
        return wait;
    }

    private void awaitTable(Limits limits, long capNanos) throws SQLException {
        long nanos = limits.remainingNanos(capNanos);
        limits.whileWaiting(arbiter::wakeAll);
        try {
            arbiter.awaitChange(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Limits.cancelledException();
        } finally {
            limits.whileWaiting(null);
        }
        limits.remainingNanos(0); // a cancel or a limit that came while waiting ends it now
    }

    private static SQLException deadlock(LockOwner owner, AdvisoryKey key, String other) {
        return new SQLException(EmulateMessages.deadlockHere(owner, key, other), "40P01");
    }

    /**
     * Whether {@code owner} would get {@code key} now, taken and let go at once: Kill Bill's
     * {@code CASE WHEN pg_try_advisory_lock(k) THEN pg_advisory_unlock(k) ELSE FALSE END}. Decided in the
     * table when it can; otherwise one round trip that takes and releases the key in the same statement,
     * where PostgreSQL's session would take it in one and release it in the next.
     */
    public boolean probeFree(LockOwner owner, AdvisoryKey key, boolean shared) throws SQLException {
        current.set(owner);
        try {
            while (true) {
                Arbiter.Answer a = arbiter.request(owner, key, shared, true, null, 0, false, waiters != null);
                switch (a.verdict) {
                    case GRANTED:
                        arbiter.unlock(owner, key, shared);
                        return true;
                    case REFUSED:
                        return false;
                    default:
                        break;
                }
                Boolean free;
                if (a.queueCheckOnly) {
                    free = queueCheck(owner, key, null, 0);
                    if (Boolean.TRUE.equals(free)) {
                        arbiter.unlock(owner, key, shared);
                    }
                } else if (a.other instanceof Waiter) {
                    free = takeOnWaiter((Waiter) a.other, owner, key, shared, null, 0, false);
                    if (Boolean.TRUE.equals(free)) {
                        arbiter.unlock(owner, key, shared);
                    }
                } else {
                    Take take = new Take(owner, key, shared, true, null, 0, false);
                    take.probe = true;
                    free = queueAndFlush(take);
                }
                if (free != null) {
                    return free;
                }
            }
        } finally {
            current.remove();
            settleQuietly(owner);
        }
    }

    /** Queues a try on the main connection and sends it with everything else due, in one round trip. */
    private Boolean takeOnMain(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                               boolean queued) throws SQLException {
        return queueAndFlush(new Take(owner, key, shared, tryLock, tx, level, queued));
    }

    /**
     * Queues {@code take} and sends it with everything else due on the main connection, in one round trip.
     * The main connection is opened first, outside every lock of ours.
     */
    private Boolean queueAndFlush(Take take) throws SQLException {
        if (!main.isOpen()) {
            long start = System.nanoTime();
            main.open(); // through the application's pooler its first statement waits for a server too
            if (main.pins() && System.nanoTime() - start > STARVED_NANOS) {
                toldStarved(System.nanoTime() - start);
            }
        }
        takes.add(take);
        main.io.lock();
        try {
            if (!take.done) {
                flush();
            }
        } finally {
            main.io.unlock();
            publishPending();
        }
        if (take.failure != null) {
            throw take.failure;
        }
        return take.result;
    }

    /**
     * A mode of a key whose other mode lives on a waiting connection: taken on that same session (one
     * session per key, as PostgreSQL's own session would hold both), as a try; a blocking call polls.
     */
    private Boolean takeOnWaiter(Waiter w, LockOwner owner, AdvisoryKey key, boolean shared, Object tx, int level,
                                 boolean queued) throws SQLException {
        String[] row;
        w.io.lock();
        try {
            if (w.isClosed()) {
                return null;
            }
            row = w.query("SELECT pg_catalog." + (shared ? "pg_try_advisory_lock_shared(" : "pg_try_advisory_lock(")
                    + key.sqlArguments() + ")::text", 1);
        } catch (SQLException e) {
            throw lost(e, Collections.emptyList());
        } finally {
            w.io.unlock();
            publishPending();
        }
        if (!"true".equals(row[0])) {
            return false;
        }
        if (!arbiter.serverTook(owner, key, shared, w, tx, level, queued)) {
            settleQuietly(owner);
            return null;
        }
        return true;
    }

    /**
     * The server holds the shared mode already, for other owners; PostgreSQL would still refuse a new
     * session's shared request while another process waits in its queue for the exclusive mode. Asked on a
     * connection that holds nothing of the key: a try that lets go at once.
     */
    private Boolean queueCheck(LockOwner owner, AdvisoryKey key, Object tx, int level) throws SQLException {
        String[] row = null;
        for (int attempt = 0; row == null; attempt++) {
            Waiter w = waiters.borrow();
            try {
                w.io.lock();
                try {
                    row = w.query("SELECT (pg_catalog.pg_try_advisory_lock_shared(" + key.sqlArguments()
                            + ") AND pg_catalog.pg_advisory_unlock_shared(" + key.sqlArguments() + "))::text", 1);
                } finally {
                    w.io.unlock();
                }
            } catch (SQLException e) {
                w.close();
                if (attempt > 0 || !brokenConnection(e)) {
                    throw e; // an idle connection that died meanwhile is replaced once
                }
            } finally {
                waiters.giveBack(w, false);
            }
        }
        if (!"true".equals(row[0])) {
            return false;
        }
        return arbiter.grantShared(owner, key, tx, level) ? Boolean.TRUE : null;
    }

    /**
     * Waits in PostgreSQL's queue for {@code key} on a waiting connection: granted (TRUE, the key now lives
     * on that connection), decide again (null), or the server's own error (55P03 lock timeout, 57014 cancel
     * or query timeout), 40P01 when the watchdog found a deadlock with another process.
     *
     * @param turnOnly the server holds the mode for other owners already: wait for PostgreSQL to let the
     *                 request through its queue, and let go of it at once
     */
    private Boolean serverWait(LockOwner owner, AdvisoryKey key, boolean shared, Object tx, int level, Limits limits,
                               Waits.Wait wait, boolean turnOnly) throws SQLException {
        limits.remainingNanos(0);
        for (int attempt = 0; ; attempt++) {
            try {
                return serverWaitOn(waiters.borrow(), owner, key, shared, tx, level, limits, wait, turnOnly);
            } catch (SQLException e) {
                if (attempt > 0 || !(e instanceof StaleWaiter)) {
                    throw e;
                }
            }
        }
    }

    /** A waiting connection that was found dead when its wait began (it held nothing): another one is tried. */
    private static final class StaleWaiter extends SQLException {
        private static final long serialVersionUID = 1L;

        StaleWaiter(SQLException cause) {
            super(cause.getMessage(), cause.getSQLState(), cause);
        }
    }

    private Boolean serverWaitOn(Waiter w, LockOwner owner, AdvisoryKey key, boolean shared, Object tx, int level,
                                 Limits limits, Waits.Wait wait, boolean turnOnly) throws SQLException {
        long started = System.nanoTime();
        ServerWait sw = new ServerWait(owner, key, shared, w, wait, limits);
        boolean holds = false;
        serverWaits.add(sw);
        watchNow();
        try {
            wait.moved(Waits.Where.SERVER, null, w.backendPid());
            String f = shared ? "pg_advisory_lock_shared(" : "pg_advisory_lock(";
            String sql = "SET lock_timeout = " + limits.lockTimeoutLeftMillis() + "; SELECT pg_catalog." + f
                    + key.sqlArguments() + ")::text" + (turnOnly ? ", pg_catalog.pg_advisory_unlock_shared("
                    + key.sqlArguments() + ")" : "");
            limits.whileWaiting(w::cancel);
            limits.remainingNanos(0); // a cancel that came before the wait could be cancelled ends it now
            w.io.lock();
            try {
                w.link().await(sql, 1, limits.queryTimeoutLeftSeconds());
            } finally {
                w.io.unlock();
            }
            limits.whileWaiting(null);
            if (turnOnly) {
                return arbiter.grantShared(owner, key, tx, level) ? Boolean.TRUE : null;
            }
            holds = true;
            if (!arbiter.serverTook(owner, key, shared, w, tx, level, true)) {
                return null; // closed meanwhile: the lock goes in the settle below
            }
            return Boolean.TRUE;
        } catch (SQLException e) {
            if (sw.deadlock) {
                throw new SQLException(EmulateMessages.deadlockAcrossProcesses(owner, key, sw.cycleWith), "40P01", e);
            }
            if (limits.cancelled() || Thread.currentThread().isInterrupted()) {
                throw Limits.cancelledException();
            }
            String state = e.getSQLState();
            if ("55P03".equals(state)) {
                throw new SQLException(e.getMessage() + (limits.lockTimeoutMillis() > 0
                        ? EmulateMessages.lockTimeoutSuffix(limits.lockTimeoutMillis()) : ""), state, e);
            }
            if (state == null || !state.equals("57014")) {
                w.close(); // broken: it held nothing (it was waiting)
                if (brokenConnection(e) && System.nanoTime() - started < TimeUnit.SECONDS.toNanos(1)) {
                    throw new StaleWaiter(e);
                }
            }
            throw e;
        } finally {
            limits.whileWaiting(null);
            serverWaits.remove(sw);
            waiters.giveBack(w, holds && arbiter.backendHolds(w));
        }
    }

    /**
     * Under main.io: one round trip for everything due: the releases of server locks nobody needs, then
     * every queued try (one per key: a second on the same key decides again after this one), in one select
     * list, which PostgreSQL evaluates left to right. Releases of keys that live on waiting connections go
     * to those connections after it. A failure fails every try of the batch (their owners are not told
     * again later) and is the holder's loss.
     */
    private void flush() throws SQLException {
        for (int round = 0; round < 3; round++) {
            List<Take> batch = new ArrayList<>();
            Set<AdvisoryKey> batchKeys = new HashSet<>();
            for (Take t; (t = takes.poll()) != null; ) {
                if (t.owner.isClosed()) {
                    t.fail(new SQLException(EmulateMessages.CLOSED, "08003"));
                } else if (!batchKeys.add(t.key) || !arbiter.stillNeedsServer(t, main)) {
                    t.decideAgain();
                } else {
                    batch.add(t);
                }
            }
            List<ServerLock> surplus = arbiter.takeSurplus();
            List<ServerLock> onMain = new ArrayList<>();
            List<ServerLock> onWaiters = new ArrayList<>();
            for (ServerLock l : surplus) {
                (l.on instanceof Waiter ? onWaiters : onMain).add(l);
            }
            releaseOnWaiters(onWaiters); // first: a try in this batch may be for a key a waiting connection lets go of
            boolean refusedGrant = false;
            if (!batch.isEmpty() || !onMain.isEmpty()) {
                refusedGrant = sendOnMain(batch, onMain);
            } else if (main.pins() && main.pinned() && !arbiter.backendHolds(main)) {
                unpinQuietly();
            }
            if (!refusedGrant && !arbiter.surplusDue()) {
                return;
            }
        }
    }

    /** True when a server lock taken for an owner could not be granted (it is surplus now). */
    private boolean sendOnMain(List<Take> batch, List<ServerLock> releases) throws SQLException {
        StringBuilder list = new StringBuilder();
        int columns = 0;
        for (ServerLock l : releases) {
            list.append(columns++ == 0 ? "" : ", ").append(l.shared ? "pg_catalog.pg_advisory_unlock_shared("
                    : "pg_catalog.pg_advisory_unlock(").append(l.key.sqlArguments()).append(")::text");
        }
        for (Take t : batch) {
            if (t.probe) {
                String m = t.shared ? "_shared(" : "(";
                list.append(columns++ == 0 ? "" : ", ").append("(pg_catalog.pg_try_advisory_lock").append(m)
                        .append(t.key.sqlArguments()).append(") AND pg_catalog.pg_advisory_unlock").append(m)
                        .append(t.key.sqlArguments()).append("))::text");
                continue;
            }
            list.append(columns++ == 0 ? "" : ", ").append(t.grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared("
                    : t.shared ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(")
                    .append(t.key.sqlArguments()).append(")::text");
        }
        if (main.pins() && main.pinned() && batch.isEmpty() && !arbiter.backendHolds(main)) {
            unpinQuietly(); // the last releases: everything goes, and the pooled server with it
            return false;
        }
        String[] answers;
        long start = System.nanoTime();
        boolean neededServer = main.pins() && !main.pinned();
        boolean nothingToLose = releases.isEmpty() && !arbiter.backendHolds(main);
        boolean usedBefore = main.answered();
        try {
            answers = main.select(list.toString(), columns);
        } catch (SQLException | RuntimeException e) {
            if (!nothingToLose || !usedBefore || !brokenConnection(e)) {
                throw lost(e, batch);
            }
            // an idle main connection that died meanwhile (a restart, a terminated backend): it held nothing, so
            // nothing is lost; its takes decide again, and the next opens a fresh one (outside our locks)
            main.close();
            for (Take t : batch) {
                t.decideAgain();
            }
            return false;
        }
        if (neededServer && System.nanoTime() - start > STARVED_NANOS) {
            toldStarved(System.nanoTime() - start);
        }
        boolean refused = false;
        for (int i = 0; i < batch.size(); i++) {
            Take t = batch.get(i);
            boolean got = t.grantedAtOnce || "true".equals(answers[releases.size() + i]);
            if (t.probe) {
                t.result = got; // taken and let go in one statement: nothing to record
                t.done = true;
            } else if (!got) {
                t.result = Boolean.FALSE;
                t.done = true;
            } else if (arbiter.serverTook(t.owner, t.key, t.shared, main, t.tx, t.level, t.queued)) {
                t.result = Boolean.TRUE;
                t.done = true;
            } else if (t.owner.isClosed()) {
                refused = true;
                t.fail(new SQLException(EmulateMessages.CLOSED, "08003"));
            } else {
                refused = true;
                t.decideAgain();
            }
        }
        try {
            main.afterSelect(arbiter.backendHolds(main));
        } catch (SQLException | RuntimeException e) {
            throw lost(e, Collections.emptyList());
        }
        return refused;
    }

    /** A failure that means the connection is gone (class 08, an administrator's termination, closed). */
    static boolean brokenConnection(Exception e) {
        String state = e instanceof SQLException ? ((SQLException) e).getSQLState() : null;
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
                || state.equals("57P03"));
    }

    private void releaseOnWaiters(List<ServerLock> releases) throws SQLException {
        for (ServerLock l : releases) {
            Waiter w = (Waiter) l.on;
            w.io.lock();
            try {
                if (!w.isClosed()) {
                    w.query("SELECT pg_catalog." + (l.shared ? "pg_advisory_unlock_shared(" : "pg_advisory_unlock(")
                            + l.key.sqlArguments() + ")", 1);
                }
            } catch (SQLException | RuntimeException e) {
                throw lost(e, Collections.emptyList());
            } finally {
                w.io.unlock();
            }
            waiters.giveBack(w, arbiter.backendHolds(w));
        }
    }

    private void unpinQuietly() throws SQLException {
        try {
            main.unpin();
        } catch (SQLException | RuntimeException e) {
            throw lost(e, Collections.emptyList());
        }
    }

    private void toldStarved(long nanos) {
        if (!starvationTold.compareAndSet(false, true)) {
            return;
        }
        String message = EmulateMessages.holderStarved(endpoint, TimeUnit.NANOSECONDS.toMillis(nanos));
        pendingEvents.add(() -> {
            Log.warn("{}", message);
            io.lockhygiene.internal.events.Events.publish(new io.lockhygiene.events.LockHygieneEvent(
                    EventType.HOLDER_STARVED, String.valueOf(endpoint), null, null, null, null, message, null));
        });
    }

    /** pg_advisory_unlock[_shared] of one session-level hold; false when the owner holds none. */
    public boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) throws SQLException {
        boolean ok = arbiter.unlock(owner, key, shared);
        if (ok) {
            settle(owner);
        }
        return ok;
    }

    /** pg_advisory_unlock_all for one owner. */
    public void unlockAll(LockOwner owner) throws SQLException {
        arbiter.unlockAll(owner);
        settle(owner);
    }

    /** The transaction-level holds of {@code tx} from savepoint depth {@code level} on go (end, rollback to, error). */
    public void releaseTransaction(Object tx, int level) throws SQLException {
        arbiter.releaseTransaction(tx, level);
        settle(null);
    }

    /** RELEASE SAVEPOINT at depth {@code level}: its holds belong to the enclosing level now. */
    public void mergeTransactionLevel(Object tx, int level) {
        arbiter.mergeTransactionLevel(tx, level);
    }

    public boolean holdsSessionLocks(LockOwner owner) {
        return arbiter.holdsSessionLocks(owner);
    }

    public boolean holdsAnything(LockOwner owner) {
        return arbiter.holdsAnything(owner);
    }

    /**
     * The owner is gone (its connection closed or returned, its thread ended): everything it held goes;
     * its session holds are returned for the report.
     *
     * @param forGood it takes nothing any more (a closed connection: a statement racing the close takes
     *                nothing after this)
     */
    public List<HeldLock> releaseOwner(LockOwner owner, boolean forGood) {
        List<HeldLock> held = arbiter.releaseOwner(owner, forGood);
        settleQuietly(owner);
        return held;
    }

    /** After releases: server locks nobody needs go, in one round trip, only when there is work. */
    void settle(LockOwner caller) throws SQLException {
        if (!arbiter.surplusDue() && !(main.pins() && arbiter.serverHoldsNothing() && main.isOpen())) {
            return;
        }
        main.io.lock();
        current.set(caller);
        try {
            flush();
        } finally {
            current.remove();
            main.io.unlock();
            publishPending();
        }
    }

    private void settleQuietly(LockOwner caller) {
        try {
            settle(caller);
        } catch (SQLException | RuntimeException e) {
            Log.debug("LockHygiene: the lock holder for {} lost its server while letting locks go: {}", endpoint,
                    e.toString());
        }
    }

    /**
     * Any failure of a holder statement ends all its server connections: a connection loss took the locks
     * with it already, and any other error is no state to go on from. Closing makes PostgreSQL (or the
     * pooler) release everything. Every owner that held a lock is told on its next statement (the batch's
     * owners and the caller get this failure now); events are published after the caller lets go of its
     * locks.
     */
    SQLException lost(Exception cause, List<Take> batch) {
        main.close();
        if (waiters != null) {
            waiters.closeAll();
        }
        for (ServerWait sw : serverWaits) {
            sw.waiter.cancel();
        }
        List<Object> owners = arbiter.clear();
        HolderWatchdog.forget(watch);
        LockOwner caller = current.get();
        if (!owners.isEmpty()) {
            String message = EmulateMessages.holderLost(endpoint, cause);
            anyLost = true;
            List<LeakReporter> told = new ArrayList<>();
            for (Object o : owners) {
                LockOwner owner = (LockOwner) o;
                if (owner != caller && !inBatch(owner, batch)) {
                    owner.markLost();
                }
                if (owner.reporter() != null) {
                    told.add(owner.reporter());
                }
            }
            pendingEvents.add(() -> {
                Log.error("{}", message);
                for (LeakReporter r : told) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            });
        }
        SQLException failure = cause instanceof SQLException ? (SQLException) cause : lostException(null, cause);
        for (Take t : batch) {
            t.fail(failure);
        }
        for (Take t; (t = takes.poll()) != null; ) {
            t.fail(failure);
        }
        return failure;
    }

    private static boolean inBatch(LockOwner owner, List<Take> batch) {
        for (Take t : batch) {
            if (t.owner == owner) {
                return true;
            }
        }
        return false;
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

    private void publishPending() {
        for (Runnable r; (r = pendingEvents.poll()) != null; ) {
            try {
                r.run();
            } catch (RuntimeException e) {
                Log.debug("LockHygiene: a listener failed: {}", e.toString());
            }
        }
    }

    private void watchNow() {
        HolderWatchdog.watch(watch);
    }

    /**
     * The watchdog's round (about once a second, while the holder holds anything or waits): the locks of
     * pooled threads that ended are released and reported; each wait in PostgreSQL's queue older than a
     * second is checked for a deadlock with another process and for an interrupt; the main connection is
     * pinged (bounded), so that a loss is noticed even while owners send nothing.
     *
     * @return false when there is nothing left to watch
     */
    boolean watchdogRound() {
        reapGoneThreads();
        for (ServerWait sw : serverWaits) {
            if (sw.thread.isInterrupted() || sw.limits.cancelled() || sw.deadlock) {
                sw.waiter.cancel(); // again: a cancel request that came before the statement started is lost
            } else if (sw.wait.waitedNanos() > DEADLOCK_TIMEOUT_NANOS) {
                DeadlockProbe.check(this, sw);
            }
        }
        boolean holds = !arbiter.serverHoldsNothing();
        if (holds && main.io.tryLock()) {
            try {
                if (main.isOpen() && !arbiter.serverHoldsNothing()) {
                    main.ping(HolderWatchdog.PING_TIMEOUT_MILLIS);
                }
            } catch (SQLException | RuntimeException e) {
                lost(e, Collections.emptyList()); // pgjdbc may have closed it already (a terminated backend)
            } finally {
                main.io.unlock();
                publishPending();
            }
        }
        return holds || !serverWaits.isEmpty() || !arbiter.owners().isEmpty();
    }

    /** Under no lock: a statement on the main connection for the deadlock probe; null when it is busy too long. */
    List<String[]> probe(String sql, int columns) {
        try {
            if (!main.io.tryLock(200, TimeUnit.MILLISECONDS)) {
                return null;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        try {
            if (!main.isOpen()) {
                return null;
            }
            return main.link().rows(sql, columns);
        } catch (SQLException | RuntimeException e) {
            Log.debug("LockHygiene: the deadlock probe of {} failed: {}", endpoint, e.toString());
            return null;
        } finally {
            main.io.unlock();
        }
    }

    /** The table's view for the deadlock probe. */
    Arbiter arbiter() {
        return arbiter;
    }

    private void reapGoneThreads() {
        for (Object o : arbiter.owners()) {
            LockOwner owner = (LockOwner) o;
            if (owner.isGone()) {
                List<HeldLock> held = releaseOwner(owner, true);
                LeakReporter r = owner.reporter();
                if (r != null && !held.isEmpty()) {
                    r.reportOwnerGone(held, owner.calls(), owner + " (it took them on a pooled connection and has ended)");
                }
                threadOwners.values().remove(owner);
            }
        }
    }

    /** An application connection (a connection owner) of this holder opened. */
    public void userOpened() {
        users.incrementAndGet();
    }

    /**
     * One closed (after its locks were released). With none left and nothing held, the holder's idle
     * connections are closed too; the next lock opens them again.
     */
    public void userClosed() {
        if (users.decrementAndGet() > 0 || !arbiter.serverHoldsNothing() || !serverWaits.isEmpty()) {
            return;
        }
        if (!main.io.tryLock()) {
            return; // in use: not idle
        }
        try {
            if (users.get() == 0 && arbiter.serverHoldsNothing() && serverWaits.isEmpty()) {
                main.close();
                if (waiters != null) {
                    waiters.closeAll();
                }
            }
        } finally {
            main.io.unlock();
        }
    }

    /** Closes every connection (tests, and the end of a holder nobody uses). */
    public void shutdown() {
        main.io.lock();
        try {
            main.close();
        } finally {
            main.io.unlock();
        }
        if (waiters != null) {
            waiters.closeAll();
        }
        HolderWatchdog.forget(watch);
    }

    @Override
    public String toString() {
        return "lock holder (" + endpoint + ")";
    }

    /** One owner's wait in PostgreSQL's queue, for the watchdog. */
    static final class ServerWait {
        final LockOwner owner;
        final AdvisoryKey key;
        final boolean shared;
        final Waiter waiter;
        final Waits.Wait wait;
        final Limits limits;
        final Thread thread = Thread.currentThread();
        volatile boolean deadlock;
        volatile String cycleWith;
        long lastProbeNanos;

        ServerWait(LockOwner owner, AdvisoryKey key, boolean shared, Waiter waiter, Waits.Wait wait, Limits limits) {
            this.owner = owner;
            this.key = key;
            this.shared = shared;
            this.waiter = waiter;
            this.wait = wait;
            this.limits = limits;
        }
    }
}
