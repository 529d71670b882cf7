package io.lockhygiene.internal.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.emulate.KeyResolution.CallKey;
import io.lockhygiene.internal.guard.Binds;
import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import org.junit.jupiter.api.Test;
import io.lockhygiene.internal.holder.KeyCache;

/**
 * An execution's keys where the JVM knows them (no server is asked: the connection passed is null, and any
 * round trip would fail), the values the server sends back decoded, and its errors in the function's words.
 */
class KeyResolutionTest {

    private static List<String> keysOf(String sql, Binds binds, KeyCache cache) throws SQLException {
        LockShape shape = ShapeParser.parse(sql);
        List<String> out = new ArrayList<>();
        for (CallKey k : KeyResolution.keys(shape, binds, cache, null, null)) {
            out.add(k.toString());
        }
        return out;
    }

    @Test
    void keysKnownInTheJvmNeedNoServer() throws SQLException {
        Binds binds = new Binds();
        binds.set(1, "setInt", (ps, i) -> ps.setInt(i, 7), 7);
        binds.set(2, "setNull", (ps, i) -> ps.setNull(i, java.sql.Types.BIGINT), java.sql.Types.BIGINT);
        assertEquals(List.of("1", "7, 2", "no key", "NULL", "NULL"), keysOf("SELECT pg_try_advisory_lock(1),"
                + " pg_try_advisory_lock(?, 2), pg_advisory_unlock_all(), pg_try_advisory_lock(NULL),"
                + " pg_try_advisory_lock(?)", binds, new KeyCache()));
    }

    @Test
    void anImmutableExpressionSeenBeforeComesFromTheCache() throws SQLException {
        KeyCache cache = new KeyCache();
        Binds binds = new Binds();
        binds.set(1, "setString", (ps, i) -> ps.setString(i, "job"), "job");
        cache.put("int8 hashtext(?)\u0000" + binds.valueSignature(new int[] {1}), KeyValue.of(-5));
        cache.put("int4 hashtext('b')\u0000", KeyValue.NULL);
        assertEquals(List.of("-5"), keysOf("SELECT pg_try_advisory_lock(hashtext(?))", binds, cache));
        assertEquals(List.of("NULL"), keysOf("SELECT pg_try_advisory_lock(1, hashtext('b'))", null, cache),
                "a NULL the server computed before is NULL again");
    }

    /**
     * An owner without a connection (R2DBC): what the server must compute is asked once, as one query, and the answer
     * fills the keys (and the cache); what the JVM reads is not asked; a key left unanswered is refused, not guessed.
     */
    @Test
    void keysTheServerComputesForAnOwnerWithoutAConnection() throws SQLException {
        KeyCache cache = new KeyCache();
        Binds binds = new Binds();
        binds.set(1, "setString", (ps, i) -> ps.setString(i, "job"), "job");
        LockShape shape = ShapeParser.parse("SELECT pg_try_advisory_lock(7), pg_try_advisory_lock(3, hashtext(?))");
        assertTrue(ServerKeys.mayBeNeeded(shape, binds));
        Binds ints = new Binds();
        ints.set(1, "setInt", (ps, i) -> ps.setInt(i, 9), 9);
        assertFalse(ServerKeys.mayBeNeeded(ShapeParser.parse("SELECT pg_try_advisory_lock(7, ?)"), ints),
                "integer literals and binds: decided in the JVM");
        SQLException refused = assertThrows(SQLException.class, () -> KeyResolution.keys(shape, binds, cache, null, null));
        assertEquals("0A000", refused.getSQLState());
        ServerKeys asked = KeyResolution.toCompute(shape, binds, cache);
        assertEquals("SELECT pg_catalog.int4send((3)), pg_catalog.int4send((hashtext(?)))", asked.sql(),
                "only the call the JVM cannot read, both its arguments");
        assertEquals("[1]", java.util.Arrays.toString(asked.parameters()));
        assertTrue(asked.immutable());
        asked.answered(List.of(new byte[] {0, 0, 0, 3}, new byte[] {-1, -1, -1, -2}));
        List<String> keys = new ArrayList<>();
        for (CallKey k : KeyResolution.keys(shape, binds, cache, null, asked)) {
            keys.add(k.toString());
        }
        assertEquals(List.of("7", "3, -2"), keys);
        ServerKeys known = KeyResolution.toCompute(shape, binds, cache);
        assertFalse(known.asks(), "kept in the cache: nothing to ask the next time");
        List<String> again = new ArrayList<>();
        for (CallKey k : KeyResolution.keys(shape, binds, new KeyCache(), null, known)) {
            again.add(k.toString());
        }
        assertEquals(List.of("7", "3, -2"), again, "what the cache knew is kept, should it let go before the execution");
        assertNull(KeyResolution.toCompute(ShapeParser.parse("SELECT pg_try_advisory_lock(7)"), null, cache));
        assertTrue(!KeyResolution.toCompute(ShapeParser.parse("SELECT pg_try_advisory_lock(length(current_user))"), null,
                cache).immutable(), "not a function of its inputs alone: asked inside the transaction");
    }

    /** ROWS for an owner without a connection: the statement's rows and their keys read by its front end. */
    @Test
    void keysReadFromRowsForAnOwnerWithoutAConnection() throws SQLException {
        LockShape shape = ShapeParser.parse("SELECT pg_try_advisory_lock(id) FROM jobs WHERE status = 'new'");
        assertTrue(ServerKeys.mayBeNeeded(shape, null));
        assertThrows(SQLException.class, () -> KeyResolution.rows(shape, null, null, null), "never guessed");
        ServerKeys asked = KeyResolution.rowsToRead(shape);
        assertTrue(asked.readsRows());
        assertFalse(asked.immutable(), "read in the application's transaction, its snapshot");
        assertEquals("SELECT pg_catalog.int8send((id)) FROM jobs WHERE status = 'new'", asked.sql());
        asked.answeredRows(List.of(List.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 5}), List.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 6})));
        List<String> keys = new ArrayList<>();
        for (CallKey[] row : KeyResolution.rows(shape, null, null, asked)) {
            keys.add(row[0].toString());
        }
        assertEquals(List.of("5", "6"), keys);
    }

    @Test
    void callKeys() {
        assertSame(CallKey.NONE, CallKey.of(new KeyValue[0]));
        assertSame(CallKey.NULL, CallKey.of(new KeyValue[] {KeyValue.of(1), KeyValue.NULL}));
        assertEquals(AdvisoryKey.bigint(-1), CallKey.of(new KeyValue[] {KeyValue.of(-1)}).key());
        assertEquals(AdvisoryKey.pair(-1, 2), CallKey.of(new KeyValue[] {KeyValue.of(-1), KeyValue.of(2)}).key());
        assertTrue(CallKey.NULL.isNull());
        assertNull(CallKey.NONE.key());
    }

    @Test
    void serverValuesAreDecodedAsTheirTypes() {
        assertEquals(KeyValue.NULL, KeyResolution.decode(null));
        assertEquals(KeyValue.of(-1), KeyResolution.decode(new byte[] {-1, -1, -1, -1}), "int4send: signed");
        assertEquals(KeyValue.of(4294967295L), KeyResolution.decode(new byte[] {0, 0, 0, 0, -1, -1, -1, -1}));
        assertEquals(KeyValue.of(Long.MIN_VALUE), KeyResolution.decode(new byte[] {-128, 0, 0, 0, 0, 0, 0, 0}));
    }

    @Test
    void errorsOfTheKeyQueryAreSaidInTheFunctionsWords() {
        LockShape shape = ShapeParser.parse("SELECT pg_try_advisory_lock(?)");
        SQLException e = new SQLException("ERROR: function pg_catalog.int8send(character varying) does not exist",
                "42883");
        SQLException said = KeyResolution.inTheFunctionsWords(e, shape.calls().get(0));
        assertEquals("ERROR: function pg_try_advisory_lock(character varying) does not exist", said.getMessage());
        assertEquals("42883", said.getSQLState());
        SQLException other = new SQLException("ERROR: division by zero", "22012");
        assertSame(other, KeyResolution.inTheFunctionsWords(other, shape.calls().get(0)));
    }
}
