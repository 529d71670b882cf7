package io.lockhygiene.internal.locktable;

import java.sql.SQLException;

/**
 * Where a transaction's transaction-level holds live (the process's lock holder, over its table): what an
 * application transaction's end, an error and its savepoints do to them.
 */
public interface TransactionHolds {
    /** The holds of {@code tx} taken at savepoint depth {@code level} or deeper go (an end, a rollback to). */
    void releaseTransaction(TransactionId tx, int level) throws SQLException;

    /** RELEASE SAVEPOINT at depth {@code level}: its holds belong to the enclosing depth now. */
    void mergeTransactionLevel(TransactionId tx, int level);
}
