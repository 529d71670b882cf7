package io.lockhygiene.internal.shape;

import java.util.Arrays;
import java.util.Locale;

/**
 * The tokens of one SQL text, by PostgreSQL's lexical rules (the scanner's: strings with {@code ''} and
 * {@code E''} escapes, dollar quotes, quoted names, nested comments), as positions into the text. Only
 * statements that call advisory functions are tokenized, once per text; comments and whitespace are not
 * tokens, so a rebuilt text keeps them where they were.
 */
final class SqlTokens {
    static final int IDENT = 1;
    static final int QUOTED = 2;
    static final int STRING = 3;
    static final int NUMBER = 4;
    static final int PARAM = 5;
    static final int LPAREN = 6;
    static final int RPAREN = 7;
    static final int COMMA = 8;
    static final int SEMI = 9;
    static final int DOT = 10;
    static final int OP = 11;
    static final int LBRACKET = 12;
    static final int RBRACKET = 13;
    static final int LBRACE = 14;
    static final int RBRACE = 15;
    static final int END = 16;

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
        if (kind(i) != IDENT || end(i) - start(i) != lower.length()) {
            return false;
        }
        return text.regionMatches(true, start(i), lower, 0, lower.length());
    }

    /** True when token {@code i} is the operator {@code op}. */
    boolean isOp(int i, String op) {
        return kind(i) == OP && end(i) - start(i) == op.length() && text.startsWith(op, start(i));
    }

    /** An identifier as PostgreSQL names it: bare ones folded to lower case, quoted ones exact. */
    String name(int i) {
        if (kind(i) == QUOTED) {
            String q = text(i);
            return q.length() < 2 ? "" : q.substring(1, q.length() - 1).replace("\"\"", "\"");
        }
        return text(i).toLowerCase(Locale.ROOT);
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
        int len = text.length();
        int pos = 0;
        while (pos < len) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                pos++;
            } else if (c == '-' && pos + 1 < len && text.charAt(pos + 1) == '-') {
                int nl = text.indexOf('\n', pos + 2);
                pos = nl < 0 ? len : nl + 1;
            } else if (c == '/' && pos + 1 < len && text.charAt(pos + 1) == '*') {
                pos = skipBlockComment(pos);
            } else if (c == '\'') {
                int e = skipString(pos, false);
                add(STRING, pos, e);
                pos = e;
            } else if (c == '"') {
                int e = skipQuoted(pos);
                add(QUOTED, pos, e);
                pos = e;
            } else if (c == '$') {
                pos = lexDollar(pos);
            } else if (isIdentStart(c)) {
                int e = pos + 1;
                while (e < len && isIdentPart(text.charAt(e))) {
                    e++;
                }
                if (e - pos == 1 && (c == 'E' || c == 'e' || c == 'B' || c == 'b' || c == 'X' || c == 'x'
                        || c == 'N' || c == 'n') && e < len && text.charAt(e) == '\'') {
                    int se = skipString(e, c == 'E' || c == 'e');
                    add(STRING, pos, se);
                    pos = se;
                } else {
                    add(IDENT, pos, e);
                    pos = e;
                }
            } else if (c >= '0' && c <= '9' || (c == '.' && pos + 1 < len && Character.isDigit(text.charAt(pos + 1)))) {
                int e = pos + 1;
                while (e < len) {
                    char d = text.charAt(e);
                    if (Character.isDigit(d) || d == '.' || d == '_' || Character.isLetter(d)) {
                        e++;
                    } else if ((d == '+' || d == '-') && (text.charAt(e - 1) == 'e' || text.charAt(e - 1) == 'E')) {
                        e++;
                    } else {
                        break;
                    }
                }
                add(NUMBER, pos, e);
                pos = e;
            } else {
                pos = lexPunctuation(pos, c);
            }
        }
        add(END, len, len);
        count--; // END is implicit past the last token (kind(i) answers END there)
    }

    private int lexPunctuation(int pos, char c) {
        switch (c) {
            case '(':
                add(LPAREN, pos, pos + 1);
                return pos + 1;
            case ')':
                add(RPAREN, pos, pos + 1);
                return pos + 1;
            case ',':
                add(COMMA, pos, pos + 1);
                return pos + 1;
            case ';':
                add(SEMI, pos, pos + 1);
                return pos + 1;
            case '.':
                add(DOT, pos, pos + 1);
                return pos + 1;
            case '[':
                add(LBRACKET, pos, pos + 1);
                return pos + 1;
            case ']':
                add(RBRACKET, pos, pos + 1);
                return pos + 1;
            case '{':
                add(LBRACE, pos, pos + 1);
                return pos + 1;
            case '}':
                add(RBRACE, pos, pos + 1);
                return pos + 1;
            case '?':
                // pgjdbc: '?' is a bind parameter, '??' an escaped '?' operator
                if (pos + 1 < text.length() && text.charAt(pos + 1) == '?') {
                    add(OP, pos, pos + 2);
                    return pos + 2;
                }
                add(PARAM, pos, pos + 1);
                return pos + 1;
            default:
                int e = pos;
                while (e < text.length() && isOperatorChar(text.charAt(e))) {
                    if (e > pos && (text.startsWith("--", e) || text.startsWith("/*", e))) {
                        break;
                    }
                    e++;
                }
                if (e == pos) {
                    e = pos + 1;
                }
                add(OP, pos, e);
                return e;
        }
    }

    private static boolean isOperatorChar(char c) {
        return "+-*/<>=~!@#%^&|`:".indexOf(c) >= 0;
    }

    private int skipBlockComment(int pos) {
        int nesting = 1;
        int p = pos + 2;
        int len = text.length();
        while (p < len && nesting > 0) {
            if (text.startsWith("/*", p)) {
                nesting++;
                p += 2;
            } else if (text.startsWith("*/", p)) {
                nesting--;
                p += 2;
            } else {
                p++;
            }
        }
        return Math.min(p, len);
    }

    private int skipString(int quote, boolean escapes) {
        int p = quote + 1;
        int len = text.length();
        while (p < len) {
            char c = text.charAt(p);
            if (escapes && c == '\\') {
                p += 2;
            } else if (c == '\'') {
                if (p + 1 < len && text.charAt(p + 1) == '\'') {
                    p += 2;
                } else {
                    return p + 1;
                }
            } else {
                p++;
            }
        }
        return len;
    }

    private int skipQuoted(int quote) {
        int p = quote + 1;
        int len = text.length();
        while (p < len) {
            if (text.charAt(p) == '"') {
                if (p + 1 < len && text.charAt(p + 1) == '"') {
                    p += 2;
                } else {
                    return p + 1;
                }
            } else {
                p++;
            }
        }
        return len;
    }

    private int lexDollar(int pos) {
        int len = text.length();
        int p = pos + 1;
        if (p < len && Character.isDigit(text.charAt(p))) {
            while (p < len && Character.isDigit(text.charAt(p))) {
                p++;
            }
            add(PARAM, pos, p);
            return p;
        }
        if (p < len && isIdentStart(text.charAt(p))) {
            p++;
            while (p < len && (isIdentStart(text.charAt(p)) || Character.isDigit(text.charAt(p)))) {
                p++;
            }
        }
        if (p < len && text.charAt(p) == '$') {
            String delimiter = text.substring(pos, p + 1);
            int close = text.indexOf(delimiter, p + 1);
            int e = close < 0 ? len : close + delimiter.length();
            add(STRING, pos, e);
            return e;
        }
        add(OP, pos, pos + 1);
        return pos + 1;
    }

    private static boolean isIdentStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
    }

    private static boolean isIdentPart(char c) {
        return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$';
    }
}
