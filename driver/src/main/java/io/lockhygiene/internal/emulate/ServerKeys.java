package io.lockhygiene.internal.emulate;

import java.sql.SQLException;
import java.util.List;

import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.shape.BindView;
import io.lockhygiene.internal.shape.KeyArg;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.Node;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * The keys of one execution's calls that only the server can compute ({@code hashtext($1)}, a text bind), for an
 * owner without a JDBC connection (R2DBC): the query its front end sends on the application's own connection, in
 * its own way (without blocking), and, once answered, the values {@link Emulation#execute} takes them from. The
 * same query JDBC's owners send themselves ({@link ShapeText#keyQuery}: {@code int8send} and {@code int4send}
 * take exactly the advisory functions' argument types, so PostgreSQL resolves and converts the arguments as the
 * function would, and says what it would say of a wrong one).
 */
public final class ServerKeys {
    /** The query, with JDBC's {@code ?} for each parameter. */
    private final String sql;
    /** Parameter i + 1 of {@link #sql} is the application's parameter {@code parameters[i]}. */
    private final int[] parameters;
    private final List<Node.Call> pending;
    /** Per call index, per argument: the value the JVM read, the key cache knew or the server gave; null until then. */
    private final KeyValue[][] values;
    private final boolean immutable;
    /** ROWS: the query reads rows of a table, each with its keys; false for one row of computed keys. */
    private final boolean readsRows;
    private List<List<byte[]>> rows;

    /**
     * @param query what the server must compute, or null when the key cache knew it all
     * @param known per call index, per argument: what the JVM read or the key cache knew, else null
     */
    ServerKeys(ShapeText.Query query, List<Node.Call> pending, KeyValue[][] known) {
        this(query, pending, known, false);
    }

    private ServerKeys(ShapeText.Query query, List<Node.Call> pending, KeyValue[][] known, boolean readsRows) {
        this.sql = query == null ? null : query.sql();
        this.parameters = query == null ? new int[0] : query.parameters();
        this.pending = pending;
        this.readsRows = readsRows;
        this.values = known;
        boolean all = true;
        for (Node.Call c : pending) {
            for (KeyArg a : c.args()) {
                all &= a.cacheable();
            }
        }
        this.immutable = all && !readsRows; // rows are read in the application's transaction, its snapshot
    }

    /** ROWS ({@code SELECT pg_try_advisory_lock(id) FROM jobs WHERE ...}): the statement's rows with their keys. */
    static ServerKeys ofRows(ShapeText.Query query, Node.Call first) {
        return new ServerKeys(query, java.util.Collections.singletonList(first), new KeyValue[0][], true);
    }

    /** True when the query reads rows of a table (every row it returns), not one row of computed keys. */
    public boolean readsRows() {
        return readsRows;
    }

    /** ROWS: every row the query returned, each its columns' bytes, in order. */
    public void answeredRows(List<List<byte[]>> rows) {
        this.rows = rows;
    }

    /** ROWS: the rows the front end read, or null. */
    List<List<byte[]>> rows() {
        return rows;
    }

    /**
     * True when the JVM cannot read some key of {@code shape}'s calls from the text and {@code binds} alone, so the
     * front end asks {@link Emulation#keysToCompute} first. No lock, no round trip: a reactive front end asks it on
     * an event loop.
     */
    public static boolean mayBeNeeded(LockShape shape, BindView binds) {
        return shape.form() == LockShape.Form.ROWS || !KeyResolution.readsAll(shape, binds);
    }

    /** True when there is a query to send; false when the key cache knew every key the JVM cannot read. */
    public boolean asks() {
        return sql != null;
    }

    /** The query, with JDBC's {@code ?} for each parameter. */
    public String sql() {
        return sql;
    }

    /** Parameter i + 1 of {@link #sql} is the application's parameter {@code parameters()[i]}. */
    public int[] parameters() {
        return parameters.clone();
    }

    /**
     * True when every key it computes is a function of its inputs alone (hashes, casts of binds and literals): any
     * session of the database gives the same value, so it need not run inside the application's transaction.
     */
    public boolean immutable() {
        return immutable;
    }

    /** The query's one row: each column's bytes ({@code int8send}, {@code int4send}), null for SQL NULL. */
    public void answered(List<byte[]> columns) {
        int column = 0;
        for (Node.Call c : pending) {
            KeyValue[] v = new KeyValue[c.args().size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = KeyResolution.decode(column < columns.size() ? columns.get(column) : null);
                column++;
            }
            values[c.index()] = v; // the query computes every argument of a pending call
        }
    }

    /**
     * The query failed: the error the application gets, the server's own for its statement (where it names
     * {@code int8send} or {@code int4send}, PostgreSQL would have named the advisory function, so it does).
     */
    public SQLException failed(SQLException serverError) {
        return KeyResolution.inTheFunctionsWords(serverError, pending.get(0));
    }

    /** Argument {@code arg} of call {@code call}: what the JVM read, the key cache knew or the server gave, or null. */
    KeyValue value(int call, int arg) {
        KeyValue[] v = call < values.length ? values[call] : null;
        return v == null ? null : v[arg];
    }
}
