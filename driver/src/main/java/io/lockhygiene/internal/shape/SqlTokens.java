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

    // structure: where parentheses and CASE ... END close, for the shape parser

    /** The matching ')' of the '(' at {@code open}, or -1. */
    int matching(int open, int last) {
        if (kind(open) != LPAREN) {
            return -1;
        }
        int depth = 0;
        for (int i = open; i < last; i++) {
            int k = kind(i);
            if (k == LPAREN || k == LBRACKET) {
                depth++;
            } else if (k == RPAREN || k == RBRACKET) {
                depth--;
                if (depth == 0) {
                    return k == RPAREN ? i : -1;
                }
            }
        }
        return -1;
    }

    /** The parenthesis depth at token {@code at}, counted from {@code from}. */
    int depthAt(int from, int at) {
        int depth = 0;
        for (int i = from; i < at; i++) {
            int k = kind(i);
            if (k == LPAREN || k == LBRACKET) {
                depth++;
            } else if (k == RPAREN || k == RBRACKET) {
                depth--;
            }
        }
        return depth;
    }

    /** The first {@code word} at parenthesis depth 0 in [from, to), CASE ... END skipped; -1 if none. */
    int topLevelWord(int from, int to, String word) {
        return atLevel(from, to, word, null);
    }

    /** The END of the CASE whose first WHEN is at {@code from}, or -1. */
    int caseEnd(int from, int to) {
        return atLevel(from, to, "end", null);
    }

    /** {@code word} at this CASE's own level in [from, to), or -1. */
    int caseWord(int from, int to, String word) {
        return atLevel(from, to, word, null);
    }

    /** The next WHEN or ELSE of this CASE after a THEN, or its END. */
    int caseNext(int from, int endAt) {
        int at = atLevel(from, endAt, "when", "else");
        return at < 0 ? endAt : at;
    }

    /**
     * The one depth scan: the first token in [from, to) that is {@code word} or {@code orWord} (null: none) at
     * this level, that is outside parentheses and brackets and outside any CASE ... END that opens after
     * {@code from}; -1 if none. An END that closes no CASE opened here is at this level (the end of ours).
     */
    private int atLevel(int from, int to, String word, String orWord) {
        int depth = 0;
        int cases = 0;
        for (int i = from; i < to; i++) {
            int k = kind(i);
            if (k == LPAREN || k == LBRACKET) {
                depth++;
            } else if (k == RPAREN || k == RBRACKET) {
                depth--;
            } else if (depth == 0 && isWord(i, "case")) {
                cases++;
            } else if (depth == 0 && cases > 0 && isWord(i, "end")) {
                cases--;
            } else if (depth == 0 && cases == 0 && (isWord(i, word) || (orWord != null && isWord(i, orWord)))) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The end (exclusive) of a type name starting at {@code from}: a word (schema-qualified or not), the
     * second word of PostgreSQL's two-word types, a (n) modifier, []; -1 when it is no type name it reads.
     */
    int typeNameEnd(int from, int to, int last) {
        int i = from;
        if (i >= to || (kind(i) != IDENT && kind(i) != QUOTED)) {
            return -1;
        }
        i++;
        if (i + 1 < to && kind(i) == DOT) {
            i += 2;
        }
        if (i < to && (isWord(i, "varying") || isWord(i, "precision"))) {
            i++;
        }
        if (i + 2 < to && (isWord(i, "with") || isWord(i, "without")) && isWord(i + 1, "time")
                && isWord(i + 2, "zone")) {
            i += 3;
        }
        if (i < to && kind(i) == LPAREN) {
            int close = matching(i, last);
            if (close < 0 || close >= to) {
                return -1;
            }
            i = close + 1;
        }
        while (i + 1 < to && kind(i) == LBRACKET && kind(i + 1) == RBRACKET) {
            i += 2;
        }
        return i;
    }
}
