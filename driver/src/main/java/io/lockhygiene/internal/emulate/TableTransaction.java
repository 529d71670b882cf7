package io.lockhygiene.internal.emulate;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.locktable.TransactionHolds;
import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.sql.TransactionControl;

/**
 * emulate: the application transaction whose transaction-level locks are in the process's lock table,
 * with the savepoints set since it began there (a lock is taken at the current savepoint depth).
 * Begun at its first transaction-level lock; one connection's thread uses it.
 */
public final class TableTransaction {
    private TransactionId tx;
    private final List<Object> savepoints = new ArrayList<>();

    boolean active() {
        return tx != null;
    }

    /** The transaction a new transaction-level lock belongs to, begun now if need be. */
    TransactionId current() {
        if (tx == null) {
            tx = new TransactionId();
            savepoints.clear();
        }
        return tx;
    }

    /** The savepoint depth a new transaction-level lock is taken at. */
    int level() {
        return savepoints.size();
    }

    /** Forgotten without releasing (the holder released everything already: a loss, a close). */
    void forget() {
        tx = null;
    }

    /** The transaction ended: its holds go. */
    void end(TransactionHolds shared) throws SQLException {
        if (tx != null) {
            TransactionId ended = tx;
            tx = null;
            savepoints.clear();
            shared.releaseTransaction(ended, 0);
        }
    }

    /** An error aborted the innermost (sub)transaction: the holds of its depth go, as PostgreSQL's do. */
    void innermostFailed(TransactionHolds shared) throws SQLException {
        if (tx != null) {
            shared.releaseTransaction(tx, savepoints.size());
        }
    }

    /**
     * The table's view of the application's savepoints: a transaction-level lock is taken at the depth of
     * savepoints set since the table's transaction began; rolling back to one releases the locks taken at
     * its depth or deeper (one set before the table's transaction: all of them); releasing one merges
     * them into the enclosing depth.
     */
    void follow(TransactionControl.Kind kind, Object savepoint, TransactionHolds shared) throws SQLException {
        int i = savepoints.lastIndexOf(savepoint);
        switch (kind) {
            case SAVEPOINT:
                savepoints.add(savepoint);
                break;
            case ROLLBACK_TO:
                shared.releaseTransaction(tx, i + 1);
                savepoints.subList(i + 1, savepoints.size()).clear();
                break;
            case RELEASE:
                if (i >= 0) {
                    shared.mergeTransactionLevel(tx, i + 1);
                    savepoints.subList(i, savepoints.size()).clear();
                }
                break;
            default:
                break;
        }
    }
}
