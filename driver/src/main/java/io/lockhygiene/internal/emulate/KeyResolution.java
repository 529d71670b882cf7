package io.lockhygiene.internal.emulate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.shape.KeyArg;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.Node;
import io.lockhygiene.internal.shape.ShapeText;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.holder.KeyCache;
import io.lockhygiene.internal.shape.BindView;

/**
 * The keys of one execution's calls, each exactly as PostgreSQL would take it: read in the JVM where the
 * argument is an integer literal or an integer bind; taken from the holder's cache where an immutable
 * expression was evaluated before with the same bind values; otherwise evaluated by the server, all at once
 * in one round trip on the application's own connection (its transaction, if one is open), with the
 * advisory functions' own argument types (see {@link ShapeText#keyQuery}).
 */
final class KeyResolution {
    private KeyResolution() {
    }

    /**
     * Per call index: the call's key.
     *
     * @param raw the application's connection, where the server evaluates keys the JVM cannot read; null for an
     *            owner without one (R2DBC)
     * @param computed for an owner without a connection: what its front end had the server compute, and what the
     *                 key cache knew then ({@link #toCompute}); a key neither gives is refused (0A000), never guessed
     */
    static CallKey[] keys(LockShape shape, BindView binds, KeyCache cache, Connection raw, ServerKeys computed)
            throws SQLException {
        List<Node.Call> calls = shape.calls();
        List<Node.Call> pending = new ArrayList<>(0);
        KeyValue[][] args = known(shape, binds, cache, pending);
        if (!pending.isEmpty()) {
            if (raw == null) {
                fromServer(shape, pending, binds, cache, computed, args);
            } else {
                evaluate(shape, pending, binds, cache, raw, args);
            }
        }
        CallKey[] keys = new CallKey[calls.size()];
        for (Node.Call c : calls) {
            keys[c.index()] = CallKey.of(args[c.index()]);
        }
        return keys;
    }

    /**
     * For an owner without a connection: what the server must compute of this execution's keys (those neither the
     * JVM nor the key cache knows), or null when nothing.
     */
    static ServerKeys toCompute(LockShape shape, BindView binds, KeyCache cache) {
        List<Node.Call> pending = new ArrayList<>(0);
        KeyValue[][] known = known(shape, binds, cache, pending);
        if (pending.isEmpty() && readsAll(shape, binds)) {
            return null;
        }
        // what the cache knew now is kept with the answer: the cache may let it go before the execution reads it
        return new ServerKeys(pending.isEmpty() ? null : ShapeText.keyQuery(shape, pending), pending, known);
    }

    /**
     * Per call index, per argument: what the JVM reads from the text and the binds, else what the key cache knows
     * of an immutable expression, else null; each call with an argument left unknown is added to {@code pending}.
     */
    private static KeyValue[][] known(LockShape shape, BindView binds, KeyCache cache, List<Node.Call> pending) {
        KeyValue[][] args = new KeyValue[shape.calls().size()][];
        for (Node.Call c : shape.calls()) {
            KeyValue[] values = new KeyValue[c.args().size()];
            boolean pair = values.length == 2;
            boolean known = true;
            for (int i = 0; i < values.length; i++) {
                KeyArg a = c.args().get(i);
                KeyValue v = KeyValues.resolve(a, pair, binds);
                // a view without value signatures finds only the keys that need no binds
                if (v == null && a.cacheable()) {
                    v = cached(cache, shape, a, pair, binds);
                }
                values[i] = v;
                known &= v != null;
            }
            args[c.index()] = values;
            if (!known) {
                pending.add(c);
            }
        }
        return args;
    }

    /** True when the JVM reads every key of the shape's calls from the text and the binds alone (no cache, no server). */
    static boolean readsAll(LockShape shape, BindView binds) {
        for (Node.Call c : shape.calls()) {
            boolean pair = c.args().size() == 2;
            for (KeyArg a : c.args()) {
                if (KeyValues.resolve(a, pair, binds) == null) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The pending keys from what the server computed for the front end; one it did not compute is refused. */
    private static void fromServer(LockShape shape, List<Node.Call> pending, BindView binds, KeyCache cache,
                                   ServerKeys computed, KeyValue[][] args) throws SQLException {
        for (Node.Call c : pending) {
            boolean pair = c.args().size() == 2;
            for (int i = 0; i < c.args().size(); i++) {
                if (args[c.index()][i] != null) {
                    continue;
                }
                KeyValue v = computed == null ? null : computed.value(c.index(), i);
                if (v == null) {
                    throw new SQLException(EmulateMessages.keyNotReadable(c.function().sqlName()), "0A000");
                }
                args[c.index()][i] = v;
                KeyArg a = c.args().get(i);
                if (a.cacheable()) {
                    String key = cacheKey(shape, a, pair, binds);
                    if (key != null) {
                        cache.put(key, v);
                    }
                }
            }
        }
    }

    /**
     * ROWS: one key array per row the statement reads (its rows and their keys in one snapshot). An owner without a
     * connection takes the rows its front end read ({@code computed}, from {@link #rowsToRead}); without them the
     * statement is refused.
     */
    static List<CallKey[]> rows(LockShape shape, BindView binds, Connection raw, ServerKeys computed)
            throws SQLException {
        List<CallKey[]> rows = new ArrayList<>();
        if (raw == null) {
            if (computed == null || computed.rows() == null) {
                throw new SQLException(EmulateMessages.keyNotReadable(shape.calls().get(0).function().sqlName()),
                        "0A000");
            }
            for (List<byte[]> row : computed.rows()) {
                rows.add(rowKeys(shape, column -> column <= row.size() ? row.get(column - 1) : null));
            }
            return rows;
        }
        ShapeText.Query q = ShapeText.rowsQuery(shape);
        try (PreparedStatement ps = raw.prepareStatement(q.sql())) {
            if (binds != null) {
                binds.applyTo(ps, q.parameters());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows.add(rowKeys(shape, rs::getBytes));
                }
            }
        } catch (SQLException e) {
            throw inTheFunctionsWords(e, shape.calls().get(0));
        }
        return rows;
    }

    /** ROWS, for an owner without a connection: the query that reads the rows and their keys. */
    static ServerKeys rowsToRead(LockShape shape) {
        return ServerKeys.ofRows(ShapeText.rowsQuery(shape), shape.calls().get(0));
    }

    /** One row's column (from 1) of the rows query, as bytes. */
    private interface Columns {
        byte[] get(int column) throws SQLException;
    }

    /** The keys of one row of the rows query: each call item's arguments, in order. */
    private static CallKey[] rowKeys(LockShape shape, Columns columns) throws SQLException {
        CallKey[] keys = new CallKey[shape.calls().size()];
        int column = 1;
        for (LockShape.Item item : shape.items()) {
            Node.Call c = (Node.Call) item.expr();
            if (c.args().isEmpty()) {
                column++;
                keys[c.index()] = CallKey.NONE;
                continue;
            }
            KeyValue[] values = new KeyValue[c.args().size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = decode(columns.get(column++));
            }
            keys[c.index()] = CallKey.of(values);
        }
        return keys;
    }

    private static KeyValue cached(KeyCache cache, LockShape shape, KeyArg a, boolean pair, BindView binds) {
        String key = cacheKey(shape, a, pair, binds);
        return key == null ? null : cache.get(key);
    }

    private static String cacheKey(LockShape shape, KeyArg a, boolean pair, BindView binds) {
        String values = a.parameters().length == 0 ? "" : binds == null ? null : binds.valueSignature(a.parameters());
        if (values == null) {
            return null;
        }
        return (pair ? "int4 " : "int8 ") + a.textIn(shape.sql()) + '\u0000' + values;
    }

    private static void evaluate(LockShape shape, List<Node.Call> pending, BindView binds, KeyCache cache,
                                 Connection raw, KeyValue[][] args) throws SQLException {
        ShapeText.Query q = ShapeText.keyQuery(shape, pending);
        try (PreparedStatement ps = raw.prepareStatement(q.sql())) {
            if (binds != null) {
                binds.applyTo(ps, q.parameters());
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                int column = 1;
                for (Node.Call c : pending) {
                    boolean pair = c.args().size() == 2;
                    for (int i = 0; i < c.args().size(); i++) {
                        KeyValue v = decode(rs.getBytes(column++));
                        args[c.index()][i] = v;
                        KeyArg a = c.args().get(i);
                        if (a.cacheable()) {
                            String key = cacheKey(shape, a, pair, binds);
                            if (key != null) {
                                cache.put(key, v);
                            }
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw inTheFunctionsWords(e, pending.get(0));
        }
    }

    /** int8send / int4send bytes (big-endian) to the value; SQL NULL to {@link KeyValue#NULL}. */
    static KeyValue decode(byte[] bytes) {
        if (bytes == null) {
            return KeyValue.NULL;
        }
        long v = 0;
        for (byte b : bytes) {
            v = (v << 8) | (b & 0xFF);
        }
        return KeyValue.of(bytes.length == 4 ? (long) (int) v : v);
    }

    /**
     * The key query names int8send / int4send where PostgreSQL would name the advisory function ("function
     * pg_try_advisory_lock(character varying) does not exist"): the same error, in the function's words.
     */
    static SQLException inTheFunctionsWords(SQLException e, Node.Call call) {
        String m = e.getMessage();
        if (m == null || !(m.contains("int8send") || m.contains("int4send"))) {
            return e;
        }
        String words = m.replace("pg_catalog.int8send", call.function().sqlName())
                .replace("pg_catalog.int4send", call.function().sqlName()).replace("int8send", call.function().sqlName())
                .replace("int4send", call.function().sqlName());
        SQLException same = new SQLException(words, e.getSQLState(), e.getErrorCode(), e);
        return same;
    }

    /**
     * What one advisory call of an execution works on: a key, no key at all ({@code pg_advisory_unlock_all}),
     * or a NULL argument (the call does nothing and answers NULL).
     */
    static final class CallKey {
        /** pg_advisory_unlock_all takes no key. */
        static final CallKey NONE = new CallKey(null, false);
        /** A NULL argument. */
        static final CallKey NULL = new CallKey(null, true);

        private final AdvisoryKey key;
        private final boolean isNull;

        private CallKey(AdvisoryKey key, boolean isNull) {
            this.key = key;
            this.isNull = isNull;
        }

        /** The key of a call's argument values (one bigint, or two ints), NULL when one of them is. */
        static CallKey of(KeyValue[] values) {
            if (values.length == 0) {
                return NONE;
            }
            for (KeyValue v : values) {
                if (v.isNull()) {
                    return NULL;
                }
            }
            return new CallKey(values.length == 1 ? AdvisoryKey.bigint(values[0].value())
                    : AdvisoryKey.pair((int) values[0].value(), (int) values[1].value()), false);
        }

        boolean isNull() {
            return isNull;
        }

        /** The key, or null for NONE and NULL. */
        AdvisoryKey key() {
            return key;
        }

        @Override
        public String toString() {
            return isNull ? "NULL" : key == null ? "no key" : key.toString();
        }
    }
}
