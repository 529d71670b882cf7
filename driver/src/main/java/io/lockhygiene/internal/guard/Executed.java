package io.lockhygiene.internal.guard;

import java.sql.Statement;

import io.lockhygiene.internal.emulate.Outcome;

/**
 * What one execution on the guard's slow path returns to the JDBC face: the JDBC method's own value, and where
 * the application reads the results until its next execution (null: its own pgjdbc statement) with emulate's
 * outcome when emulate answered (else null). The guard decides; the face only shows it.
 */
public final class Executed<R> {
    private final R value;
    private final Statement shownOn;
    private final Outcome outcome;

    private Executed(R value, Statement shownOn, Outcome outcome) {
        this.value = value;
        this.shownOn = shownOn;
        this.outcome = outcome;
    }

    /** Ran on the application's own statement: its results are read there. */
    static <R> Executed<R> onApp(R value) {
        return new Executed<>(value, null, null);
    }

    /** The results are read from {@code shownOn} (a statement of ours or an answer made here). */
    static <R> Executed<R> shownOn(R value, Statement shownOn, Outcome outcome) {
        return new Executed<>(value, shownOn, outcome);
    }

    /** The JDBC method's value (a ResultSet, a count, execute's boolean). */
    public R value() {
        return value;
    }

    /** Where the results are read; null for the application's own statement. */
    public Statement shownOn() {
        return shownOn;
    }

    /** emulate's outcome of this execution, or null. */
    public Outcome outcome() {
        return outcome;
    }
}
