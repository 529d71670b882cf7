package io.lockhygiene.internal.sql;

/**
 * The one lexer of LockHygiene: the tokens of an SQL text by PostgreSQL's lexical rules, one at a time, as
 * positions into the text. Standard strings ({@code ''} escapes), {@code E''} strings (backslash escapes),
 * {@code B''}, {@code X''} and {@code N''} strings, dollar quotes with tags, quoted identifiers,
 * {@code --} comments and nested {@code /* *}{@code /} comments; comments and whitespace are not tokens.
 * Unterminated constructs run to the end of the text; no input makes it throw, and it is one linear pass.
 * pgjdbc's {@code ?} is a parameter and {@code ??} the escaped {@code ?} operator.
 *
 * <p>The scanner, the shape parser (through {@code SqlTokens}, its array form), the transaction-control
 * reader and the check for statements that may run in a transaction block all read text through it, so
 * they never disagree on where a string, a comment or a name ends. A cursor: nothing is allocated per token.
 */
public final class SqlLexer {
    public static final int IDENT = 1;
    public static final int QUOTED = 2;
    public static final int STRING = 3;
    public static final int NUMBER = 4;
    public static final int PARAM = 5;
    public static final int LPAREN = 6;
    public static final int RPAREN = 7;
    public static final int COMMA = 8;
    public static final int SEMI = 9;
    public static final int DOT = 10;
    public static final int OP = 11;
    public static final int LBRACKET = 12;
    public static final int RBRACKET = 13;
    public static final int LBRACE = 14;
    public static final int RBRACE = 15;
    public static final int END = 16;

    private final String text;
    private final int len;
    private int pos;
    private int kind;
    private int start;
    private int end;
    private boolean unterminated;

    public SqlLexer(String text) {
        this.text = text;
        this.len = text.length();
    }

    /** Moves to the next token and returns its kind; END (forever) past the last one. */
    public int next() {
        while (pos < len) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                pos++;
            } else if (c == '-' && pos + 1 < len && text.charAt(pos + 1) == '-') {
                int nl = text.indexOf('\n', pos + 2);
                pos = nl < 0 ? len : nl + 1;
            } else if (c == '/' && pos + 1 < len && text.charAt(pos + 1) == '*') {
                pos = skipBlockComment(pos);
            } else {
                start = pos;
                kind = lexToken(c);
                end = pos;
                return kind;
            }
        }
        start = len;
        end = len;
        kind = END;
        return END;
    }

    public int kind() {
        return kind;
    }

    public int start() {
        return start;
    }

    public int end() {
        return end;
    }

    public String text() {
        return text;
    }

    /** True once a string, quoted name, dollar quote or block comment ran to the end of the text unclosed. */
    public boolean sawUnterminated() {
        return unterminated;
    }

    /** True when the current token is the bare word {@code lower} (any ASCII case). */
    public boolean isWord(String lower) {
        return kind == IDENT && isWord(text, start, end, lower);
    }

    /**
     * The current identifier as PostgreSQL names it: a bare one folded to lower case, a quoted one exact
     * (its {@code ""} read as one quote); "" for an empty or unterminated quoted name.
     */
    public String name() {
        return name(text, kind, start, end);
    }

    /** A token's identifier as PostgreSQL names it (see {@link #name()}). */
    public static String name(String text, int kind, int start, int end) {
        if (kind == QUOTED) {
            if (end - start < 2 || text.charAt(end - 1) != '"') {
                return "";
            }
            return text.substring(start + 1, end - 1).replace("\"\"", "\"");
        }
        return text.substring(start, end).toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * True when {@code text[start, end)} is the bare word {@code lower} in any ASCII case. Only ASCII folds,
     * as in PostgreSQL's keyword lookup ({@code regionMatches(true, ...)} would also take {@code ſelect}).
     */
    public static boolean isWord(String text, int start, int end, String lower) {
        if (end - start != lower.length()) {
            return false;
        }
        for (int i = 0; i < lower.length(); i++) {
            char c = text.charAt(start + i);
            if (c >= 'A' && c <= 'Z') {
                c = (char) (c + 32);
            }
            if (c != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private int lexToken(char c) {
        if (c == '\'') {
            pos = skipString(pos, false);
            return STRING;
        }
        if (c == '"') {
            pos = skipQuoted(pos);
            return QUOTED;
        }
        if (c == '$') {
            return lexDollar();
        }
        if (isIdentStart(c)) {
            int e = pos + 1;
            while (e < len && isIdentPart(text.charAt(e))) {
                e++;
            }
            if (e - pos == 1 && (c == 'E' || c == 'e' || c == 'B' || c == 'b' || c == 'X' || c == 'x'
                    || c == 'N' || c == 'n') && e < len && text.charAt(e) == '\'') {
                pos = skipString(e, c == 'E' || c == 'e');
                return STRING;
            }
            pos = e;
            return IDENT;
        }
        if (c >= '0' && c <= '9' || (c == '.' && pos + 1 < len && isDigit(text.charAt(pos + 1)))) {
            int e = pos + 1;
            while (e < len) {
                char d = text.charAt(e);
                if (isDigit(d) || d == '.' || d == '_' || Character.isLetter(d)) {
                    e++;
                } else if ((d == '+' || d == '-') && (text.charAt(e - 1) == 'e' || text.charAt(e - 1) == 'E')) {
                    e++;
                } else {
                    break;
                }
            }
            pos = e;
            return NUMBER;
        }
        return lexPunctuation(c);
    }

    private int lexPunctuation(char c) {
        pos++;
        switch (c) {
            case '(':
                return LPAREN;
            case ')':
                return RPAREN;
            case ',':
                return COMMA;
            case ';':
                return SEMI;
            case '.':
                return DOT;
            case '[':
                return LBRACKET;
            case ']':
                return RBRACKET;
            case '{':
                return LBRACE;
            case '}':
                return RBRACE;
            case '?':
                if (pos < len && text.charAt(pos) == '?') {
                    pos++; // pgjdbc: '??' is an escaped '?' operator
                    return OP;
                }
                return PARAM;
            default:
                while (pos < len && isOperatorChar(text.charAt(pos)) && !text.startsWith("--", pos)
                        && !text.startsWith("/*", pos) && isOperatorChar(c)) {
                    pos++;
                }
                return OP;
        }
    }

    private static boolean isOperatorChar(char c) {
        return "+-*/<>=~!@#%^&|`:".indexOf(c) >= 0;
    }

    private int skipBlockComment(int from) {
        int nesting = 1;
        int p = from + 2;
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
        if (nesting > 0) {
            unterminated = true;
        }
        return Math.min(p, len);
    }

    /** From the opening quote; {@code ''} is a quote in both kinds, backslash escapes only in E''. */
    private int skipString(int quote, boolean escapes) {
        int p = quote + 1;
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
        unterminated = true;
        return len;
    }

    private int skipQuoted(int quote) {
        int p = quote + 1;
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
        unterminated = true;
        return len;
    }

    /** {@code $1} is a parameter; {@code $tag$ ... $tag$} (tag may be empty) is a dollar-quoted string. */
    private int lexDollar() {
        int p = pos + 1;
        if (p < len && isDigit(text.charAt(p))) {
            while (p < len && isDigit(text.charAt(p))) {
                p++;
            }
            pos = p;
            return PARAM;
        }
        if (p < len && isIdentStart(text.charAt(p))) {
            p++;
            while (p < len && (isIdentStart(text.charAt(p)) || isDigit(text.charAt(p)))) {
                p++;
            }
        }
        if (p < len && text.charAt(p) == '$') {
            int tagLength = p + 1 - pos;
            int close = indexOfTag(pos, tagLength, p + 1);
            if (close < 0) {
                unterminated = true;
            }
            pos = close < 0 ? len : close + tagLength;
            return STRING;
        }
        pos++;
        return OP;
    }

    /** Where the tag {@code text[tagStart, tagStart + tagLength)} next occurs from {@code from}, or -1. */
    private int indexOfTag(int tagStart, int tagLength, int from) {
        for (int i = text.indexOf('$', from); i >= 0 && i + tagLength <= len; i = text.indexOf('$', i + 1)) {
            if (text.regionMatches(i, text, tagStart, tagLength)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isIdentStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
    }

    private static boolean isIdentPart(char c) {
        return isIdentStart(c) || isDigit(c) || c == '$';
    }
}
