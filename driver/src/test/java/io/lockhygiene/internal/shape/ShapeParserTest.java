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
import org.junit.jupiter.params.provider.CsvSource;

/** The shapes real Java code sends, read as emulate must follow them; and the ones it refuses, with why. */
class ShapeParserTest {

    private static LockShape supported(String sql) {
        LockShape s = ShapeParser.parse(sql);
        assertTrue(s.isSupported(), () -> sql + ": " + s.unsupported());
        return s;
    }

    /** A shape as a line: its form, its parameter count, and each call with the kinds (and casts) of its keys. */
    static String describe(LockShape s) {
        if (!s.isSupported()) {
            return "UNSUPPORTED: " + s.unsupported();
        }
        StringBuilder b = new StringBuilder(s.form().name()).append(" params=").append(s.parameterCount());
        for (Node.Call c : s.calls()) {
            b.append(' ').append(c.function().sqlName()).append('(');
            List<String> args = new ArrayList<>();
            for (KeyArg a : c.args()) {
                args.add(a.kind() + (a.cast() != null ? ":" + a.cast() : ""));
            }
            b.append(String.join(" ", args)).append(')');
        }
        return b.toString();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "SELECT pg_try_advisory_lock(42)                     | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL)",
            "select pg_advisory_lock(-9223372036854775808);      | SELECT_LIST params=0 pg_advisory_lock(LITERAL)",
            "SELECT pg_advisory_unlock_all()                     | SELECT_LIST params=0 pg_advisory_unlock_all()",
            "SELECT pg_try_advisory_lock(?)                      | SELECT_LIST params=1 pg_try_advisory_lock(PARAMETER)",
            "SELECT pg_try_advisory_lock(?::bigint)              | SELECT_LIST params=1 pg_try_advisory_lock(PARAMETER:INT8)",
            "SELECT pg_try_advisory_lock(CAST(? AS bigint))      | SELECT_LIST params=1 pg_try_advisory_lock(PARAMETER:INT8)",
            "SELECT pg_advisory_lock(?::int, ?::int)             | SELECT_LIST params=2 pg_advisory_lock(PARAMETER:INT4 PARAMETER:INT4)",
            "SELECT pg_advisory_lock(7742, hashtext('report-daily')) | SELECT_LIST params=0 pg_advisory_lock(LITERAL EXPRESSION)",
            "SELECT pg_try_advisory_lock(hashtext(?))            | SELECT_LIST params=1 pg_try_advisory_lock(EXPRESSION)",
            "SELECT pg_try_advisory_lock(hashtextextended(?, 0)) | SELECT_LIST params=1 pg_try_advisory_lock(EXPRESSION)",
            "~SELECT pg_try_advisory_lock(('x' || left(md5(?), 15))::bit(60)::bigint)~ | SELECT_LIST params=1 pg_try_advisory_lock(EXPRESSION)",
            "SELECT CASE WHEN pg_try_advisory_lock(5) THEN pg_advisory_unlock(5) ELSE FALSE END; | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL) pg_advisory_unlock(LITERAL)",
            "select cast(pg_advisory_xact_lock(?, ?) as text)    | SELECT_LIST params=2 pg_advisory_xact_lock(PARAMETER PARAMETER)",
            "SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))    | FROM_CALL params=1 pg_advisory_xact_lock(EXPRESSION)",
            "select * from pg_try_advisory_xact_lock(?, ?) as result | FROM_CALL params=2 pg_try_advisory_xact_lock(PARAMETER PARAMETER)",
            "{call pg_try_advisory_xact_lock(?, ?)}              | CALL_ESCAPE params=2 pg_try_advisory_xact_lock(PARAMETER PARAMETER)",
            "{? = call pg_try_advisory_lock(?)}                  | CALL_ESCAPE params=2 pg_try_advisory_lock(PARAMETER)",
            "SELECT pg_try_advisory_lock(id) FROM jobs WHERE id = ? | ROWS params=1 pg_try_advisory_lock(EXPRESSION)",
            "SELECT pg_try_advisory_lock(1) AS got, pg_advisory_unlock(2) \"Released\" | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL) pg_advisory_unlock(LITERAL)",
            "SELECT pg_catalog.pg_try_advisory_lock(1), \"pg_advisory_unlock\"(1) | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL) pg_advisory_unlock(LITERAL)",
            "SELECT NOT pg_try_advisory_lock(1), pg_try_advisory_lock(2) AND pg_try_advisory_lock(3) | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL) pg_try_advisory_lock(LITERAL) pg_try_advisory_lock(LITERAL)",
            "SELECT pg_try_advisory_lock(1), now(), 'x'::text    | SELECT_LIST params=0 pg_try_advisory_lock(LITERAL)",
            "SELECT pg_advisory_lock(1)::nosuch type             | SELECT_LIST params=0 pg_advisory_lock(LITERAL)",
    })
    void readsTheShapesRealCodeSends(String sql, String expected) {
        assertEquals(expected, describe(ShapeParser.parse(sql)));
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

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "SELECT * FROM jobs WHERE pg_try_advisory_xact_lock(id) LIMIT 1 | an advisory call in the FROM or WHERE of a statement that reads rows (how often PostgreSQL calls it depends on its plan)",
            "SELECT pg_try_advisory_lock(id) FROM jobs LIMIT 1   | a statement that reads rows with LIMIT (which rows PostgreSQL calls the function for depends on its plan)",
            "SELECT 1; SELECT pg_advisory_lock(1)                | several statements in one text",
            "SELECT pg_try_advisory_lock(1) = true               | an advisory call inside an expression emulate does not follow (pg_try_advisory_lock(1) = true)",
            "SELECT CASE WHEN ? > 0 THEN pg_advisory_lock(1) END | a CASE whose condition calls no advisory function but decides whether one is called (emulate cannot know its value beforehand)",
            "SELECT pg_try_advisory_lock(1) AND ? > 0            | an advisory call combined with other operators (? > 0)",
            "WITH x AS (SELECT 1) SELECT pg_advisory_lock(1)     | a statement that is not a SELECT (WITH)",
            "SELECT pg_advisory_lock(pg_try_advisory_lock(1)::int) | an advisory call whose key is computed by another advisory call",
            "UPDATE jobs SET locked = pg_try_advisory_lock(id)   | a statement that is not a SELECT (UPDATE)",
            "SELECT id, pg_try_advisory_lock(id) FROM jobs       | a statement that reads rows with select-list items other than advisory calls",
            "SELECT CASE pg_try_advisory_lock(1) WHEN true THEN 1 END | a simple CASE (CASE x WHEN ...)",
            "SELECT DISTINCT pg_advisory_lock(1)                 | SELECT DISTINCT",
            "SELECT pg_advisory_lock(1) INTO x                   | SELECT ... INTO",
            "{fn now()}                                          | a JDBC escape other than {call ...}",
            "{call other(1)}                                     | a {call} of another function",
            "SELECT pg_advisory_lock(1,)                         | an empty argument",
            "SELECT pg_advisory_lock(1), , 2                     | an empty select-list item",
    })
    void refusesWhatItCannotFollowAndSaysWhy(String sql, String why) {
        assertEquals("UNSUPPORTED: " + why, describe(ShapeParser.parse(sql)));
    }

    /**
     * Broken text: never an exception, and never a shape that answers (PostgreSQL's own error comes first), and
     * always one of the parser's own reasons: a reason that says it could not read the text is a bug caught.
     */
    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "~~                                                  | a statement that is not a SELECT (empty)",
            "SELECT                                              | an empty select list",
            "SELECT pg_advisory_lock(                            | unbalanced parentheses",
            "SELECT pg_advisory_lock(1                           | unbalanced parentheses",
            "SELECT pg_advisory_lock(1))                         | unbalanced parentheses",
            "{call                                               | a {call} of another function",
            "SELECT CASE WHEN pg_try_advisory_lock(1) THEN       | a CASE without END",
            "SELECT CASE WHEN pg_try_advisory_lock(1) END        | a CASE without THEN",
            "SELECT pg_advisory_lock(1)::                        | a cast to a type emulate does not read",
            "~'unterminated~                                     | a statement that is not a SELECT ('unterminated)",
            "$$                                                  | a statement that is not a SELECT ($$)",
    })
    void brokenTextGetsAReasonNeverAnAnswer(String sql, String why) {
        LockShape s = ShapeParser.parse(sql == null ? "" : sql);
        assertEquals("UNSUPPORTED: " + why, describe(s));
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

    private static ShapeEvaluator.Row evaluateAll(LockShape s, Boolean answer) {
        try {
            return ShapeEvaluator.evaluate(s, c -> c.function().returnsBoolean() ? answer : ShapeEvaluator.VOID);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }
}
