package io.lockhygiene.internal.emulate;

import java.sql.SQLWarning;

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

    Outcome(LocalRows rows, ShapeText.Query query, SQLWarning warnings, Runnable finish) {
        this.rows = rows;
        this.query = query;
        this.warnings = warnings;
        this.finish = finish;
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
}
