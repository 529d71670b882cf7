package io.lockhygiene.internal.shape;

import java.util.Arrays;

import io.lockhygiene.internal.sql.SqlLexer;

/**
 * The tokens of one SQL text as {@link SqlLexer} reads them (the one lexer), kept as arrays of positions so
 * the shape parser can look back and ahead. Only
 * statements that call advisory functions are tokenized, once per text; comments and whitespace are not
 * tokens, so a rebuilt text keeps them where they were.
 */
final class SqlTokens {
    static final int IDENT = SqlLexer.IDENT;
    static final int QUOTED = SqlLexer.QUOTED;
    static final int STRING = SqlLexer.STRING;
    static final int NUMBER = SqlLexer.NUMBER;
    static final int PARAM = SqlLexer.PARAM;
    static final int LPAREN = SqlLexer.LPAREN;
    static final int RPAREN = SqlLexer.RPAREN;
    static final int COMMA = SqlLexer.COMMA;
    static final int SEMI = SqlLexer.SEMI;
    static final int DOT = SqlLexer.DOT;
    static final int OP = SqlLexer.OP;
    static final int LBRACKET = SqlLexer.LBRACKET;
    static final int RBRACKET = SqlLexer.RBRACKET;
    static final int LBRACE = SqlLexer.LBRACE;
    static final int RBRACE = SqlLexer.RBRACE;
    static final int END = SqlLexer.END;

    private final String text;
    private int[] kinds = new int[32];
    private int[] starts = new int[32];
    private int[] ends = new int[32];
    private int count;

    private SqlTokens(String text) {
        this.text = text;
    }

    /** Tokenizes {@code text}; an END token closes the list. Never throws. */
    static SqlTokens of(String text) {
        SqlTokens t = new SqlTokens(text);
        t.lex();
        return t;
    }

    String text() {
        return text;
    }

    int size() {
        return count;
    }

    int kind(int i) {
        return i < count ? kinds[i] : END;
    }

    int start(int i) {
        return i < count ? starts[i] : text.length();
    }

    int end(int i) {
        return i < count ? ends[i] : text.length();
    }

    String text(int i) {
        return text.substring(start(i), end(i));
    }

    /** True when token {@code i} is the bare word {@code lower} (any ASCII case). */
    boolean isWord(int i, String lower) {
        return kind(i) == IDENT && SqlLexer.isWord(text, start(i), end(i), lower);
    }

    /** True when token {@code i} is the operator {@code op}. */
    boolean isOp(int i, String op) {
        return kind(i) == OP && end(i) - start(i) == op.length() && text.startsWith(op, start(i));
    }

    /** An identifier as PostgreSQL names it: bare ones folded to lower case, quoted ones exact. */
    String name(int i) {
        return SqlLexer.name(text, kind(i), start(i), end(i));
    }

    private void add(int kind, int start, int end) {
        if (count == kinds.length) {
            kinds = Arrays.copyOf(kinds, count * 2);
            starts = Arrays.copyOf(starts, count * 2);
            ends = Arrays.copyOf(ends, count * 2);
        }
        kinds[count] = kind;
        starts[count] = start;
        ends[count] = end;
        count++;
    }

    private void lex() {
        SqlLexer lexer = new SqlLexer(text);
        for (int kind = lexer.next(); kind != END; kind = lexer.next()) {
            add(kind, lexer.start(), lexer.end());
        }
    }
}
