package io.lockhygiene.internal.shape;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The shapes real Java code sends, read as emulate must follow them; and the ones it refuses, with why. */
class ShapeParserTest {

    private static LockShape supported(String sql) {
        LockShape s = ShapeParser.parse(sql);
        assertTrue(s.isSupported(), () -> sql + ": " + s.unsupported());
        return s;
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "SELECT pg_try_advisory_lock(42)", "select pg_advisory_lock(-9223372036854775808);", "SELECT pg_advisory_unlock_all()",
            "SELECT pg_try_advisory_lock(?)", "SELECT pg_try_advisory_lock(?::bigint)", "SELECT pg_try_advisory_lock(CAST(? AS bigint))",
            "SELECT pg_advisory_lock(?::int, ?::int)", "SELECT pg_advisory_lock(7742, hashtext('report-daily'))",
            "SELECT pg_try_advisory_lock(hashtext(?))", "SELECT pg_try_advisory_lock(hashtextextended(?, 0))",
            "SELECT pg_try_advisory_lock(('x' || left(md5(?), 15))::bit(60)::bigint)",
            "SELECT CASE WHEN pg_try_advisory_lock(5) THEN pg_advisory_unlock(5) ELSE FALSE END;",
            "select cast(pg_advisory_xact_lock(?, ?) as text)", "SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))",
            "select * from pg_try_advisory_xact_lock(?, ?) as result", "{call pg_try_advisory_xact_lock(?, ?)}",
            "{? = call pg_try_advisory_lock(?)}", "SELECT pg_try_advisory_lock(id) FROM jobs WHERE id = ?",
            "SELECT pg_try_advisory_lock(1) AS got, pg_advisory_unlock(2) \"Released\"",
            "SELECT pg_catalog.pg_try_advisory_lock(1), \"pg_advisory_unlock\"(1)",
            "SELECT NOT pg_try_advisory_lock(1), pg_try_advisory_lock(2) AND pg_try_advisory_lock(3)",
            "SELECT pg_try_advisory_lock(1), now(), 'x'::text"})
    void readsTheShapesRealCodeSends(String sql) {
        supported(sql);
    }

    @Test
    void formsAndKeys() {
        LockShape s = supported("SELECT pg_advisory_lock(7742, hashtext('report-daily'))");
        assertEquals(LockShape.Form.SELECT_LIST, s.form());
        assertEquals(KeyArg.Kind.LITERAL, s.calls().get(0).args().get(0).kind());
        assertEquals(KeyArg.Kind.EXPRESSION, s.calls().get(0).args().get(1).kind());
        assertTrue(s.calls().get(0).args().get(1).cacheable());
        assertTrue(s.answeredLocally());
        assertFalse(s.needsValidation());

        LockShape cast = supported("SELECT pg_try_advisory_lock(?::bigint)");
        assertEquals(KeyArg.Kind.PARAMETER, cast.calls().get(0).args().get(0).kind());
        assertEquals(KeyArg.IntType.INT8, cast.calls().get(0).args().get(0).cast());

        LockShape from = supported("select * from pg_try_advisory_xact_lock(?, ?) as result");
        assertEquals(LockShape.Form.FROM_CALL, from.form());
        assertTrue(from.answeredLocally());
        assertEquals("result", from.items().get(0).label());

        LockShape one = supported("SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))");
        assertFalse(one.answeredLocally());

        LockShape rows = supported("SELECT pg_try_advisory_lock(id) FROM jobs WHERE id = ?");
        assertEquals(LockShape.Form.ROWS, rows.form());
        assertFalse(rows.calls().get(0).args().get(0).cacheable());

        LockShape escape = supported("{? = call pg_try_advisory_lock(?)}");
        assertTrue(escape.hasOutParameter());
        assertEquals(2, escape.calls().get(0).args().get(0).parameter());
    }

    @Test
    void labelsAsPostgreSqlNamesColumns() {
        LockShape s = supported("SELECT pg_try_advisory_lock(1), CASE WHEN pg_try_advisory_lock(2) THEN pg_advisory_unlock(2) END,"
                + " CASE WHEN pg_try_advisory_lock(3) THEN true ELSE pg_advisory_unlock(3) END, NOT pg_try_advisory_lock(4),"
                + " pg_try_advisory_lock(5) AS Got, pg_try_advisory_lock(6) \"Got\"");
        List<String> labels = new ArrayList<>();
        for (LockShape.Item i : s.items()) {
            labels.add(i.label());
        }
        assertEquals(List.of("pg_try_advisory_lock", "case", "pg_advisory_unlock", "?column?", "got", "Got"), labels);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "SELECT * FROM jobs WHERE pg_try_advisory_xact_lock(id) LIMIT 1", "SELECT pg_try_advisory_lock(id) FROM jobs LIMIT 1",
            "SELECT 1; SELECT pg_advisory_lock(1)", "SELECT pg_try_advisory_lock(1) = true",
            "SELECT CASE WHEN ? > 0 THEN pg_advisory_lock(1) END", "SELECT pg_try_advisory_lock(1) AND ? > 0",
            "WITH x AS (SELECT 1) SELECT pg_advisory_lock(1)", "SELECT pg_advisory_lock(pg_try_advisory_lock(1)::int)",
            "UPDATE jobs SET locked = pg_try_advisory_lock(id)", "SELECT id, pg_try_advisory_lock(id) FROM jobs"})
    void refusesWhatItCannotFollowAndSaysWhy(String sql) {
        LockShape s = ShapeParser.parse(sql);
        assertFalse(s.isSupported(), sql);
        assertNotNull(s.unsupported());
    }

    @Test
    void answerQueryKeepsLabelsAndTheOtherParameters() {
        LockShape s = supported("SELECT ?::text AS a, cast(pg_advisory_xact_lock(?, ?) as text), ? AS b");
        ShapeEvaluator.Row row = evaluateAll(s, Boolean.TRUE);
        ShapeText.Query q = ShapeText.answerQuery(s, row);
        assertEquals("SELECT ?::text AS a, cast((SELECT ''::void AS \"pg_advisory_xact_lock\") as text), ? AS b", q.sql());
        assertEquals("[1, 4]", java.util.Arrays.toString(q.parameters()));

        LockShape from = supported("SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))");
        assertEquals("SELECT 1 FROM (SELECT ''::void AS \"pg_advisory_xact_lock\") AS \"pg_advisory_xact_lock\"",
                ShapeText.answerQuery(from, evaluateAll(from, Boolean.TRUE)).sql());

        LockShape keys = supported("SELECT pg_advisory_lock(7742, hashtext(?)), pg_try_advisory_lock(?::bigint)");
        ShapeText.Query k = ShapeText.keyQuery(keys, keys.calls());
        assertEquals("SELECT pg_catalog.int4send((7742)), pg_catalog.int4send((hashtext(?))), pg_catalog.int8send((?::bigint))", k.sql());
        assertEquals("[1, 2]", java.util.Arrays.toString(k.parameters()));

        LockShape rows = supported("SELECT pg_try_advisory_lock(id) AS got FROM jobs WHERE id = ? FOR UPDATE");
        assertEquals("SELECT pg_catalog.int8send((id)) FROM jobs WHERE id = ? FOR UPDATE", ShapeText.rowsQuery(rows).sql());
    }

    @Test
    void evaluatesInPostgreSqlsOrderWithItsFolding() throws Exception {
        LockShape s = supported("SELECT CASE WHEN pg_try_advisory_lock(1) THEN pg_advisory_unlock(1) ELSE FALSE END");
        List<String> made = new ArrayList<>();
        ShapeEvaluator.Row row = ShapeEvaluator.evaluate(s, c -> {
            made.add(c.function().sqlName());
            return Boolean.FALSE;
        });
        assertEquals(List.of("pg_try_advisory_lock"), made); // the THEN branch is not taken: nothing unlocked
        assertEquals(Boolean.FALSE, row.item(0));

        made.clear();
        ShapeEvaluator.evaluate(supported("SELECT pg_try_advisory_lock(1) AND false, pg_try_advisory_lock(2) OR true,"
                + " CASE WHEN true THEN true ELSE pg_try_advisory_lock(3) END"), c -> {
                    made.add(c.toString());
                    return Boolean.TRUE;
                });
        assertEquals(List.of(), made); // PostgreSQL folds all three without calling anything

        LockShape from = supported("SELECT pg_advisory_unlock(9), * FROM pg_try_advisory_xact_lock(9) AS r");
        made.clear();
        ShapeEvaluator.evaluate(from, c -> {
            made.add(c.function().sqlName());
            return Boolean.TRUE;
        });
        assertEquals(List.of("pg_try_advisory_xact_lock", "pg_advisory_unlock"), made); // FROM first
    }

    @Test
    void noInputMakesItThrow() {
        for (String sql : new String[] {"", "SELECT", "SELECT pg_advisory_lock(", "SELECT pg_advisory_lock(1", "{call",
                "SELECT CASE WHEN pg_try_advisory_lock(1) THEN", "SELECT pg_advisory_lock(1)::", "'unterminated", "$$"}) {
            LockShape s = ShapeParser.parse(sql);
            assertNotNull(s);
        }
        assertNull(ShapeParser.parse("SELECT pg_advisory_lock(1)").unsupported());
    }

    private static ShapeEvaluator.Row evaluateAll(LockShape s, Boolean answer) {
        try {
            return ShapeEvaluator.evaluate(s, c -> c.function().returnsBoolean() ? answer : ShapeEvaluator.VOID);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }
}
