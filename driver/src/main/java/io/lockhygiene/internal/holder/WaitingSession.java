package io.lockhygiene.internal.holder;

import java.sql.SQLException;

import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * A holder connection of its own for one blocking call that waits for another process: it waits in
 * PostgreSQL's queue (so queue order, refused tries and the seed's pg_locks alert are PostgreSQL's), and
 * the key it gets stays on it until the process lets go of that key. Its {@code io} lock is held by the
 * waiting owner for the whole wait and briefly for each release; it is taken after the main connection's.
 */
final class WaitingSession implements LockTable.Backend {
    /** Private: taken only through {@link #turn} and {@link #tryTurn}, each closed by its taker. */
    private final OrderedLock io = new OrderedLock(LockOrder.HOLDER_WAITING_SESSION);
    private final HolderLink link;

    WaitingSession(HolderLink link) {
        this.link = link;
    }

    /** The session's turn, to be closed: {@code try (OrderedLock turn = w.turn()) { ... }}. */
    OrderedLock turn() {
        return io.obtain();
    }

    /** The session's turn if it is free now (to be closed), else null: the watchdog's look must not wait. */
    OrderedLock tryTurn() {
        return io.tryObtain();
    }

    HolderLink link() {
        return link;
    }

    int backendPid() {
        return link.backendPid();
    }

    /** Its session's seal, taken when it was opened. */
    int seal() {
        return link.seal();
    }

    /** The watchdog's look without a round trip, under io. */
    void peek() throws SQLException {
        link.peek();
    }

    /** Cancels the wait running on it (a deadlock, a cancel, an interrupt); any thread. */
    void cancel() {
        link.cancel();
    }

    boolean isClosed() {
        return link.isClosed();
    }

    void close() {
        link.close();
    }

    /** Under io: one statement that does not wait. */
    String[] query(String sql, int columns) throws SQLException {
        return link.query(sql, columns);
    }

    @Override
    public String toString() {
        return "waiting connection of the lock holder (backend " + link.backendPid() + ")";
    }
}
