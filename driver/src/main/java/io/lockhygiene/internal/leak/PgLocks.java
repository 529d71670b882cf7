package io.lockhygiene.internal.leak;

/**
 * Every statement LockHygiene sends that reads the server's lock table, in one place; each lists rows
 * whose first five columns are classid, objid, objsubid, mode and pid, read by {@link HeldLock#fromListing}.
 *
 * <p>The leak check's statements are sent with the transaction's end Sent as one text with the transaction's end (the brief's piggyback):
 * pgjdbc sends the statements with one Sync, so a transaction pooler keeps the same backend for all of
 * them, and after COMMIT or ROLLBACK only session-level locks can remain, so the listing is exactly
 * the leaked ones.
 */
public final class PgLocks {
    /**
     * Our backend's granted advisory locks: classid, objid, objsubid, mode, pid. Read from
     * {@code pg_lock_status()}, the function behind the {@code pg_locks} view: the same rows, and the server
     * skips expanding the view (about a quarter of the statement's cost, measured).
     */
    public static final String LIST = "SELECT l.classid, l.objid, l.objsubid, l.mode, l.pid"
            + " FROM pg_catalog.pg_lock_status() l WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid()"
            + " AND l.granted";

    /**
     * {@link #LIST} that also releases every session-level lock of the backend, in one statement: the
     * sixth column calls {@code pg_advisory_unlock_all()} for each listed row (the first call releases all,
     * the others find nothing), so with no row it never runs, and the rows were read before it ran (the lock
     * status is taken whole at the function's first call). One statement instead of two at every checked
     * transaction end. Transaction-level locks stay (unlock_all leaves them).
     */
    public static final String LIST_AND_RELEASE = "SELECT l.classid, l.objid, l.objsubid, l.mode, l.pid,"
            + " pg_catalog.pg_advisory_unlock_all() AS released"
            + " FROM pg_catalog.pg_lock_status() l WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid()"
            + " AND l.granted";

    /** Releases every session-level advisory lock of the backend (transaction-level ones stay). */
    public static final String RELEASE = "SELECT pg_catalog.pg_advisory_unlock_all()";

    /**
     * The number of advisory locks our backend holds, with the lock holder's setting for its own
     * transaction (idle_in_transaction_session_timeout off, so the server keeps it), in one round trip.
     */
    public static final String OWN_COUNT_FOR_HOLDER = "SELECT (SELECT count(*) FROM pg_catalog.pg_lock_status() l"
            + " WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid()),"
            + " pg_catalog.set_config('idle_in_transaction_session_timeout', '0', true)";

    /**
     * Advisory locks other sessions hold while idle (the doctor): the listing's five columns, then idle
     * milliseconds, last query, user and application.
     */
    public static final String IDLE_HOLDERS = "SELECT l.classid, l.objid, l.objsubid, l.mode, l.pid,"
            + " (extract(epoch FROM (clock_timestamp() - a.state_change)) * 1000)::bigint, a.query,"
            + " a.usename, a.application_name FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a"
            + " ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle'"
            + " AND l.pid <> pg_catalog.pg_backend_pid() ORDER BY 6 DESC";

    /**
     * Advisory waits longer than a threshold (the wait monitor): the waiter's five listing columns, then
     * the holder's pid, milliseconds waited, the waiter's state, wait event type and event, both queries.
     * Parameters: the threshold in milliseconds, then the class id when {@code byClassId}.
     *
     * @param since the expression for when the wait began ({@code w.waitstart} exists from PostgreSQL 14)
     */
    public static String waitsLongerThan(String since, boolean byClassId) {
        return "SELECT w.classid, w.objid, w.objsubid, w.mode, w.pid, h.pid,"
                + " (extract(epoch FROM (clock_timestamp() - " + since + ")) * 1000)::bigint,"
                + " wa.state, wa.wait_event_type, wa.wait_event, wa.query, ha.query"
                + " FROM pg_catalog.pg_locks w"
                + " JOIN pg_catalog.pg_stat_activity wa ON wa.pid = w.pid"
                + " JOIN pg_catalog.pg_locks h ON h.locktype = 'advisory' AND h.granted AND h.pid <> w.pid"
                + " AND h.database IS NOT DISTINCT FROM w.database AND h.classid = w.classid"
                + " AND h.objid = w.objid AND h.objsubid = w.objsubid"
                + " LEFT JOIN pg_catalog.pg_stat_activity ha ON ha.pid = h.pid"
                + " WHERE w.locktype = 'advisory' AND NOT w.granted"
                + " AND " + since + " < clock_timestamp() - (? * interval '1 millisecond')"
                + (byClassId ? " AND w.classid = ?::oid" : "")
                + " ORDER BY 7 DESC";
    }

    private PgLocks() {
    }

    /**
     * {@code COMMIT; LIST_AND_RELEASE} (or ROLLBACK, or the application's own end text). A new line before the
     * semicolon: an application's end text may close with a line comment ({@code COMMIT -- done}), which would
     * otherwise swallow the listing.
     */
    public static String atTransactionEnd(String endCommand) {
        return endCommand + "\n; " + LIST_AND_RELEASE;
    }

    /** At return, outside a transaction: {@code LIST_AND_RELEASE}, plus COMMIT when autocommit is off. */
    public static String atReturn(boolean autoCommit) {
        return LIST_AND_RELEASE + (autoCommit ? "" : "; COMMIT");
    }
}
