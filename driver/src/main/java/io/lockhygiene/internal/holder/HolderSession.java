package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.sql.Seals;

/**
 * One server session of a lock holder, in either of its two roles, used one round trip at a time under its
 * {@code io} turn ({@link SessionTurn}), each role with its own place in the lock order:
 *
 * <ul>
 *   <li>a <b>main session</b> ({@link #main}): tries, releases and the watchdog's look, every owner's requests
 *       batched into one round trip by the thread whose turn it is;</li>
 *   <li>a <b>waiting session</b> ({@link #waiting}): a session of its own for one blocking call that waits for
 *       another process in PostgreSQL's queue (so queue order, refused tries and the seed's pg_locks alert are
 *       PostgreSQL's); the key it gets stays on it until the process lets go of that key. Its turn is held by the
 *       waiting owner for the whole wait and briefly for each release, taken after a main session's.</li>
 * </ul>
 *
 * <p>A main session on a dedicated endpoint it is a plain session (autocommit) whose seal it took when it was
 * opened: its session locks need no transaction. Through the application's own route it keeps a transaction
 * open while it holds anything, which pins its one pooled server, takes a seal on that server when the pin
 * begins, and ends it ({@code pg_advisory_unlock_all(); COMMIT}) when it holds nothing, so its server goes
 * back to the pool clean.
 *
 * <p>It is opened outside every lock of ours ({@link #open}): a connect, or a borrow from the application's
 * pool, may wait long, and nobody may wait for our lock meanwhile. Under {@code io} it is only used.
 */
final class HolderSession implements LockTable.Backend {
    private static final String KEEP_IDLE_TRANSACTION =
            "pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    /**
     * Held across the session's round trips (a main session's: the outermost of emulate's locks, see the package).
     * Private: taken only through {@link #turn}, {@link #tryTurn} and {@link #awaitTurn}, each closed by its taker.
     */
    private final SessionTurn io;
    /** A main session: opened when needed, through its endpoint (a waiting session is open from the start). */
    private final boolean main;
    private final HolderEndpoint endpoint;
    /** Written under io; volatile for the watchdog's and {@link #isOpen}'s look without it. */
    private volatile HolderLink link;
    /** True when holding locks pins a pooled server (the application's route): the endpoint's, read once. */
    private final boolean pins;
    /** Through a pooler: inside the transaction that pins its server (under io). */
    private boolean pinned;
    /** Through a pooler: the seal taken on the pinned server (under io; 0 when not pinned). */
    private volatile int pinSeal;
    /** The link has answered a statement (under io): a failure of a link that never did is not "went idle". */
    private boolean answered;
    /** When the link last answered (nanoTime), for the watchdog's looks at an idle session. */
    private volatile long lastAnswer = System.nanoTime();
    /** When the watchdog last looked at it. */
    private volatile long lastLook = System.nanoTime();
    /** The open in progress, if any: one opener at a time, the others wait for its result (no lock held). */
    private final AtomicReference<CompletableFuture<HolderLink>> opening = new AtomicReference<>();

    private HolderSession(boolean main, HolderEndpoint endpoint, HolderLink link) {
        this.main = main;
        this.io = main ? SessionTurn.ofMainSession() : SessionTurn.ofWaitingSession();
        this.endpoint = endpoint;
        this.link = link;
        this.pins = main && !endpoint.dedicated();
    }

    /** A main session of the holder on {@code endpoint}, opened at its first use ({@link #open}). */
    static HolderSession main(HolderEndpoint endpoint) {
        return new HolderSession(true, endpoint, null);
    }

    /** A waiting session on {@code link}, opened already: never pinned, its seal the link's own. */
    static HolderSession waiting(HolderLink link) {
        return new HolderSession(false, null, link);
    }

    /** True for a main session; false for a waiting session. */
    boolean isMain() {
        return main;
    }

    /** True when {@code backend} is a waiting session of a holder (its keys are released on it, by its turn). */
    static boolean isWaitingSession(LockTable.Backend backend) {
        return backend instanceof HolderSession && !((HolderSession) backend).main;
    }

    /**
     * A main session, outside every lock of ours: the link, opened now if need be. One thread opens; a thread that comes
     * meanwhile waits for that open (bounded by its connect or borrow timeout) and shares its outcome.
     */
    HolderLink open() throws SQLException {
        HolderLink l = link;
        if (l != null && !l.isClosed()) {
            return l;
        }
        CompletableFuture<HolderLink> mine = new CompletableFuture<>();
        CompletableFuture<HolderLink> running = opening.compareAndExchange(null, mine);
        if (running != null) {
            return await(running);
        }
        try {
            l = link;
            if (l == null || l.isClosed()) {
                l = endpoint.open();
                try (SessionTurn turn = io.obtain()) {
                    link = l;
                    pinned = false;
                    pinSeal = 0;
                    answered = false;
                }
            }
            mine.complete(l);
            return l;
        } catch (SQLException | RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            opening.set(null);
        }
    }

    private static HolderLink await(CompletableFuture<HolderLink> running) throws SQLException {
        try {
            return running.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Limits.cancelledException();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SQLException) {
                throw new SQLException(cause.getMessage(), ((SQLException) cause).getSQLState(), cause);
            }
            throw new SQLException("LockHygiene: the lock holder could not connect: " + cause, "08001", cause);
        }
    }

    /** The session's turn, to be closed: {@code try (SessionTurn turn = main.turn()) { ... }}. */
    SessionTurn turn() {
        return io.obtain();
    }

    /** The session's turn if it is free now (to be closed), else null: a look that must not wait. */
    SessionTurn tryTurn() {
        return io.tryObtain();
    }

    /** The session's turn within {@code millis} (to be closed), else null: the watchdog's bounded look. */
    SessionTurn tryTurn(long millis) throws InterruptedException {
        return io.tryObtain(millis);
    }

    /**
     * A request's turn ({@link SessionTurn#awaitTurn}): the turn, to be closed, or null once {@code served} says
     * another thread's round trip carried the request.
     */
    SessionTurn awaitTurn(java.util.function.BooleanSupplier served) {
        return io.awaitTurn(served);
    }

    /** A release's ticket: served once a batch that began after this call has ended ({@link SessionTurn}). */
    long releaseTicket() {
        return io.ticket();
    }

    boolean servedUpTo(long ticket) {
        return io.servedUpTo(ticket);
    }

    /** Under the turn, as a batch begins: the tickets it will have served when it ends. */
    long batchBegins() {
        return io.batchBegins();
    }

    /** Under the turn: the batch that began at {@code upTo} ended; the threads it served go on now. */
    void batchEnded(long upTo) {
        io.batchEnded(upTo);
    }

    /** Wakes the threads whose requests were answered without a round trip (a loss failed them). */
    void wakeAnswered() {
        io.wakeServed();
    }

    /** True when a round trip (or a look) holds the turn now. */
    boolean busy() {
        return io.isLocked();
    }

    /**
     * Under io: the open link; never opens one (a main session's: 08003 when it is closed, the caller decides again;
     * a waiting session's link as it is, whose next statement fails as pgjdbc's closed connection does).
     */
    HolderLink link() throws SQLException {
        HolderLink l = link;
        if (l == null) {
            throw new ClosedByHolder(); // closed on purpose (idle, the last user gone, a loss): nothing was lost here
        }
        if (main && l.isClosed()) {
            throw new SQLException("LockHygiene: the lock holder's main connection is closed", "08003");
        }
        return l;
    }

    /**
     * The holder closed this session itself (it was idle, or at a loss, which told its owners already): a request
     * that finds it so decides again and opens a fresh one, rather than counting as a loss of locks nobody held.
     */
    static final class ClosedByHolder extends SQLException {
        private static final long serialVersionUID = 1L;

        ClosedByHolder() {
            super("LockHygiene: the lock holder's main connection is closed", "08003");
        }
    }

    boolean isOpen() {
        HolderLink l = link;
        return l != null && !l.isClosed();
    }

    /** Closed, by us or found broken (a main session not opened yet counts as closed). */
    boolean isClosed() {
        return !isOpen();
    }

    /** Cancels the statement running on it now (a deadlock, a cancel, an interrupt); any thread. */
    void cancel() {
        HolderLink l = link;
        if (l != null) {
            l.cancel();
        }
    }

    /** Under io: one statement that does not wait for a lock. */
    String[] query(String sql, int columns) throws SQLException {
        return link().query(sql, columns);
    }

    /** True when the link was opened and is closed now without our closing it (pgjdbc found it broken). */
    boolean brokeUnseen() {
        HolderLink l = link;
        return l != null && l.isClosed();
    }

    /** How long the link has been neither used nor looked at. */
    long idleNanos() {
        return System.nanoTime() - Math.max(lastAnswer, lastLook);
    }

    /** Under io: whether the open link has answered a statement before (it was in use, not just opened). */
    boolean answered() {
        return answered;
    }

    /** The backend of the open link, or 0. */
    int backendPid() {
        HolderLink l = link;
        return l == null ? 0 : l.backendPid();
    }

    /** The seal of the session now: the link's own (dedicated), or the pinned server's (0 when unpinned). */
    int seal() {
        HolderLink l = link;
        return !pins() ? (l == null ? 0 : l.seal()) : pinSeal;
    }

    /** True when holding locks pins a pooled server (the application's route). */
    boolean pins() {
        return pins;
    }

    /** Under io: whether its pinning transaction is open. */
    boolean pinned() {
        return pinned;
    }

    /**
     * Under io: one {@code SELECT} of {@code columns} text values; on the application's route the first one
     * of a pinning transaction also keeps the server from ending it for idleness and takes the pin's seal
     * (its answer is the last column, not counted in {@code columns}). Follow it with {@link #afterSelect}.
     */
    String[] select(String selectList, int columns) throws SQLException {
        HolderLink l = link();
        boolean first = pins() && !pinned;
        int seal = first ? l.newSeal() : 0;
        String[] row = l.query("SELECT " + selectList + (first ? ", " + KEEP_IDLE_TRANSACTION + ", "
                + Seals.take(seal) + "::text" : ""), first ? columns + 2 : columns);
        answered = true;
        lastAnswer = System.nanoTime();
        if (first) {
            pinSeal = "true".equals(row[columns + 1]) ? seal : 0;
        }
        return row;
    }

    /**
     * Under io, after {@link #select}: on the application's route, a holder that holds something now keeps
     * its transaction (its server stays pinned, sealed); one that took nothing lets the server go.
     */
    void afterSelect(boolean holdsSomething) throws SQLException {
        if (!pins()) {
            return;
        }
        if (holdsSomething) {
            pinned = true;
            for (int attempt = 0; pinSeal == 0 && attempt < 3; attempt++) {
                int seal = link().newSeal(); // the first one was another session's: rare, one more round trip
                String[] row = link().query("SELECT " + Seals.take(seal) + "::text", 1);
                pinSeal = "true".equals(row[0]) ? seal : 0;
            }
        } else if (!pinned) {
            link().query("SELECT pg_catalog.pg_advisory_unlock_all(); COMMIT", 0);
            pinSeal = 0;
        }
    }

    /** Under io, through a pooler: nothing is held any more; everything goes (the seal too) and the server with it. */
    void unpin() throws SQLException {
        HolderLink l = link;
        if (l != null && pinned) {
            l.query("SELECT pg_catalog.pg_advisory_unlock_all(); COMMIT", 0);
        }
        pinned = false;
        pinSeal = 0;
    }

    /**
     * Under io (or at a loss): closes it; its backend's locks go with it. A main session forgets its link (the next
     * use opens a fresh one); a waiting session keeps it, closed, until the holder drops the session.
     */
    void close() {
        HolderLink l = link;
        if (main) {
            link = null;
            pinned = false;
            pinSeal = 0;
        }
        if (l != null) {
            l.close();
        }
    }

    /** The watchdog's bounded look, under io. */
    void ping(long timeoutMillis) throws SQLException {
        HolderLink l = link;
        if (l != null) {
            l.ping(timeoutMillis);
        }
    }

    /** The watchdog's look without a round trip, under io. */
    void peek() throws SQLException {
        HolderLink l = link;
        if (l != null) {
            lastLook = System.nanoTime();
            l.peek();
        }
    }

    @Override
    public String toString() {
        return main ? "the main connection of the lock holder (" + endpoint + ")"
                : "waiting connection of the lock holder (backend " + backendPid() + ")";
    }
}
