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
 * another process is polled with backoff, nothing held in between.
 *
 * <p>Two locks, always taken in this order: {@code io} serializes the holder's connection and is held
 * across its round trips; {@code state} guards the table and is never held across one, so an
 * application thread that only asks the table (inside a transaction that pins its own server) never
 * waits for a round trip. The holder needs a new server only while it is not pinned, and it stays pinned
 * while it holds anything or an application transaction uses it as its venue: so a thread that waits for
 * the holder's round trip never holds a server the holder is waiting for.
 */
final class SharedHolder {
    private static final Map<Object, SharedHolder> HOLDERS = new ConcurrentHashMap<>();
    /** Bounds every holder statement: a blackholed network must not hang the owners queued behind it. */
    private static final int NETWORK_TIMEOUT_MILLIS = 30_000;
    private static final long LOCAL_RECHECK_MILLIS = 50;
    private static final String KEEP_IDLE_TRANSACTION =
            ", pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    private final Object endpoint;
    private final HolderFactory factory;
    /** The holder's connection: held across round trips. Taken before {@link #state}, never after. */
    private final ReentrantLock io = new ReentrantLock();
    /** The table and the counters: never held across a round trip. */
    private final ReentrantLock state = new ReentrantLock();
    private final Condition released = state.newCondition();
    private final LockTable table = new LockTable();
    private final Map<Thread, LockOwner> threadOwners = Collections.synchronizedMap(new WeakHashMap<>());
    private final HolderWatchdog.Watched watch = this::checkAlive;
    /** Written under io; volatile for {@link #reserve}'s look without it. */
    private volatile Connection connection;
    /** True while the backend is inside the open transaction that pins its server (written under io and state). */
    private boolean pinned;
    /** Application transactions whose advisory calls run here (their venue): the holder stays pinned meanwhile. */
    private int venueTransactions;
    /** The owner whose call runs now, so that a loss its own statement sees is not told twice (under io). */
    private LockOwner currentOwner;
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
        boolean waiting = false; // registered as a local waiter of the key (under state)
        while (true) {
            SQLException giveUp = null;
            state.lock();
            try {
                if (waiting) {
                    table.stopWaiting(owner, key); // registered again below while still blocked
                    waiting = false;
                }
                if (owner.isClosed()) {
                    giveUp = new SQLException("This connection has been closed.", "08003");
                } else {
                    Object blocker = table.blocker(owner, key, shared);
                    if (blocker == null) {
                        if (!table.serverNeeds(key, shared)) {
                            table.grant(owner, key, shared, tx, level);
                            return true;
                        }
                    } else if (tryLock) {
                        return false;
                    } else if (table.startWaiting(owner, blocker, key)) {
                        giveUp = new SQLException("deadlock detected (LockHygiene, lockhygiene.mode=emulate: " + owner
                                + " waits for advisory lock " + key + " held by " + blocker + ", which waits for it)",
                                "40P01");
                    } else {
                        waiting = true;
                        try {
                            awaitUntil(LOCAL_RECHECK_MILLIS, start, lockTimeoutMillis, deadlineNanos);
                            continue;
                        } catch (SQLException e) {
                            table.stopWaiting(owner, key);
                            waiting = false;
                            giveUp = e;
                        }
                    }
                }
            } finally {
                state.unlock();
            }
            if (giveUp != null) {
                settle(null); // a released lock may have been kept on the server for this waiter
                throw giveUp;
            }
            // the server must take this mode first: one round trip, nothing of the table held meanwhile
            Boolean took = takeOnServer(owner, key, shared, tryLock, tx, level);
            if (took == null) {
                continue; // someone else changed the key meanwhile: decide again
            }
            if (took) {
                return true;
            }
            if (tryLock) {
                return false; // another process holds it
            }
            state.lock();
            try {
                awaitUntil(backoff, start, lockTimeoutMillis, deadlineNanos);
            } finally {
                state.unlock();
            }
            backoff = Math.min(backoff * 2, 50);
        }
    }

    /** Under io: takes the mode on the server and grants it (true), or not (false), or must decide again (null). */
    private Boolean takeOnServer(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx,
                                 int level) throws SQLException {
        io.lock();
        try {
            boolean grantedAtOnce;
            state.lock();
            try {
                if (owner.isClosed() || table.blocker(owner, key, shared) != null || !table.serverNeeds(key, shared)) {
                    return null;
                }
                grantedAtOnce = !tryLock && shared && table.serverHoldsExclusive(key);
            } finally {
                state.unlock();
            }
            currentOwner = owner;
            if (!serverTake(key, shared, grantedAtOnce)) {
                return false;
            }
            state.lock();
            try {
                table.serverTook(key, shared);
                if (!owner.isClosed()) {
                    table.grant(owner, key, shared, tx, level);
                    return true;
                }
            } finally {
                state.unlock();
            }
        } finally {
            currentOwner = null;
            io.unlock();
        }
        settle(null); // closed while we took it: the server lock nobody holds goes again
        throw new SQLException("This connection has been closed.", "08003");
    }

    /** Waits (state let go) for a release here or a retry, within the statement's limits. Caller holds state. */
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
        boolean ok;
        state.lock();
        try {
            ok = table.unlock(owner, key, shared);
            released.signalAll();
        } finally {
            state.unlock();
        }
        if (ok) {
            settle(owner);
        }
        return ok;
    }

    /** pg_advisory_unlock_all for one owner. */
    void unlockAll(LockOwner owner) throws SQLException {
        state.lock();
        try {
            table.unlockAll(owner);
            released.signalAll();
        } finally {
            state.unlock();
        }
        settle(owner);
    }

    /** The transaction-level holds of {@code tx} from savepoint depth {@code level} on go (end, rollback to, error). */
    void releaseTransaction(Object tx, int level) throws SQLException {
        state.lock();
        try {
            table.releaseTransaction(tx, level);
            released.signalAll();
        } finally {
            state.unlock();
        }
        settle(null);
    }

    /** RELEASE SAVEPOINT at depth {@code level}: its holds belong to the enclosing level now. */
    void mergeTransactionLevel(Object tx, int level) {
        state.lock();
        try {
            table.mergeTransactionLevel(tx, level);
        } finally {
            state.unlock();
        }
    }

    /** An application transaction makes the holder its venue: it stays pinned until {@link #venueEnded}. */
    void venueStarted() {
        state.lock();
        try {
            venueTransactions++;
        } finally {
            state.unlock();
        }
    }

    /** The end of a transaction counted by {@link #venueStarted}. */
    void venueEnded() {
        state.lock();
        try {
            venueTransactions = Math.max(0, venueTransactions - 1);
        } finally {
            state.unlock();
        }
        try {
            settle(null);
        } catch (SQLException e) {
            Log.debug("LockHygiene: the lock holder for {} lost its server while letting it go: {}", this, e.toString());
        }
    }

    boolean holdsSessionLocks(LockOwner owner) {
        state.lock();
        try {
            return table.holdsSessionLocks(owner);
        } finally {
            state.unlock();
        }
    }

    /** The owner is gone (connection closed): everything it held goes; its session locks are returned for the report. */
    List<HeldLock> releaseOwner(LockOwner owner) {
        List<HeldLock> held = new ArrayList<>();
        state.lock();
        try {
            if (!owner.isThreadOwner()) {
                owner.close(); // a statement racing the close takes nothing after this
            }
            for (LockTable.SessionHold h : table.releaseOwner(owner)) {
                held.add(new HeldLock(h.key.classid(), h.key.objid(), h.key.objsubid(),
                        h.shared ? "ShareLock" : "ExclusiveLock", 0, h.count));
            }
            released.signalAll();
        } finally {
            state.unlock();
        }
        try {
            settle(null);
        } catch (SQLException e) {
            Log.debug("LockHygiene: the lock holder lost its server while releasing the locks of {}: {}", owner,
                    e.toString());
        }
        return held;
    }

    /**
     * After releases: server locks nobody needs go; with nothing held and no transaction using the holder,
     * its transaction ends and its server goes back to the pool. One round trip, only when there is work.
     */
    private void settle(LockOwner caller) throws SQLException {
        state.lock();
        try {
            if (!pinned || (table.surplusIsEmpty() && !(table.serverHoldsNothing() && venueTransactions == 0))) {
                return;
            }
        } finally {
            state.unlock();
        }
        io.lock();
        try {
            List<LockTable.ServerLock> surplus;
            boolean nothingLeft;
            state.lock();
            try {
                surplus = table.surplus();
                nothingLeft = table.serverHoldsNothing() && venueTransactions == 0;
            } finally {
                state.unlock();
            }
            if (!pinned || connection == null || (surplus.isEmpty() && !nothingLeft)) {
                return;
            }
            String sql;
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
            currentOwner = caller;
            runOnServer(sql);
            if (nothingLeft) {
                unpinned();
            }
        } finally {
            currentOwner = null;
            io.unlock();
        }
    }

    /** Under io: takes one mode on the server, with a try (or, see the class comment, a request granted at once). */
    private boolean serverTake(AdvisoryKey key, boolean shared, boolean grantedAtOnce) throws SQLException {
        String function = grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared("
                : shared ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(";
        boolean wasPinned = pinned;
        String sql = "SELECT " + function + key.sqlArguments() + ")::text" + (wasPinned ? "" : KEEP_IDLE_TRANSACTION);
        String answer = queryOnServer(sql);
        boolean got = grantedAtOnce || "true".equals(answer);
        if (got) {
            if (!wasPinned) {
                setPinned(true);
                HolderWatchdog.watch(watch);
            }
        } else if (!wasPinned) {
            runOnServer("COMMIT"); // holds nothing: let the server go while waiting
        }
        return got;
    }

    private void setPinned(boolean now) {
        state.lock();
        try {
            pinned = now;
        } finally {
            state.unlock();
        }
    }

    private void unpinned() {
        setPinned(false);
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
        io.lock();
        try {
            connection();
        } finally {
            io.unlock();
        }
    }

    /** {@link #reserve} for a factory's holder. */
    static void reserve(HolderFactory factory) throws SQLException {
        of(factory).reserve();
    }

    /** Under io. */
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
            setPinned(false);
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
     * Under io. Any failure of the holder's own statements ends its server connection: a connection loss
     * took the locks with it already, and any other error aborted the transaction that pins the server,
     * which must not go back to the pool with the locks. Closing makes PostgreSQL (or the pooler,
     * mid-transaction) release everything. Every other owner that held a lock is told on its next
     * statement; the caller's own statement fails now, with pgjdbc's exception.
     */
    private SQLException lost(Exception cause) {
        List<Object> owners;
        boolean wasPinned;
        state.lock();
        try {
            owners = table.owners();
            table.clear();
            wasPinned = pinned;
            pinned = false;
            released.signalAll();
        } finally {
            state.unlock();
        }
        Connection c = connection;
        connection = null;
        HolderWatchdog.forget(watch);
        closeQuietly(c);
        if (wasPinned || !owners.isEmpty()) {
            String message = "LockHygiene (lockhygiene.mode=emulate): the process's lock holder for " + this
                    + " lost its server connection (" + cause + "); the advisory locks it held are released, so other"
                    + " clients may now take them. Whatever they protected is no longer exclusive: stop that work, take"
                    + " the locks again, and start it over.";
            Log.error(message);
            anyLost = true;
            for (Object o : owners) {
                LockOwner owner = (LockOwner) o;
                if (owner != currentOwner) {
                    owner.markLost();
                }
                LeakReporter r = owner.reporter;
                if (r != null) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            }
        }
        if (cause instanceof SQLException) {
            return (SQLException) cause; // pgjdbc's own, as the application's statement would have had it
        }
        return new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder lost its server"
                + " connection; the advisory locks it held are gone. Take them again.", "08006", cause);
    }

    /**
     * The watchdog's round, while the holder is pinned: one {@code SELECT 1} (bounded) says whether its
     * server is still there; and the locks of pooled threads that have ended are released and reported.
     */
    private void checkAlive() {
        reapGoneThreads();
        if (!io.tryLock()) {
            return; // in use: its owners' statements find out themselves
        }
        try {
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
            io.unlock();
        }
    }

    private void reapGoneThreads() {
        List<Object> owners;
        state.lock();
        try {
            owners = table.owners();
        } finally {
            state.unlock();
        }
        for (Object o : owners) {
            LockOwner owner = (LockOwner) o;
            if (owner.isGone()) {
                List<HeldLock> held = releaseOwner(owner);
                LeakReporter r = owner.reporter;
                if (r != null && !held.isEmpty()) {
                    r.reportOwnerGone(held, owner.calls, owner + " (it took them on a pooled connection and has ended)");
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
