package io.lockhygiene.internal.emulate;

import java.sql.SQLWarning;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.internal.shape.ShapeText;

/**
 * What one emulated execution gives the JDBC face: the answer made here ({@link #rows}), or the query the
 * server runs instead of the statement, every call replaced by its decided result ({@link #query}), with
 * the warnings of the calls decided here. {@link #finish} ends the statement for the lock table (its
 * transaction-level locks in autocommit go) once the face has run the query.
 */
public final class Outcome {
    private final LocalRows rows;
    private final ShapeText.Query query;
    private final SQLWarning warnings;
    private final Runnable finish;
    private final long statementTimeoutLeftMillis;

    Outcome(LocalRows rows, ShapeText.Query query, SQLWarning warnings, Runnable finish) {
        this(rows, query, warnings, finish, 0);
    }

    Outcome(LocalRows rows, ShapeText.Query query, SQLWarning warnings, Runnable finish, long statementTimeoutLeftMillis) {
        this.rows = rows;
        this.query = query;
        this.warnings = warnings;
        this.finish = finish;
        this.statementTimeoutLeftMillis = statementTimeoutLeftMillis;
    }

    /**
     * What is left of the session's statement_timeout for the server's part of a statement that waited here (its
     * {@link #query}); 0 when it did not wait or has no statement_timeout: the server's own bound applies then.
     */
    public long statementTimeoutLeftMillis() {
        return statementTimeoutLeftMillis;
    }

    /** The answer, made here; null when the server computes it ({@link #query}). */
    public LocalRows rows() {
        return rows;
    }

    /** The text to run instead of the statement (its parameters mapped), or null. */
    public ShapeText.Query query() {
        return query;
    }

    /** PostgreSQL's warnings for the calls decided here, to show before the query's own. */
    public SQLWarning warnings() {
        return warnings;
    }

    /** The statement is over: transaction-level locks of an autocommit statement go. Never throws. */
    public void finish() {
        finish.run();
    }

    /**
     * An answer emulate made itself, as PostgreSQL would have sent it: column labels and types (boolean or
     * void), rows of values in text format, warnings ("you don't own a lock of type ..."), and for a JDBC
     * {@code {? = call}} the value of the out parameter. The JDBC faces turn it into a pgjdbc result set.
     */
    public static final class LocalRows {
        public static final int BOOL = 16;
        public static final int VOID = 2278;
        static final byte[] TRUE = {'t'};
        static final byte[] FALSE = {'f'};
        static final byte[] EMPTY = {};

        private final String[] labels;
        private final int[] types;
        private final List<byte[][]> rows;
        private final SQLWarning warnings;
        private final Object out;
        /** Per row: how many of the warnings PostgreSQL sent before that row (cumulative); null: all before the first. */
        private final int[] noticesBefore;

        LocalRows(String[] labels, int[] types, List<byte[][]> rows, SQLWarning warnings, Object out) {
            this(labels, types, rows, warnings, out, null);
        }

        LocalRows(String[] labels, int[] types, List<byte[][]> rows, SQLWarning warnings, Object out,
                  int[] noticesBefore) {
            this.labels = labels;
            this.types = types;
            this.rows = Collections.unmodifiableList(rows);
            this.warnings = warnings;
            this.out = out;
            this.noticesBefore = noticesBefore;
        }

        /**
         * How many of {@link #warnings} PostgreSQL sends before row {@code row} (from 0): a statement that reads rows
         * sends each row's notices (an unlock of a key not held) as it computes that row, before it.
         */
        public int noticesBefore(int row) {
            if (noticesBefore == null || row >= noticesBefore.length) {
                int n = 0;
                for (SQLWarning w = warnings; w != null; w = w.getNextWarning()) {
                    n++;
                }
                return n;
            }
            return noticesBefore[row];
        }

        public String[] labels() {
            return labels.clone();
        }

        public int[] types() {
            return types.clone();
        }

        public List<byte[][]> rows() {
            return rows;
        }

        public SQLWarning warnings() {
            return warnings;
        }

        /** {@code {? = call f(...)}}: the function's result (Boolean, null, or ShapeEvaluator.VOID). */
        public Object outValue() {
            return out;
        }

        static byte[] text(Object value) {
            if (value == null) {
                return null;
            }
            if (value instanceof Boolean) {
                return (Boolean) value ? TRUE : FALSE;
            }
            return EMPTY; // void
        }
    }
}
