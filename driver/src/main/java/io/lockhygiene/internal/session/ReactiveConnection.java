package io.lockhygiene.internal.session;

import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The port a reactive front end implements for its connection, so that the statements of LockHygiene's own
 * ({@link ReactiveSession}: transaction ends with the fence and the leak check, the check at close, the pooler's
 * detection, the SKIP LOCKED catalog) are sequenced once for every reactive driver: R2DBC's now, Vert.x's
 * {@code SqlClient} next. Nothing here blocks: a method that talks to the server returns a stage at once.
 *
 * <p>The driver's own errors pass through the core unchanged (a stage failed with them); the core's own failures
 * are {@link SQLException}s, which the front end shows in its driver's words.
 */
public interface ReactiveConnection {
    /**
     * Sends {@code text} (one simple-query text, which may hold several statements: {@code <fence>; COMMIT;
     * <list and release>}) where the application's own statements are sent, so that whatever watches them sees
     * this too; completes with the rows of all its results in order, or fails with the driver's error.
     */
    CompletionStage<List<Row>> send(String text);

    /**
     * A query of ours that the application's watchers need not see (the catalog, the backend pid), with
     * {@code $1}, {@code $2}, ... bound to {@code parameters}; completes with its rows, or fails with the driver's
     * error.
     */
    CompletionStage<List<Row>> query(String sql, Object... parameters);

    /** The driver's own end, as the application's API asks for it (R2DBC's commitTransaction()): its state follows. */
    CompletionStage<Void> driverEnd(boolean commit);

    /** The server reported a transaction open (its last ReadyForQuery). */
    boolean serverInTransaction();

    /** The server reported the open transaction failed (every statement until its end gets 25P02). */
    boolean serverTransactionFailed();

    /** The application's transaction is open: on the server, or begun and not sent yet. */
    boolean inTransaction();

    /**
     * True, once, when the application's transaction ends before its BEGIN was ever sent (emulate defers it to the
     * first statement that needs the server): there is nothing to send, and the BEGIN is forgotten.
     */
    boolean dropUnsentBegin();

    /** The backend pid the driver was announced at start-up (BackendKeyData), or null when it cannot be read. */
    Integer announcedPid();

    /** Where the core's work that may wait (the lock table's lock, the holder's round trips) runs: never an event loop. */
    Executor blocking();

    /** The driver's error for the commit of a transaction the server reported failed, as its own commit raises it. */
    Throwable failedCommit();

    /** A driver's error as the core reads a server's error: its SQLState and message kept. */
    SQLException toSql(Throwable driverError);

    /** One row of a result: its columns' names, and their values as the driver reads them without being told a type. */
    final class Row {
        private final List<String> columns;
        private final Object[] values;

        public Row(List<String> columns, Object[] values) {
            this.columns = columns;
            this.values = values;
        }

        public List<String> columns() {
            return columns;
        }

        /** The value of column {@code index} (from 0). */
        public Object value(int index) {
            return values[index];
        }
    }
}
