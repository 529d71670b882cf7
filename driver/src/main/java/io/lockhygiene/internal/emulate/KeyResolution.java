package io.lockhygiene.internal.emulate;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.emulate.KeyValues;
import io.lockhygiene.internal.guard.Binds;
import io.lockhygiene.internal.holder.KeyCache;
import io.lockhygiene.internal.shape.KeyArg;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.Node;
import io.lockhygiene.internal.shape.ShapeText;

/**
 * The keys of one execution's calls, each exactly as PostgreSQL would take it: read in the JVM where the
 * argument is an integer literal or an integer bind; taken from the holder's cache where an immutable
 * expression was evaluated before with the same bind values; otherwise evaluated by the server, all at once
 * in one round trip on the application's own connection (its transaction, if one is open), with the
 * advisory functions' own argument types (see {@link ShapeText#keyQuery}).
 */
final class KeyResolution {
    /** The key of a call that takes none (pg_advisory_unlock_all). */
    static final Object NO_KEY = new Object();

    private KeyResolution() {
    }

    /** Per call index: an AdvisoryKey, {@link KeyValues#NULL} (the call returns NULL) or {@link #NO_KEY}. */
    static Object[] keys(LockShape shape, Binds binds, KeyCache cache, Connection raw) throws SQLException {
        List<Node.Call> calls = shape.calls();
        Object[][] args = new Object[calls.size()][];
        List<Node.Call> pending = new ArrayList<>(0);
        for (Node.Call c : calls) {
            Object[] values = new Object[c.args().size()];
            boolean pair = values.length == 2;
            boolean known = true;
            for (int i = 0; i < values.length; i++) {
                KeyArg a = c.args().get(i);
                Object v = KeyValues.resolve(a, pair, binds);
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
        if (!pending.isEmpty()) {
            evaluate(shape, pending, binds, cache, raw, args);
        }
        Object[] keys = new Object[calls.size()];
        for (Node.Call c : calls) {
            keys[c.index()] = key(args[c.index()]);
        }
        return keys;
    }

    /** ROWS: one key array per row the statement reads (its rows and their keys in one snapshot). */
    static List<Object[]> rows(LockShape shape, Binds binds, Connection raw) throws SQLException {
        ShapeText.Query q = ShapeText.rowsQuery(shape);
        List<Object[]> rows = new ArrayList<>();
        try (PreparedStatement ps = raw.prepareStatement(q.sql())) {
            if (binds != null) {
                binds.applyTo(ps, q.parameters());
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Object[] keys = new Object[shape.calls().size()];
                    int column = 1;
                    for (LockShape.Item item : shape.items()) {
                        Node.Call c = (Node.Call) item.expr();
                        if (c.args().isEmpty()) {
                            column++;
                            keys[c.index()] = NO_KEY;
                            continue;
                        }
                        Object[] values = new Object[c.args().size()];
                        for (int i = 0; i < values.length; i++) {
                            values[i] = decode(rs.getBytes(column++));
                        }
                        keys[c.index()] = key(values);
                    }
                    rows.add(keys);
                }
            }
        } catch (SQLException e) {
            throw inTheFunctionsWords(e, shape.calls().get(0));
        }
        return rows;
    }

    private static Object cached(KeyCache cache, LockShape shape, KeyArg a, boolean pair, Binds binds) {
        String key = cacheKey(shape, a, pair, binds);
        return key == null ? null : cache.get(key);
    }

    private static String cacheKey(LockShape shape, KeyArg a, boolean pair, Binds binds) {
        String values = a.parameters().length == 0 ? "" : binds == null ? null : binds.valueSignature(a.parameters());
        if (values == null) {
            return null;
        }
        return (pair ? "int4 " : "int8 ") + a.textIn(shape.sql()) + '\u0000' + values;
    }

    private static void evaluate(LockShape shape, List<Node.Call> pending, Binds binds, KeyCache cache,
                                 Connection raw, Object[][] args) throws SQLException {
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
                        Object v = decode(rs.getBytes(column++));
                        args[c.index()][i] = v;
                        KeyArg a = c.args().get(i);
                        if (a.cacheable()) {
                            String key = cacheKey(shape, a, pair, binds);
                            if (key != null) {
                                cache.put(key, v == KeyValues.NULL ? KeyCache.NULL : v);
                            }
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw inTheFunctionsWords(e, pending.get(0));
        }
    }

    /** int8send / int4send bytes (big-endian) to a Long; NULL to {@link KeyValues#NULL}. */
    private static Object decode(byte[] bytes) {
        if (bytes == null) {
            return KeyValues.NULL;
        }
        long v = 0;
        for (byte b : bytes) {
            v = (v << 8) | (b & 0xFF);
        }
        return bytes.length == 4 ? (long) (int) v : v;
    }

    private static Object key(Object[] values) {
        if (values.length == 0) {
            return NO_KEY;
        }
        for (Object v : values) {
            if (v == KeyValues.NULL || v == KeyCache.NULL) {
                return KeyValues.NULL; // the functions are strict: a NULL key calls nothing, the answer is NULL
            }
        }
        if (values.length == 1) {
            return AdvisoryKey.bigint((Long) values[0]);
        }
        return AdvisoryKey.pair((int) (long) (Long) values[0], (int) (long) (Long) values[1]);
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
}
