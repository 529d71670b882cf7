package io.lockhygiene.internal.holder;

import io.lockhygiene.internal.sql.Seals;
import java.sql.SQLException;

/**
 * One server connection of a lock holder, as the holder uses it: simple-protocol statements that return at
 * most one row of text values. The seam behind every round trip of emulate's process side: the holder, its
 * batching, hand-overs, waits and loss are unit-tested against a fake of this interface, and run against
 * pgjdbc through {@link JdbcHolderLink}.
 *
 * <p>Not thread-safe: one thread at a time sends on a link (the holder's {@code io} lock, or a waiter's
 * own); only {@link #cancel} and {@link #close} may come from another thread.
 */
public interface HolderLink {
    /**
     * Runs {@code sql} (one or more statements, simple protocol) and returns the first row of the first
     * result that has rows, as text ({@code columns} values; null for SQL NULL), or null when none has rows.
     * Bounded by the link's network timeout: a statement that does not wait for a lock.
     */
    String[] query(String sql, int columns) throws SQLException;

    /**
     * {@link #query} for a statement that waits for a lock in PostgreSQL's queue: no network timeout
     * (the wait may be long; a lost server is noticed by the watchdog, which closes the link), and a query
     * timeout when {@code timeoutSeconds > 0} (57014 when reached).
     */
    String[] await(String sql, int columns, int timeoutSeconds) throws SQLException;

    /** Every row of one statement's result ({@code columns} text values each), bounded like {@link #query}. */
    java.util.List<String[]> rows(String sql, int columns) throws SQLException;

    /** Cancels the statement running on this link now (PostgreSQL's cancel request), if any. */
    void cancel();

    /** The backend's process id (for matching rows of pg_locks). */
    int backendPid();

    /** The session's seal (see {@link Seals}), taken when it was opened; 0 when it takes one per pin instead. */
    int seal();

    /**
     * A fresh seal value for a session of this link's database, in the first partition of its lock table where
     * that is known ({@link Seals#freshInFirstPartition}): what a pin's seal is taken with.
     */
    int newSeal();

    /** A bounded {@code SELECT 1}: the server is still there. */
    void ping(long timeoutMillis) throws SQLException;

    /**
     * A look without a round trip: throws when the server has ended the session (a terminated backend tells
     * its client before it closes the socket); returns at once otherwise (within a millisecond).
     */
    void peek() throws SQLException;

    /** True once the link is closed or found broken. */
    boolean isClosed();

    /**
     * Closes it; never throws, and never waits for a statement running on it (that statement ends with an
     * error). A backend that goes releases every lock it held.
     */
    void close();
}
