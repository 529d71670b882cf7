package io.lockhygiene.r2dbc.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import org.reactivestreams.Publisher;

/**
 * A statement whose text passed the prefilter (or whose owner holds emulated locks): its bindings are kept here
 * and the driver's statement is made only at execution, with the text the plan says (the application's, or
 * rewrite's) and the bindings replayed in order; or none is made, when emulate answers or the statement is
 * refused. What the application set (fetch size, generated values) goes with it.
 */
final class GuardedStatement implements Statement {
    private final R2dbcGuard guard;
    final String sql;
    /** The text passed the prefilter: where the application executes it is kept (its stack) for reports. */
    final boolean flagged;
    /** The leak check's autocommit sample took its turn on this statement ({@code lockhygiene.leakCheckSample}). */
    final boolean sampled;
    /** Where the application called {@link #execute} (its own stack: the execution runs on other threads). */
    Throwable callSite;
    /** The bindings before {@link #current} ({@link #add}); null until the first add, the common case. */
    private List<R2dbcBinds> added;
    private R2dbcBinds current = new R2dbcBinds();
    private int fetchSize = -1;
    private String[] generatedColumns;

    GuardedStatement(R2dbcGuard guard, String sql, boolean flagged, boolean sampled) {
        this.guard = guard;
        this.sql = sql;
        this.flagged = flagged;
        this.sampled = sampled;
    }

    @Override
    public Statement add() {
        if (added == null) {
            added = new ArrayList<>(2);
        }
        added.add(current);
        current = new R2dbcBinds();
        return this;
    }

    @Override
    public Statement bind(int index, Object value) {
        current.bind(index, value);
        return this;
    }

    @Override
    public Statement bind(String name, Object value) {
        current.bind(name, value);
        return this;
    }

    @Override
    public Statement bindNull(int index, Class<?> type) {
        current.bindNull(index, type);
        return this;
    }

    @Override
    public Statement bindNull(String name, Class<?> type) {
        current.bindNull(name, type);
        return this;
    }

    @Override
    public Statement returnGeneratedValues(String... columns) {
        this.generatedColumns = columns.clone();
        return this;
    }

    @Override
    public Statement fetchSize(int rows) {
        this.fetchSize = rows;
        return this;
    }

    @Override
    public Publisher<? extends Result> execute() {
        if (flagged) {
            callSite = io.lockhygiene.internal.leak.CallSite.capture("session-level advisory lock call sent here");
        }
        return guard.execute(this);
    }

    boolean hasBindings() {
        return added != null || !current.isEmpty();
    }

    /** Each binding the statement executes with, in order (one, possibly empty, when none was added). */
    List<R2dbcBinds> bindings() {
        if (added == null) {
            return Collections.singletonList(current);
        }
        List<R2dbcBinds> all = new ArrayList<>(added);
        if (!current.isEmpty()) {
            all.add(current);
        }
        return all;
    }

    /** The driver's statement for {@code text} on {@code connection}, with everything the application set. */
    Statement real(Connection connection, String text) {
        Statement s = connection.createStatement(text);
        if (added != null) {
            for (R2dbcBinds b : added) {
                b.applyTo(s);
                s.add();
            }
        }
        current.applyTo(s);
        if (fetchSize >= 0) {
            s.fetchSize(fetchSize);
        }
        if (generatedColumns != null) {
            s.returnGeneratedValues(generatedColumns);
        }
        return s;
    }
}
