package io.lockhygiene.internal.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one lexer, token by token: every kind, every quoting rule, and what it does with broken text. */
class SqlLexerTest {
    private static final String[] NAMES = {"?", "IDENT", "QUOTED", "STRING", "NUMBER", "PARAM", "LPAREN",
        "RPAREN", "COMMA", "SEMI", "DOT", "OP", "LBRACKET", "RBRACKET", "LBRACE", "RBRACE", "END"};

    /** The tokens as {@code KIND:text} joined by spaces, END left out. */
    private static String tokens(String sql) {
        SqlLexer lexer = new SqlLexer(sql);
        List<String> out = new ArrayList<>();
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            out.add(NAMES[kind] + ":" + sql.substring(lexer.start(), lexer.end()));
        }
        return String.join(" ", out);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "select 1                     | IDENT:select NUMBER:1",
            "a.b(c, d);                   | IDENT:a DOT:. IDENT:b LPAREN:( IDENT:c COMMA:, IDENT:d RPAREN:) SEMI:;",
            "x[1] {fn}                    | IDENT:x LBRACKET:[ NUMBER:1 RBRACKET:] LBRACE:{ IDENT:fn RBRACE:}",
            "'it''s'                      | STRING:'it''s'",
            "E'a\\'b' c                    | STRING:E'a\\'b' IDENT:c",
            "e'\\\\' x                      | STRING:e'\\\\' IDENT:x",
            "'a\\' c'                      | STRING:'a\\' IDENT:c STRING:'",
            "'a\\' b'                      | STRING:'a\\' STRING:b'",
            "B'0101' X'ff' N'n' n         | STRING:B'0101' STRING:X'ff' STRING:N'n' IDENT:n",
            "b 'x'                        | IDENT:b STRING:'x'",
            "$$a $b$ c$$ d                | STRING:$$a $b$ c$$ IDENT:d",
            "$t$ $$ 'x $t$ y              | STRING:$t$ $$ 'x $t$ IDENT:y",
            "$1 + $23                     | PARAM:$1 OP:+ PARAM:$23",
            "? ?? ?                       | PARAM:? OP:?? PARAM:?",
            "\"a\"\"b\" \"\"                  | QUOTED:\"a\"\"b\" QUOTED:\"\"",
            "a$b _c Ünï                   | IDENT:a$b IDENT:_c IDENT:Ünï",
            "1.5e+10 .5 1_000 0x1F        | NUMBER:1.5e+10 NUMBER:.5 NUMBER:1_000 NUMBER:0x1F",
            "a>=b <> c::int               | IDENT:a OP:>= IDENT:b OP:<> IDENT:c OP::: IDENT:int",
            "~a--c\nb~                    | IDENT:a IDENT:b",
            "a/* x /* y */ z */b          | IDENT:a IDENT:b",
            "~1 +-- c\n2~                 | NUMBER:1 OP:+ NUMBER:2",
            "1 */* c */2                  | NUMBER:1 OP:* NUMBER:2",
            "$ x                          | OP:$ IDENT:x",
    })
    void readsEachTokenAsPostgreSqlDoes(String sql, String expected) {
        assertEquals(expected, tokens(sql));
    }

    @Test
    void unterminatedConstructsRunToTheEndAndAreNoted() {
        for (String broken : new String[] {"select 'abc", "select \"abc", "select $q$ abc", "select /* a /* b */",
            "select E'abc\\'"}) {
            SqlLexer lexer = new SqlLexer(broken);
            assertEquals(SqlLexer.IDENT, lexer.next(), broken);
            lexer.next();
            assertEquals(broken.length(), lexer.end(), broken + ": the unclosed token runs to the end");
            assertEquals(SqlLexer.END, lexer.next(), broken);
            assertEquals(broken.length(), lexer.start(), broken);
            assertTrue(lexer.sawUnterminated(), broken);
        }
        SqlLexer fine = new SqlLexer("select 'a' -- no newline at the end");
        while (fine.next() != SqlLexer.END) {
            assertFalse(fine.sawUnterminated());
        }
        assertFalse(fine.sawUnterminated(), "a line comment ends with the text");
        assertEquals("", tokens(""));
        assertEquals("", tokens("  -- only a comment"));
    }

    @Test
    void endRepeatsPastTheLastToken() {
        SqlLexer lexer = new SqlLexer("x");
        assertEquals(SqlLexer.IDENT, lexer.next());
        assertEquals(SqlLexer.END, lexer.next());
        assertEquals(SqlLexer.END, lexer.next());
        assertEquals(1, lexer.start());
        assertEquals(1, lexer.end());
    }

    @Test
    void wordsFoldOnlyAscii() {
        SqlLexer lexer = new SqlLexer("SeLeCt \u017Felect \"select\"");
        lexer.next();
        assertTrue(lexer.isWord("select"));
        assertEquals("select", lexer.name());
        lexer.next();
        assertFalse(lexer.isWord("select"), "the long s folds to S in Java, not in PostgreSQL");
        lexer.next();
        assertFalse(lexer.isWord("select"), "a quoted name is never a keyword");
        assertEquals("select", lexer.name());
        assertEquals("a\"b", SqlLexer.name("\"a\"\"b\"", SqlLexer.QUOTED, 0, 6));
        assertEquals("", SqlLexer.name("\"ab", SqlLexer.QUOTED, 0, 3));
        assertEquals("abc", SqlLexer.name("ABC", SqlLexer.IDENT, 0, 3));
    }

    @Test
    void tokensTileTheTextInOrderForAnyInput() {
        Random random = new Random(34);
        String alphabet = "ab1 '\"$-/*\\\n;(),.?:eEXBN[]{}";
        for (int round = 0; round < 20_000; round++) {
            StringBuilder sb = new StringBuilder();
            int n = random.nextInt(30);
            for (int i = 0; i < n; i++) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            String sql = sb.toString();
            SqlLexer lexer = new SqlLexer(sql);
            int last = 0;
            int count = 0;
            for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
                assertTrue(lexer.start() >= last && lexer.end() > lexer.start() && lexer.end() <= sql.length(),
                        "seed 34 round " + round + ": " + sql);
                last = lexer.end();
                assertTrue(++count <= sql.length(), sql);
            }
        }
    }
}
