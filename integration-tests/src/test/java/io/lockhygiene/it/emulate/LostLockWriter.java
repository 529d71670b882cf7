package io.lockhygiene.it.emulate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Worker A of the lost-lock scenario (issue 33): takes its job's session lock, then writes one row every
 * 5 ms, each its own commit (autocommit, a prepared INSERT, or the same as a batch) or in a transaction of its own
 * (BEGIN, INSERT, commit()), until told to stop or until a write fails: a worker whose lock is gone stops, as one whose
 * session died would. Shared by the in-process test and the agent's child JVM ({@link LostLockWriterMain}).
 */
final class LostLockWriter {
    /** How each row is committed: its own autocommit INSERT, a transaction of its own, a batch of one in autocommit. */
    enum Style {
        AUTOCOMMIT, TRANSACTION, BATCH,
        /** The transaction begun and ended as text (BEGIN, COMMIT), as psql-minded code and migration tools do. */
        TEXT_TRANSACTION,
        /** One BEGIN as text, then each write committed with COMMIT AND CHAIN (the next transaction opens at once). */
        CHAINED,
        /** BEGIN and COMMIT as prepared statements (as some frameworks send every text). */
        PREPARED_ENDS,
        /** Two INSERTs in one text in autocommit: one implicit transaction, committed at the text's end. */
        SEVERAL,
        /** One text that begins and commits a transaction and goes on after its COMMIT: {@code BEGIN; INSERT; COMMIT; SELECT 1}. */
        COMMIT_MID_TEXT,
        /** An autocommit INSERT with a SKIP LOCKED subquery (a job queue's shape), which the prefilter flags. */
        SKIP_LOCKED
    }

    /** What the writer did: rows it saw committed, and its first error (SQLState, wall-clock millis), if any. */
    static final class Result {
        int committed;
        String errorState;
        String errorMessage;
        long errorAtMillis;

        @Override
        public String toString() {
            return committed + " rows committed" + (errorState == null ? ", no error" : ", then " + errorState);
        }
    }

    private LostLockWriter() {
    }

    static void createTable(Connection direct) throws SQLException {
        try (Statement s = direct.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lost_rows (id bigserial PRIMARY KEY, run text NOT NULL, worker text NOT NULL)");
        }
    }

    /**
     * Takes {@code key} (pg_advisory_lock), counts {@code locked} down, and writes until {@code stop} or the
     * first error.
     */
    static Result run(Connection a, long key, String run, Style style, CountDownLatch locked, AtomicBoolean stop)
            throws SQLException, InterruptedException {
        return run(a, key, run, style, locked, stop, null);
    }

    /** One row, inserted by a statement with a SKIP LOCKED subquery (that locks nothing: it finds no row). */
    static String skipLocked(String run) {
        return "INSERT INTO lost_rows (run, worker) SELECT '" + run.replace("'", "''") + "', 'A' WHERE NOT EXISTS"
                + " (SELECT 1 FROM lost_rows l WHERE false FOR UPDATE SKIP LOCKED)";
    }

    /** What a pool does for an application whose connection broke: hands it another one. */
    interface Reconnect {
        Connection connect() throws SQLException;
    }

    /**
     * @param reconnect for the plain-pgjdbc control only: on a broken connection (08, 57P01) A goes on with a
     *                  new one, as an application behind a pool would, still believing it holds its lock; null:
     *                  the first error stops A
     */
    static Result run(Connection a, long key, String run, Style style, CountDownLatch locked, AtomicBoolean stop,
                      Reconnect reconnect) throws SQLException, InterruptedException {
        Result r = new Result();
        try (Statement s = a.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")");
        }
        locked.countDown();
        Connection current = a;
        PreparedStatement insert = a.prepareStatement("INSERT INTO lost_rows (run, worker) VALUES (?, 'A')");
        try {
            while (!stop.get()) {
                try {
                    if (style == Style.TRANSACTION) {
                        current.setAutoCommit(false);
                    }
                    if (style == Style.TEXT_TRANSACTION || (style == Style.CHAINED && r.committed == 0)) {
                        try (Statement begin = current.createStatement()) {
                            begin.execute("BEGIN");
                        }
                    } else if (style == Style.PREPARED_ENDS) {
                        try (PreparedStatement begin = current.prepareStatement("BEGIN")) {
                            begin.execute();
                        }
                    }
                    insert.setString(1, run);
                    String literal = "INSERT INTO lost_rows (run, worker) VALUES ('" + run.replace("'", "''") + "', 'A')";
                    if (style == Style.SEVERAL || style == Style.COMMIT_MID_TEXT || style == Style.SKIP_LOCKED) {
                        try (Statement text = current.createStatement()) {
                            text.execute(style == Style.SEVERAL ? literal + "; " + literal
                                    : style == Style.SKIP_LOCKED ? skipLocked(run)
                                    : "BEGIN; " + literal + "; COMMIT; SELECT 1");
                        }
                    } else if (style == Style.BATCH) {
                        insert.addBatch();
                        insert.executeBatch();
                    } else {
                        insert.executeUpdate();
                    }
                    if (style == Style.TRANSACTION) {
                        current.commit();
                        current.setAutoCommit(true);
                    }
                    if (style == Style.TEXT_TRANSACTION || style == Style.CHAINED) {
                        try (Statement commit = current.createStatement()) {
                            commit.execute(style == Style.CHAINED ? "COMMIT AND CHAIN" : "COMMIT");
                        }
                    } else if (style == Style.PREPARED_ENDS) {
                        try (PreparedStatement commit = current.prepareStatement("COMMIT")) {
                            commit.execute();
                        }
                    }
                    r.committed++;
                } catch (SQLException e) {
                    if (r.errorState == null) {
                        r.errorAtMillis = System.currentTimeMillis();
                        r.errorState = e.getSQLState();
                        r.errorMessage = e.getMessage();
                    }
                    String state = e.getSQLState() == null ? "" : e.getSQLState();
                    if (reconnect == null || !(state.startsWith("08") || state.equals("57P01"))) {
                        return r;
                    }
                    insert.close();
                    if (current != a) {
                        current.close();
                    }
                    current = reconnect.connect();
                    insert = current.prepareStatement("INSERT INTO lost_rows (run, worker) VALUES (?, 'A')");
                }
                Thread.sleep(5);
            }
        } finally {
            insert.close();
            if (current != a) {
                current.close();
            }
        }
        return r;
    }
}
