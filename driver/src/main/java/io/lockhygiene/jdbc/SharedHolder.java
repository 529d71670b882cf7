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
    /** Acquisitions waiting for the next round trip (under state). */
    private final java.util.ArrayDeque<Take> queued = new java.util.ArrayDeque<>();
    private final Map<Thread, LockOwner> threadOwners = Collections.synchronizedMap(new WeakHashMap<>());
    private final HolderWatchdog.Watched watch = this::checkAlive;
    /** Written under io; volatile for {@link #reserve}'s look without it. */
    private volatile Connection connection;
    /** True while the backend is inside the open transaction that pins its server (written under io and state). */
    private boolean pinned;
    /** Application transactions whose advisory calls run here (their venue): the holder stays pinned meanwhile. */
    private int venueTransactions;
    /** Open application connections that own locks here (not counted: pooled ones, whose threads own). */
    private int users;
    /** The owner whose release runs now, so that a loss its own statement sees is not told twice (under io). */
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

    /** A server acquisition some owner waits for: done by whichever thread holds io next (see {@link #flush}). */
    private static final class Take {
        final LockOwner owner;
        final AdvisoryKey key;
        final boolean shared;
        final boolean tryLock;
        final Object tx;
        final int level;
        boolean grantedAtOnce;
        /** Under io: set when done. null result: decide again. */
        boolean done;
        Boolean result;
        SQLException failure;

        Take(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level) {
            this.owner = owner;
            this.key = key;
            this.shared = shared;
            this.tryLock = tryLock;
            this.tx = tx;
            this.level = level;
        }
    }

    /**
     * Takes the mode on the server and grants it (true), or not (false), or must decide again (null). The
     * acquisition is queued; the thread that holds io next sends every queued one (and the releases due) in
     * one round trip, so owners of the process share round trips instead of queueing for them.
     */
    private Boolean takeOnServer(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx,
                                 int level) throws SQLException {
        Take take = new Take(owner, key, shared, tryLock, tx, level);
        state.lock();
        try {
            queued.add(take);
        } finally {
            state.unlock();
        }
        io.lock();
        try {
            if (!take.done) {
                flush(take);
            }
        } finally {
            io.unlock();
        }
        if (take.failure != null) {
            throw take.failure;
        }
        return take.result;
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

    /** An application connection (a connection owner) of this endpoint opened. */
    void userOpened() {
        state.lock();
        try {
            users++;
        } finally {
            state.unlock();
        }
    }

    /**
     * One closed. With none left and nothing held, the holder's idle connection is closed too (it is
     * opened again by the next lock). Called after that connection's locks were released.
     */
    void userClosed() {
        state.lock();
        try {
            users = Math.max(0, users - 1);
            if (users > 0 || pinned || factory.pooled()) {
                return;
            }
        } finally {
            state.unlock();
        }
        if (!io.tryLock()) {
            return; // in use: it is not idle
        }
        try {
            state.lock();
            try {
                if (users > 0 || pinned || !queued.isEmpty()) {
                    return;
                }
            } finally {
                state.unlock();
            }
            Connection c = connection;
            connection = null;
            closeQuietly(c);
        } finally {
            io.unlock();
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
        return releaseOwner(owner, !owner.isThreadOwner());
    }

    /**
     * @param forGood the owner takes nothing any more (a closed connection: a statement racing the close
     *                takes nothing after this); false for a pool's return of a connection that lives on
     */
    List<HeldLock> releaseOwner(LockOwner owner, boolean forGood) {
        List<HeldLock> held = new ArrayList<>();
        state.lock();
        try {
            if (forGood) {
                owner.close();
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
            currentOwner = caller;
            flush(null);
        } finally {
            currentOwner = null;
            io.unlock();
        }
    }

    /**
     * Under io: one round trip for everything due: the releases of server locks nobody needs, then every
     * queued acquisition (one per key: a second on the same key decides again after this one), in one
     * select list, which PostgreSQL evaluates left to right. With nothing held, nothing queued and no
     * transaction using the holder, the holder ends its transaction instead. A failure fails every
     * acquisition of the batch now (their owners are not told again later).
     */
    private void flush(Take caller) throws SQLException {
        List<Take> batch = new ArrayList<>();
        List<LockTable.ServerLock> surplus;
        boolean nothingLeft;
        boolean wasPinned;
        state.lock();
        try {
            java.util.Set<AdvisoryKey> keys = new java.util.HashSet<>();
            for (Take t; (t = queued.poll()) != null; ) {
                if (t.owner.isClosed()) {
                    t.failure = new SQLException("This connection has been closed.", "08003");
                    t.done = true;
                } else if (!keys.add(t.key) || table.blocker(t.owner, t.key, t.shared) != null
                        || !table.serverNeeds(t.key, t.shared)) {
                    t.done = true; // result null: decide again
                } else {
                    t.grantedAtOnce = !t.tryLock && t.shared && table.serverHoldsExclusive(t.key);
                    batch.add(t);
                }
            }
            surplus = table.surplus();
            wasPinned = pinned;
            nothingLeft = batch.isEmpty() && pinned && table.serverHoldsNothing() && venueTransactions == 0;
        } finally {
            state.unlock();
        }
        if (nothingLeft) {
            // everything goes, whatever the backend holds, and the transaction that pinned its server ends
            runOnServer("SELECT pg_catalog.pg_advisory_unlock_all(); COMMIT", batch);
            unpinned();
            return;
        }
        if (batch.isEmpty() && (surplus.isEmpty() || !wasPinned || connection == null)) {
            return;
        }
        StringBuilder sql = new StringBuilder("SELECT ");
        int column = 0;
        for (LockTable.ServerLock l : surplus) {
            sql.append(column++ == 0 ? "" : ", ").append(l.shared ? "pg_catalog.pg_advisory_unlock_shared("
                    : "pg_catalog.pg_advisory_unlock(").append(l.key.sqlArguments()).append(")::text");
        }
        for (Take t : batch) {
            sql.append(column++ == 0 ? "" : ", ").append(t.grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared("
                    : t.shared ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(")
                    .append(t.key.sqlArguments()).append(")::text");
        }
        if (!wasPinned) {
            sql.append(KEEP_IDLE_TRANSACTION);
        }
        String[] answers = queryRowOnServer(sql.toString(), column, batch);
        boolean anyTaken = false;
        boolean grantedToClosed = false;
        state.lock();
        try {
            for (int i = 0; i < batch.size(); i++) {
                Take t = batch.get(i);
                boolean got = t.grantedAtOnce || "true".equals(answers[surplus.size() + i]);
                if (got) {
                    anyTaken = true;
                    table.serverTook(t.key, t.shared);
                    if (t.owner.isClosed()) {
                        grantedToClosed = true; // the server lock nobody holds goes at the next settle
                        t.failure = new SQLException("This connection has been closed.", "08003");
                    } else {
                        table.grant(t.owner, t.key, t.shared, t.tx, t.level);
                        t.result = Boolean.TRUE;
                    }
                } else {
                    t.result = Boolean.FALSE;
                }
                t.done = true;
            }
            if (anyTaken && !wasPinned) {
                pinned = true;
            }
        } finally {
            state.unlock();
        }
        if (anyTaken && !wasPinned) {
            HolderWatchdog.watch(watch);
        } else if (!wasPinned) {
            runOnServer("COMMIT", batch); // holds nothing: let the server go while waiting
        }
        if (grantedToClosed) {
            flush(null);
        }
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

    /** One row of {@code columns} text values; a failure is the holder's loss (see {@link #lost}). */
    private String[] queryRowOnServer(String sql, int columns, List<Take> batch) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
            try (ResultSet rs = s.getResultSet()) {
                rs.next();
                String[] row = new String[columns];
                for (int i = 0; i < columns; i++) {
                    row[i] = rs.getString(i + 1);
                }
                return row;
            }
        } catch (SQLException | RuntimeException e) {
            throw lost(e, batch);
        }
    }

    private void runOnServer(String sql, List<Take> batch) throws SQLException {
        try (Statement s = connection().createStatement()) {
            Pgjdbc.executeSimple(s, sql);
        } catch (SQLException | RuntimeException e) {
            throw lost(e, batch);
        }
    }

    /**
     * Under io. Any failure of the holder's own statements ends its server connection: a connection loss
     * took the locks with it already, and any other error aborted the transaction that pins the server,
     * which must not go back to the pool with the locks. Closing makes PostgreSQL (or the pooler,
     * mid-transaction) release everything. Every other owner that held a lock is told on its next
     * statement; the caller's own statement fails now, with pgjdbc's exception.
     */
    private SQLException lost(Exception cause, List<Take> batch) {
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
                if (owner != currentOwner && !inBatch(owner, batch)) {
                    owner.markLost(); // the batch's owners fail now, with the same exception
                }
                LeakReporter r = owner.reporter;
                if (r != null) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            }
        }
        SQLException failure = cause instanceof SQLException ? (SQLException) cause // pgjdbc's own
                : new SQLException("LockHygiene (lockhygiene.mode=emulate): the lock holder lost its server"
                + " connection; the advisory locks it held are gone. Take them again.", "08006", cause);
        for (Take t : batch) {
            t.failure = failure;
            t.done = true;
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
            HolderWatchdog.ping(c);
        } catch (SQLException | RuntimeException e) {
            if (connection != null) {
                lost(e, Collections.emptyList());
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
