package io.lockhygiene.leak;

/**
 * The SQL of the leak check. Sent as one text with the transaction's end (the brief's piggyback):
 * pgjdbc sends the statements with one Sync, so a transaction pooler keeps the same backend for all of
 * them, and after COMMIT or ROLLBACK only session-level locks can remain, so the listing is exactly
 * the leaked ones.
 */
public final class LeakCheckSql {
    /** Our backend's granted advisory locks: classid, objid, objsubid, mode, pid. */
    public static final String LIST = "SELECT l.classid, l.objid, l.objsubid, l.mode, pg_catalog.pg_backend_pid()"
            + " FROM pg_catalog.pg_locks l WHERE l.locktype = 'advisory' AND l.pid = pg_catalog.pg_backend_pid()"
            + " AND l.granted";
    /** Releases every session-level advisory lock of the backend (transaction-level ones stay). */
    public static final String RELEASE = "SELECT pg_catalog.pg_advisory_unlock_all()";

    private LeakCheckSql() {
    }

    /** {@code COMMIT; LIST; RELEASE} (or ROLLBACK). */
    public static String atTransactionEnd(String endCommand) {
        return endCommand + "; " + LIST + "; " + RELEASE;
    }

    /** At return, outside a transaction: {@code LIST; RELEASE}, plus COMMIT when autocommit is off. */
    public static String atReturn(boolean autoCommit) {
        return LIST + "; " + RELEASE + (autoCommit ? "" : "; COMMIT");
    }
}
