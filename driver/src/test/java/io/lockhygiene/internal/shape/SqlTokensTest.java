package io.lockhygiene.internal.shape;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shape parser's token arrays and their structure queries: where parentheses and CASE ... END close. */
class SqlTokensTest {

    /** The index of the {@code n}th (from 0) token whose text is {@code text}. */
    private static int at(SqlTokens t, String text, int n) {
        for (int i = 0; i < t.size(); i++) {
            if (t.text(i).equalsIgnoreCase(text) && n-- == 0) {
                return i;
            }
        }
        throw new AssertionError(text + " not found");
    }

    @Test
    void tokensAreTheLexersAsArrays() {
        SqlTokens t = SqlTokens.of("SELECT \"A\"\"b\", x::int -- c\n FROM t");
        assertEquals(8, t.size());
        assertEquals("SELECT", t.text(0));
        assertEquals("A\"b", t.name(1), "quoted names exact, doubled quotes read as one");
        assertEquals("select", t.name(0), "bare names folded");
        assertTrue(t.isWord(0, "select"));
        assertFalse(t.isWord(1, "a\"b"), "a quoted name is no word");
        assertTrue(t.isOp(4, "::"));
        assertFalse(t.isOp(4, ":"));
        assertEquals(SqlTokens.END, t.kind(t.size()), "END past the last token, forever");
        assertEquals(SqlTokens.END, t.kind(t.size() + 5));
        assertEquals(t.text().length(), t.start(t.size()));
        assertEquals("", t.text(t.size()));
    }

    @Test
    void parenthesesAndBracketsNest() {
        SqlTokens t = SqlTokens.of("f(a[1], (b), c) d");
        int last = t.size();
        assertEquals(at(t, ")", 1), t.matching(1, last));
        assertEquals(at(t, ")", 0), t.matching(at(t, "(", 1), last));
        assertEquals(-1, t.matching(0, last), "not a '('");
        assertEquals(-1, SqlTokens.of("f(a").matching(1, 3), "unterminated");
        assertEquals(-1, SqlTokens.of("f(a]").matching(1, 4), "closed by the wrong bracket");
        assertEquals(1, t.depthAt(0, at(t, "a", 0)));
        assertEquals(2, t.depthAt(0, at(t, "1", 0)));
        assertEquals(0, t.depthAt(0, at(t, "d", 0)));
    }

    @Test
    void topLevelWordsSkipParenthesesAndCase() {
        SqlTokens t = SqlTokens.of("SELECT f(x FROM y), CASE WHEN a THEN b FROM END FROM t");
        assertEquals(at(t, "FROM", 2), t.topLevelWord(1, t.size(), "from"));
        assertEquals(-1, t.topLevelWord(1, at(t, "FROM", 2), "from"));
    }

    @Test
    void caseParts() {
        SqlTokens t = SqlTokens.of("CASE WHEN a THEN CASE WHEN b THEN c END WHEN d THEN e ELSE f END");
        int n = t.size();
        int firstWhen = 1;
        assertEquals(n - 1, t.caseEnd(firstWhen, n));
        assertEquals(at(t, "THEN", 0), t.caseWord(firstWhen + 1, n - 1, "then"));
        assertEquals(at(t, "WHEN", 2), t.caseNext(at(t, "THEN", 0) + 1, n - 1), "the inner CASE is skipped");
        assertEquals(at(t, "ELSE", 0), t.caseNext(at(t, "THEN", 2) + 1, n - 1));
        assertEquals(-1, SqlTokens.of("CASE WHEN a THEN b").caseEnd(1, 4));
        assertEquals(-1, SqlTokens.of("CASE WHEN a END").caseWord(2, 3, "then"));
    }

    @Test
    void typeNames() {
        assertEquals(1, SqlTokens.of("bigint").typeNameEnd(0, 1, 1));
        assertEquals(3, SqlTokens.of("pg_catalog.int8").typeNameEnd(0, 3, 3));
        assertEquals(2, SqlTokens.of("character varying").typeNameEnd(0, 2, 2));
        assertEquals(2, SqlTokens.of("double precision").typeNameEnd(0, 2, 2));
        assertEquals(4, SqlTokens.of("timestamp with time zone").typeNameEnd(0, 4, 4));
        assertEquals(4, SqlTokens.of("bit(60)").typeNameEnd(0, 4, 4));
        assertEquals(3, SqlTokens.of("int[]").typeNameEnd(0, 3, 3));
        assertEquals(-1, SqlTokens.of("(int)").typeNameEnd(0, 3, 3));
        assertEquals(-1, SqlTokens.of("bit(60").typeNameEnd(0, 3, 3));
        assertEquals(1, SqlTokens.of("int x").typeNameEnd(0, 2, 2), "a following alias is not the type's");
    }
}
