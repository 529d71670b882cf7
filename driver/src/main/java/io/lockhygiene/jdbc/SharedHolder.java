package io.lockhygiene.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.lockhygiene.emulate.AdvisoryKey;
import io.lockhygiene.emulate.LockTable;
import io.lockhygiene.events.EventType;
import io.lockhygiene.leak.HeldLock;
import io.lockhygiene.log.Log;

/**
 * emulate's lock holder: one per process and endpoint (database, user, pooler), whatever the number of
 * connections, owners and locks. Its backend holds, as real session locks, each key in the modes some
 * local owner holds, so other processes see PostgreSQL's exclusion; owners of this process are arbitrated
 * in its {@link LockTable} and wait in the JVM, never on a server. While it holds anything it keeps one
 * transaction open (that is what pins its one server behind a transaction pooler) and sends only
 * simple-protocol statements, so it never holds a snapshot: CREATE INDEX CONCURRENTLY and VACUUM do not
 * wait for it. When it holds nothing it commits, and its server goes back to the pool.
 *
 * <p>Every server statement is a try, or a shared request on a key the backend already holds
 * exclusively (granted at once): it never waits on the server while others wait for it. Waiting for
 * another process is polled with backoff, the mutex let go in between.
 */
final class SharedHolder {
    private static final Map<Object, SharedHolder> HOLDERS = new ConcurrentHashMap<>();
    /** Bounds every holder statement: a blackholed network must not hang the owners queued on the mutex. */
    private static final int NETWORK_TIMEOUT_MILLIS = 30_000;
    private static final long LOCAL_RECHECK_MILLIS = 50;
    private static final String KEEP_IDLE_TRANSACTION =
            ", pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    private final Object endpoint;
    private final HolderFactory factory;
    private final ReentrantLock mutex = new ReentrantLock();
    private final Condition released = mutex.newCondition();
    private final LockTable table = new LockTable();
    private final Map<Thread, LockOwner> threadOwners = Collections.synchronizedMap(new WeakHashMap<>());
    private final HolderWatchdog.Watched watch = this::checkAlive;
    /** Written under mutex; volatile for {@link #reserve}'s look without it. */
    private volatile Connection connection;
    /** True while the backend holds locks, inside the open transaction that pins its server. */
    private boolean pinned;
    /** Set at the first loss that told owners: from then on, statements ask their owner (see {@link #lossSeen}). */
    private volatile boolean anyLost;

    private SharedHolder(Object endpoint, HolderFactory factory) {
        this.endpoint = endpoint;
        this.factory = factory;
    }

    static SharedHolder of(HolderFactory factory) {
        return HOLDERS.computeIfAbsent(factory.endpoint(), e -> new SharedHolder(e, factory));
    }

    /** False until some owner was told of a loss: the hot path reads one volatile field. */
    boolean lossSeen() {
        return anyLost;
    }

    /** The pooled owner of the calling thread (see {@link LockOwner}). */
    LockOwner threadOwner(LeakReporter reporter) {
        Thread t = Thread.currentThread();
        LockOwner o = threadOwners.computeIfAbsent(t, th -> LockOwner.ofThread(th, reporter));
        o.reporter = reporter;
        return o;
    }

    /**
     * Takes {@code key} for {@code owner}, as PostgreSQL would for a session: at once when no other owner
     * (here or in another process) holds a conflicting mode; otherwise false for a try, or waits.
     *
     * @param tx null for a session-level lock, else the transaction a transaction-level lock belongs to
     * @param deadlineNanos the statement's query timeout as a System.nanoTime() deadline, or 0
     */
    boolean acquire(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level,
                    long lockTimeoutMillis, long deadlineNanos) throws SQLException {
        long start = System.nanoTime();
        long backoff = 2;
        mutex.lock();
        try {
            while (true) {
                Object blocker = table.blocker(owner, key, shared);
                if (blocker == null) {
                    if (!table.serverNeeds(key, shared) || serverTake(key, shared, !tryLock && shared
                            && table.serverHoldsExclusive(key))) {
                        table.grant(owner, key, shared, tx, level);
                        return true;
                    }
                    if (tryLock) {
                        return false; // another process holds it
                    }
                    awaitUntil(backoff, start, lockTimeoutMillis, deadlineNanos);
                    backoff = Math.min(backoff * 2, 50);
                    continue;
                }
                if (tryLock) {
                    return false;
                }
                if (table.startWaiting(owner, blocker)) {
                    throw new SQLException("deadlock detected (LockHygiene, lockhygiene.mode=emulate: " + owner
                            + " waits for advisory lock " + key + " held by " + blocker + ", which waits for it)",
                            "40P01");
                }
                try {
                    awaitUntil(LOCAL_RECHECK_MILLIS, start, lockTimeoutMillis, deadlineNanos);
                } finally {
                    table.stopWaiting(owner);
                }
            }
        } finally {
            mutex.unlock();
        }
    }

    /** Waits (mutex let go) for a release here or a retry, within the statement's limits. */
    private void awaitUntil(long millis, long start, long lockTimeoutMillis, long deadlineNanos) throws SQLException {
        long now = System.nanoTime();
        long wait = TimeUnit.MILLISECONDS.toNanos(millis);
        if (lockTimeoutMillis > 0) {
            long left = start + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis) - now;
            if (left <= 0) {
                throw new SQLException("canceling statement due to lock timeout (LockHygiene, lockhygiene.mode=emulate:"
                        + " advisory lock not available within lockhygiene.lockTimeout=" + lockTimeoutMillis + "ms)",
                        "55P03");
            }
            wait = Math.min(wait, left);
        }
        if (deadlineNanos != 0) {
            long left = deadlineNanos - now;
            if (left <= 0) {
                throw new SQLException("canceling statement due to user request", "57014");
            }
            wait = Math.min(wait, left);
        }
        try {
            released.awaitNanos(wait);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("canceling statement due to user request (interrupted while waiting for an"
                    + " advisory lock)", "57014", e);
        }
    }

    /** pg_advisory_unlock[_shared] of one session-level hold; false when the owner holds none. */
    boolean unlock(LockOwner owner, AdvisoryKey key, boolean shared) throws SQLException {
        mutex.lock();
        try {
            boolean ok = table.unlock(owner, key, shared);
            if (ok) {
                releasedSome();
            }
            return ok;
        } finally {
            mutex.unlock();
        }
    }

    /** pg_advisory_unlock_all for one owner. */
    void unlockAll(LockOwner owner) throws SQLException {
        mutex.lock();
        try {
            table.unlockAll(owner);
            releasedSome();
        } finally {
            mutex.unlock();
        }
    }

    /** The transaction-level holds of {@code tx} from savepoint depth {@code level} on go (end, rollback to, error). */
    void releaseTransaction(Object tx, int level) throws SQLException {
        mutex.lock();
        try {
            table.releaseTransaction(tx, level);
            releasedSome();
        } finally {
            mutex.unlock();
        }
    }

    /** RELEASE SAVEPOINT at depth {@code level}: its holds belong to the enclosing level now. */
    void mergeTransactionLevel(Object tx, int level) {
        mutex.lock();
        try {
            table.mergeTransactionLevel(tx, level);
        } finally {
            mutex.unlock();
        }
    }

    boolean holdsSessionLocks(LockOwner owner) {
        mutex.lock();
        try {
            return table.holdsSessionLocks(owner);
        } finally {
            mutex.unlock();
        }
    }

    /** The owner is gone (connection closed): everything it held goes; its session locks are returned for the report. */
    List<HeldLock> releaseOwner(LockOwner owner) {
        mutex.lock();
        try {
            List<HeldLock> held = new ArrayList<>();
            for (LockTable.SessionHold h : table.releaseOwner(owner)) {
                held.add(new HeldLock(h.key.classid(), h.key.objid(), h.key.objsubid(),
                        h.shared ? "ShareLock" : "ExclusiveLock", 0, h.count));
            }
            try {
                releasedSome();
            } catch (SQLException e) {
                Log.debug("LockHygiene: the lock holder lost its server while releasing the locks of {}: {}", owner,
                        e.toString());
            }
            return held;
        } finally {
            mutex.unlock();
        }
    }

    /** After releases: server locks nobody needs go, and with nothing left the server goes back to the pool. */
    private void releasedSome() throws SQLException {
        released.signalAll();
        List<LockTable.ServerLock> surplus = table.surplus();
        if (surplus.isEmpty() || connection == null) {
            return;
        }
        String sql;
        boolean nothingLeft = table.serverHoldsNothing();
        if (nothingLeft) {
            // everything goes, whatever the backend holds, and the transaction that pinned its server ends
            sql = "SELECT pg_catalog.pg_advisory_unlock_all(); COMMIT";
        } else {
            StringBuilder b = new StringBuilder("SELECT ");
            for (int i = 0; i < surplus.size(); i++) {
                LockTable.ServerLock l = surplus.get(i);
                b.append(i == 0 ? "" : ", ").append(l.shared ? "pg_catalog.pg_advisory_unlock_shared("
                        : "pg_catalog.pg_advisory_unlock(").append(l.key.sqlArguments()).append(')');
            }
            sql = b.toString();
        }
        runOnServer(sql);
        if (nothingLeft) {
            unpinned();
        }
    }

    /** Takes one mode on the server, with a try (or, see the class comment, a request granted at once). */
    private boolean serverTake(AdvisoryKey key, boolean shared, boolean grantedAtOnce) throws SQLException {
        String function = grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared("
                : shared ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(";
        boolean wasPinned = pinned;
        String sql = "SELECT " + function + key.sqlArguments() + ")::text" + (wasPinned ? "" : KEEP_IDLE_TRANSACTION);
        String answer = queryOnServer(sql);
        boolean got = grantedAtOnce || "true".equals(answer);
        if (got) {
            table.serverTook(key, shared);
            if (!wasPinned) {
                pinned = true;
                HolderWatchdog.watch(watch);
            }
        } else if (!wasPinned) {
            runOnServer("COMMIT"); // holds nothing: let the server go while waiting
        }
        return got;
    }

    private void unpinned() {
        pinned = false;
        HolderWatchdog.forget(watch);
    }

    /**
     * Opens the holder's connection now, if it is not open. A holder that borrows from the application's
     * own pool must have its connection before the application's threads hold the pool's connections while
     * they wait for the holder: the DataSource wrapper reserves it before each borrow (cheap once open), and
     * keeps it for the life of the process.
     */
    void reserve() throws SQLException {
        if (connection != null) {
            return;
        }
        mutex.lock();
        try {
            connection();
        } finally {
            mutex.unlock();
        }
    }

    /** {@link #reserve} for a factory's holder. */
    static void reserve(HolderFactory factory) throws SQLException {
        of(factory).reserve();
    }

    private Connection connection() throws SQLException {
        Connection c = connection;
        if (c == null || c.isClosed()) {
            c = factory.open();
            try {
                c.setAutoCommit(false);
                c.setNetworkTimeout(Runnable::run, NETWORK_TIMEOUT_MILLIS);
            } catch (SQLException | RuntimeException e) {
                closeQuietly(c);
                throw e;
            }
            connection = c;
            pinned = false;
            Log.debug("LockHygiene: opened the process's lock holder for {}", this);
        }
        return c;
    }

    private String queryOnServer(String sql) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
            try (ResultSet rs = s.getResultSet()) {
                rs.next();
                return rs.getString(1);
            }
        } catch (SQLException | RuntimeException e) {
            throw lost(e);
        }
    }

    private void runOnServer(String sql) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
        } catch (SQLException | RuntimeException e) {
            throw lost(e);
        }
    }

    /**
     * Any failure of the holder's own statements ends its server connection: a connection loss took the
     * locks with it already, and any other error aborted the transaction that pins the server, which must
     * not go back to the pool with the locks. Closing makes PostgreSQL (or the pooler, mid-transaction)
     * release everything. Every owner that held a lock is told (once, on its next statement).
     */
    private SQLException lost(Exception cause) {
        List<Object> owners = table.owners();
        table.clear();
        Connection c = connection;
        connection = null;
        boolean wasPinned = pinned;
        pinned = false;
        HolderWatchdog.forget(watch);
        closeQuietly(c);
        released.signalAll();
        if (wasPinned || !owners.isEmpty()) {
            String message = "LockHygiene (lockhygiene.mode=emulate): the process's lock holder for " + this
                    + " lost its server connection (" + cause + "); the advisory locks it held are released, so other"
                    + " clients may now take them. Whatever they protected is no longer exclusive: stop that work, take"
                    + " the locks again, and start it over.";
            Log.error(message);
            anyLost = true;
            for (Object o : owners) {
                LockOwner owner = (LockOwner) o;
                owner.markLost();
                LeakReporter r = owner.reporter;
                if (r != null) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            }
        }
        SQLException e = new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder lost its server"
                + " connection; the advisory locks it held are gone. Take them again.", "08006", cause);
        return e;
    }

    /**
     * The watchdog's round, while the holder holds locks: one {@code SELECT 1} (bounded) says whether its
     * server is still there; and the locks of pooled threads that have ended are released and reported.
     */
    private void checkAlive() {
        if (!mutex.tryLock()) {
            return; // in use: its owners' statements find out themselves
        }
        try {
            reapGoneThreads();
            Connection c = connection;
            if (!pinned || c == null) {
                return;
            }
            int before = c.getNetworkTimeout();
            c.setNetworkTimeout(Runnable::run, (int) HolderWatchdog.PING_TIMEOUT_MILLIS);
            try {
                Pgjdbc.executeSimple(c, "SELECT 1");
            } finally {
                if (!c.isClosed()) {
                    c.setNetworkTimeout(Runnable::run, before);
                }
            }
        } catch (SQLException | RuntimeException e) {
            if (connection != null) {
                lost(e);
            }
        } finally {
            mutex.unlock();
        }
    }

    private void reapGoneThreads() {
        for (Object o : table.owners()) {
            LockOwner owner = (LockOwner) o;
            if (owner.isGone()) {
                List<HeldLock> held = releaseOwner(owner);
                LeakReporter r = owner.reporter;
                if (r != null && !held.isEmpty()) {
                    r.report(held, owner.calls, "by the lock holder: " + owner + ", which took them from a pool, has"
                            + " ended without unlocking them");
                }
                threadOwners.values().remove(owner);
            }
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException ignored) {
            // already gone
        }
    }

    @Override
    public String toString() {
        return String.valueOf(endpoint);
    }
}
