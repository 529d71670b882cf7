package io.lockhygiene.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.lockhygiene.internal.emulate.AdvisoryKey;
import io.lockhygiene.internal.emulate.LockTable;
import io.lockhygiene.internal.emulate.SessionHold;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.log.Log;

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

    private final Object endpoint;
    private final HolderFactory factory;
    /** The holder's connection: held across round trips. Taken before {@link #state}, never after. */
    final ReentrantLock io = new ReentrantLock();
    /** The table and the counters: never held across a round trip. */
    final ReentrantLock state = new ReentrantLock();
    final Condition released = state.newCondition();
    final LockTable table = new LockTable();
    // The fields below without "private" are shared with this holder's HolderServer, under the locks named.
    /** Acquisitions waiting for the next round trip (under state). */
    final java.util.ArrayDeque<HolderTake> queued = new java.util.ArrayDeque<>();
    private final Map<Thread, LockOwner> threadOwners = Collections.synchronizedMap(new WeakHashMap<>());
    /** The connection, its round trips, its pinning and its loss. */
    final HolderServer server;
    /** Keys on their way from an application's server to this holder (see {@link HandOvers}). */
    final HandOvers handOvers = new HandOvers();
    private final HolderAcquisition acquisition = new HolderAcquisition(this);
    /** True while the backend is inside the open transaction that pins its server (written under io and state). */
    boolean pinned;
    /** Application transactions whose advisory calls run here (their venue): the holder stays pinned meanwhile. */
    int venueTransactions;
    /** Open application connections that own locks here (not counted: pooled ones, whose threads own). */
    private int users;
    /** The owner whose release runs now, so that a loss its own statement sees is not told twice (under io). */
    LockOwner currentOwner;
    /** Set at the first loss that told owners: from then on, statements ask their owner (see {@link #lossSeen}). */
    volatile boolean anyLost;

    private SharedHolder(Object endpoint, HolderFactory factory) {
        this.endpoint = endpoint;
        this.factory = factory;
        this.server = new HolderServer(this, factory);
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
        return acquisition.acquire(owner, key, shared, tryLock, tx, level, lockTimeoutMillis, deadlineNanos);
    }

    /** A hand-over ended: owners waiting for its key decide again. */
    void handOverEnded() {
        state.lock();
        try {
            released.signalAll();
        } finally {
            state.unlock();
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
            Connection c = server.connection;
            server.connection = null;
            HolderServer.closeQuietly(c);
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
            for (SessionHold h : table.releaseOwner(owner)) {
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
    void settle(LockOwner caller) throws SQLException {
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
            server.flush(null);
        } finally {
            currentOwner = null;
            io.unlock();
        }
    }

    /**
     * Opens the holder's connection now, if it is not open. A holder that borrows from the application's
     * own pool must have its connection before the application's threads hold the pool's connections while
     * they wait for the holder: the DataSource wrapper reserves it before each borrow (cheap once open), and
     * keeps it for the life of the process.
     */
    void reserve() throws SQLException {
        if (server.connection != null) {
            return;
        }
        io.lock();
        try {
            server.connection();
        } finally {
            io.unlock();
        }
    }

    /** {@link #reserve} for a factory's holder. */
    static void reserve(HolderFactory factory) throws SQLException {
        of(factory).reserve();
    }

    void reapGoneThreads() {
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

    @Override
    public String toString() {
        return String.valueOf(endpoint);
    }
}
