package io.lockhygiene.internal.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds advisory lock calls and {@code SKIP LOCKED} in SQL text with PostgreSQL's lexical rules:
 * standard strings ({@code ''} escapes), {@code E''} strings (backslash escapes), dollar quotes with
 * tags, quoted identifiers, {@code --} comments and nested {@code /* *}{@code /} comments. Anything
 * inside a string, a dollar-quoted body or a comment is not code. Unterminated constructs run to the
 * end of the text; no input makes it throw, and it runs in one linear pass.
 *
 * <p>Two levels: {@link #mightMatter(String)} is the hot-path prefilter (no allocation, one
 * case-insensitive pass for "advisory" and "skip"); only a hit pays for {@link #scan(String)}.
 *
 * <p>A call is recognised as {@code name (} with optional whitespace and comments between, where the
 * name is bare (any ASCII letter case) or quoted (exact lower case), unqualified or qualified by
 * {@code pg_catalog}. A function of the same name in another schema is the user's own, not ours.
 */
public final class SqlScanner {

    private SqlScanner() {
    }

    /**
     * The prefilter: false means the text cannot contain an advisory call or SKIP LOCKED, so it takes the
     * fast path. True means "look closer": the word may sit in a string or a comment.
     */
    public static boolean mightMatter(String sql) {
        if (sql == null) {
            return false;
        }
        // Look for the rare letters of the two words ('v' of advisory, 'k' of skip) with String.indexOf,
        // which the JIT vectorises, and check the word around each hit: a typical statement has none.
        return hasWordAround(sql, 'v', "advisory", 2) || hasWordAround(sql, 'V', "advisory", 2)
                || hasWordAround(sql, 'k', "skip", 1) || hasWordAround(sql, 'K', "skip", 1);
    }

    private static boolean hasWordAround(String sql, char letter, String lowerWord, int letterAt) {
        int len = sql.length();
        for (int i = sql.indexOf(letter); i >= 0; i = sql.indexOf(letter, i + 1)) {
            int start = i - letterAt;
            if (start >= 0 && start + lowerWord.length() <= len && regionIsLower(sql, start, lowerWord)) {
                return true;
            }
        }
        return false;
    }

    private static boolean regionIsLower(String s, int from, String lower) {
        for (int k = 0; k < lower.length(); k++) {
            if ((s.charAt(from + k) | 0x20) != lower.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static final String[] WRAPPABLE_FIRST_WORDS = {
        "select", "insert", "update", "delete", "merge", "with", "values", "table"};

    /** No allocation: the sample's turn reads this once in a hundred statements on the hot path. */
    private static boolean startsWithOneOf(String sql, int start, int length, String[] words) {
        for (String w : words) {
            if (w.length() == length && sql.regionMatches(true, start, w, 0, length)) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when the text is one statement that may run inside a transaction block as it would alone:
     * SELECT, INSERT, UPDATE, DELETE, MERGE, WITH, VALUES, TABLE (not VACUUM, CREATE INDEX CONCURRENTLY,
     * CALL, transaction control or anything else a BEGIN would change or break), with no semicolon but a
     * trailing one (a semicolon in a literal only makes this say false: the text is then left alone). The
     * leak check sample wraps only such autocommit statements. A short scan of the text's start.
     */
    public static boolean runsInTransactionBlockAsAlone(String sql) {
        if (sql == null) {
            return false;
        }
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c) || c == '(') {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                int eol = sql.indexOf('\n', i);
                i = eol < 0 ? n : eol + 1;
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                int nested = sql.indexOf("/*", i + 2);
                if (end < 0 || (nested >= 0 && nested < end)) {
                    return false; // unterminated or nested: not worth reading
                }
                i = end + 2;
            } else {
                break;
            }
        }
        int start = i;
        while (i < n && Character.isLetter(sql.charAt(i))) {
            i++;
        }
        if (!startsWithOneOf(sql, start, i - start, WRAPPABLE_FIRST_WORDS)) {
            return false;
        }
        int semi = sql.indexOf(';', i);
        if (semi < 0) {
            return true;
        }
        for (int k = semi + 1; k < n; k++) {
            if (!Character.isWhitespace(sql.charAt(k))) {
                return false;
            }
        }
        return true;
    }

    /** The full lexical scan. Never throws for any non-null input; null and "" give NOTHING. */
    public static ScanResult scan(String sql) {
        if (sql == null || sql.isEmpty()) {
            return ScanResult.NOTHING;
        }
        return new Pass(sql).run();
    }

    /** Token kinds the call finder cares about. */
    private enum Tok { IDENT, QUOTED, STRING, NUMBER, PARAM, LPAREN, RPAREN, COMMA, SEMI, DOT, OTHER, END }

    /** One scan's state. */
    private static final class Pass {
        private final String s;
        private final int len;
        private int pos;

        // current token
        private Tok tok;
        private int tokStart;
        private int tokEnd;

        // call finder
        private final List<AdvisoryCall> calls = new ArrayList<>(2);
        private final List<AdvisoryCall> open = new ArrayList<>(2); // calls whose ')' is pending
        private final List<Integer> openDepth = new ArrayList<>(2);
        private boolean[] selectList = new boolean[8];
        private int depth;
        private boolean skipLocked;
        private boolean prevWasSkip;
        private boolean writes;
        private int statements;
        private boolean tokensInStatement;
        // for file scanning: where statements end, where SKIP LOCKED is, which dollar quotes are code
        private final List<int[]> bodies = new ArrayList<>(0);
        private final List<Integer> semicolons = new ArrayList<>(0);
        private final List<Integer> skipLockedAt = new ArrayList<>(0);
        private int firstWordStart = -1;
        private int firstWordEnd = -1;
        // transaction control: the leading words of the current statement, lower-cased
        private final List<TransactionControl> transactionControls = new ArrayList<>(0);
        private final String[] words = new String[5];
        private int wordCount;
        private int statementStart = -1;
        private boolean routineInStatement;
        private int lastSkipStart;
        // the last four significant tokens: enough for [before] schema . name (
        private Tok t1 = Tok.END;
        private int t1Start;
        private int t1End;
        private Tok t2 = Tok.END;
        private int t2Start;
        private int t2End;
        private Tok t3 = Tok.END;
        private int t3Start;
        private int t3End;
        private Tok t4 = Tok.END;
        private int t4Start;
        private int t4End;
        private AdvisoryCall justClosed; // waits for the next token to decide aliasable

        Pass(String s) {
            this.s = s;
            this.len = s.length();
        }

        ScanResult run() {
            while (next()) {
                onToken();
            }
            tok = Tok.END;
            tokStart = tokEnd = len;
            onToken();
            if (tokensInStatement) {
                statements++;
            }
            return calls.isEmpty() && !skipLocked && bodies.isEmpty() && transactionControls.isEmpty()
                    ? ScanResult.NOTHING
                    : new ScanResult(calls, skipLocked, writes, statements, bodies, semicolons, skipLockedAt,
                            transactionControls);
        }

        private void onToken() {
            if (justClosed != null) {
                if (endsSelectItem()) {
                    justClosed.markAliasable();
                }
                justClosed = null;
            }
            if (!open.isEmpty() && tok != Tok.RPAREN) {
                AdvisoryCall innermost = open.get(open.size() - 1);
                int callDepth = openDepth.get(open.size() - 1);
                if (depth == callDepth && tok == Tok.COMMA) {
                    innermost.comma();
                } else if (depth >= callDepth && tok != Tok.END) {
                    innermost.argToken();
                }
            }
            if (tok != Tok.SEMI && tok != Tok.END) {
                if (!tokensInStatement) {
                    statementStart = tokStart;
                }
                tokensInStatement = true;
            } else {
                endStatement();
            }
            switch (tok) {
                case LPAREN:
                    onOpenParen();
                    break;
                case RPAREN:
                    onCloseParen();
                    break;
                case SEMI:
                    depth = 0;
                    selectList[0] = false;
                    if (tokensInStatement) {
                        statements++;
                        tokensInStatement = false;
                    }
                    semicolons.add(tokStart);
                    firstWordStart = -1;
                    routineInStatement = false;
                    break;
                case STRING:
                    prevWasSkip = false;
                    noteBody();
                    break;
                case IDENT:
                    onKeyword();
                    break;
                default:
                    prevWasSkip = false;
            }
            t4 = t3;
            t4Start = t3Start;
            t4End = t3End;
            t3 = t2;
            t3Start = t2Start;
            t3End = t2End;
            t2 = t1;
            t2Start = t1Start;
            t2End = t1End;
            t1 = tok;
            t1Start = tokStart;
            t1End = tokEnd;
        }

        /** At a top-level ';' or the end: note the statement if it is transaction control. */
        private void endStatement() {
            if (tokensInStatement && wordCount > 0) {
                TransactionControl.Kind kind = TransactionControl.classify(words, wordCount);
                if (kind != null) {
                    transactionControls.add(new TransactionControl(kind, statementStart, tokStart, statements));
                }
            }
            wordCount = 0;
        }

        private void onOpenParen() {
            prevWasSkip = false;
            AdvisoryCall call = null;
            if (t1 == Tok.IDENT || t1 == Tok.QUOTED) {
                boolean quoted = t1 == Tok.QUOTED;
                int ns = quoted ? t1Start + 1 : t1Start;
                int ne = quoted ? t1End - 1 : t1End;
                AdvisoryFunction f = AdvisoryFunction.byName(s, ns, ne, quoted);
                if (f != null) {
                    boolean qualified = t2 == Tok.DOT;
                    if (!qualified || isPgCatalog(t3, t3Start, t3End)) {
                        boolean item = selectList[depth] && (qualified
                                ? startsSelectItem(t4, t4Start, t4End) : startsSelectItem(t2, t2Start, t2End));
                        call = new AdvisoryCall(f, t1Start, t1End, tokStart, item);
                    }
                }
            }
            depth++;
            ensureDepth();
            selectList[depth] = false;
            if (call != null) {
                calls.add(call);
                open.add(call);
                openDepth.add(depth);
            }
        }

        private void onCloseParen() {
            prevWasSkip = false;
            if (!open.isEmpty() && openDepth.get(open.size() - 1) == depth) {
                AdvisoryCall c = open.remove(open.size() - 1);
                openDepth.remove(openDepth.size() - 1);
                c.close(tokStart);
                if (c.selectListItem()) {
                    justClosed = c;
                }
            }
            if (depth > 0) {
                depth--;
            }
        }

        private void onKeyword() {
            if (isWord("select") || isWord("distinct")) {
                selectList[depth] = true;
            } else if (isWord("from") || isWord("into") || isWord("where") || isWord("group")
                    || isWord("having") || isWord("order") || isWord("limit") || isWord("offset")
                    || isWord("window") || isWord("union") || isWord("except") || isWord("intersect")
                    || isWord("for") || isWord("returning") || isWord("values") || isWord("fetch")) {
                selectList[depth] = false;
            }
            if (firstWordStart < 0) {
                firstWordStart = tokStart;
                firstWordEnd = tokEnd;
            }
            if (wordCount < words.length && (wordCount > 0 || statementStart == tokStart)) {
                words[wordCount++] = s.substring(tokStart, tokEnd).toLowerCase(java.util.Locale.ROOT);
            }
            if (isWord("function") || isWord("procedure")) {
                routineInStatement = true;
            }
            if (!writes && isWriteKeyword()) {
                writes = true;
            }
            if (prevWasSkip && isWord("locked")) {
                skipLocked = true;
                skipLockedAt.add(lastSkipStart);
            }
            prevWasSkip = isWord("skip");
            if (prevWasSkip) {
                lastSkipStart = tokStart;
            }
        }

        /**
         * Keywords of statements that change data, schema or session state, and of row locks
         * (FOR UPDATE / SHARE): a statement with one of these cannot run on a lock holder.
         */
        private boolean isWriteKeyword() {
            switch (tokEnd - tokStart) {
                case 2:
                    return isWord("do");
                case 3:
                    return isWord("set");
                case 4:
                    return isWord("call") || isWord("copy") || isWord("drop") || isWord("lock");
                case 5:
                    return isWord("alter") || isWord("grant") || isWord("merge") || isWord("reset")
                            || isWord("share") || isWord("begin");
                case 6:
                    return isWord("insert") || isWord("update") || isWord("delete") || isWord("create")
                            || isWord("revoke") || isWord("vacuum") || isWord("commit") || isWord("notify");
                case 7:
                    return isWord("refresh") || isWord("comment") || isWord("cluster") || isWord("reindex");
                case 8:
                    return isWord("truncate") || isWord("rollback");
                default:
                    return false;
            }
        }

        /** The token after a select-list call's ')' ends the item: no alias, no operator follows. */
        private boolean endsSelectItem() {
            switch (tok) {
                case COMMA:
                case RPAREN:
                case SEMI:
                case END:
                    return true;
                case IDENT:
                    return isWord("from") || isWord("into") || isWord("where") || isWord("group")
                            || isWord("having") || isWord("order") || isWord("limit") || isWord("offset")
                            || isWord("window") || isWord("union") || isWord("except") || isWord("intersect")
                            || isWord("for") || isWord("fetch");
                default:
                    return false;
            }
        }

        /**
         * A dollar-quoted string that is code: the body of a DO block ({@code DO $$...$$},
         * {@code DO LANGUAGE plpgsql $$...$$}) or of CREATE FUNCTION / PROCEDURE ({@code AS $$...$$}).
         */
        private void noteBody() {
            if (tokEnd - tokStart < 2 || s.charAt(tokStart) != '$') {
                return;
            }
            boolean doBlock = firstWordStart >= 0 && word(firstWordStart, firstWordEnd, "do")
                    && (t1 == Tok.IDENT && (word(t1Start, t1End, "do") || word(t2Start, t2End, "language")));
            boolean routine = routineInStatement && firstWordStart >= 0 && word(firstWordStart, firstWordEnd, "create")
                    && t1 == Tok.IDENT && word(t1Start, t1End, "as");
            if (doBlock || routine) {
                int open = s.indexOf('$', tokStart + 1) + 1;
                int close = s.lastIndexOf('$', tokEnd - 2);
                int delimiter = open - tokStart;
                int contentEnd = tokEnd - delimiter;
                if (contentEnd >= open && close >= 0) {
                    bodies.add(new int[] {open, contentEnd});
                }
            }
        }

        /** Whether the token before the call (or before its schema) opens or continues a select list. */
        private boolean startsSelectItem(Tok before, int start, int end) {
            return before == Tok.COMMA || (before == Tok.IDENT
                    && (word(start, end, "select") || word(start, end, "distinct") || word(start, end, "all")));
        }

        private boolean isPgCatalog(Tok t, int start, int end) {
            if (t == Tok.IDENT) {
                return word(start, end, "pg_catalog");
            }
            return t == Tok.QUOTED && s.regionMatches(start, "\"pg_catalog\"", 0, 12) && end - start == 12;
        }

        private boolean isWord(String lower) {
            return word(tokStart, tokEnd, lower);
        }

        private boolean word(int start, int end, String lower) {
            if (end - start != lower.length()) {
                return false;
            }
            for (int i = 0; i < lower.length(); i++) {
                char c = s.charAt(start + i);
                if (c >= 'A' && c <= 'Z') {
                    c = (char) (c + 32);
                }
                if (c != lower.charAt(i)) {
                    return false;
                }
            }
            return true;
        }

        private void ensureDepth() {
            if (depth >= selectList.length) {
                boolean[] bigger = new boolean[selectList.length * 2];
                System.arraycopy(selectList, 0, bigger, 0, selectList.length);
                selectList = bigger;
            }
        }

        /** Lexes the next significant token; false at end of text. */
        private boolean next() {
            while (pos < len) {
                char c = s.charAt(pos);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
                    pos++;
                } else if (c == '-' && pos + 1 < len && s.charAt(pos + 1) == '-') {
                    int nl = s.indexOf('\n', pos + 2);
                    pos = nl < 0 ? len : nl + 1;
                } else if (c == '/' && pos + 1 < len && s.charAt(pos + 1) == '*') {
                    skipBlockComment();
                } else {
                    lexToken(c);
                    return true;
                }
            }
            return false;
        }

        private void lexToken(char c) {
            tokStart = pos;
            if (c == '\'') {
                skipString(false);
                tok = Tok.STRING;
            } else if (c == '"') {
                skipQuotedIdentifier();
                tok = Tok.QUOTED;
            } else if (c == '$') {
                lexDollar();
            } else if (isIdentStart(c)) {
                pos++;
                while (pos < len && isIdentPart(s.charAt(pos))) {
                    pos++;
                }
                // E'...' (any case) is an escape string: backslash escapes apply
                if (pos - tokStart == 1 && (c == 'E' || c == 'e') && pos < len && s.charAt(pos) == '\'') {
                    skipString(true);
                    tok = Tok.STRING;
                } else {
                    tok = Tok.IDENT;
                }
            } else if (c >= '0' && c <= '9') {
                pos++;
                while (pos < len && (isIdentPart(s.charAt(pos)) || s.charAt(pos) == '.')) {
                    pos++;
                }
                tok = Tok.NUMBER;
            } else {
                pos++;
                switch (c) {
                    case '(':
                        tok = Tok.LPAREN;
                        break;
                    case ')':
                        tok = Tok.RPAREN;
                        break;
                    case ',':
                        tok = Tok.COMMA;
                        break;
                    case ';':
                        tok = Tok.SEMI;
                        break;
                    case '.':
                        tok = Tok.DOT;
                        break;
                    case '?':
                        tok = Tok.PARAM;
                        break;
                    default:
                        tok = Tok.OTHER;
                }
            }
            tokEnd = pos;
        }

        private void skipBlockComment() {
            int nesting = 1;
            pos += 2;
            while (pos < len && nesting > 0) {
                char c = s.charAt(pos);
                if (c == '/' && pos + 1 < len && s.charAt(pos + 1) == '*') {
                    nesting++;
                    pos += 2;
                } else if (c == '*' && pos + 1 < len && s.charAt(pos + 1) == '/') {
                    nesting--;
                    pos += 2;
                } else {
                    pos++;
                }
            }
        }

        /** From the opening quote; {@code ''} is a quote in both kinds, backslash escapes only in E''. */
        private void skipString(boolean escapes) {
            pos++;
            while (pos < len) {
                char c = s.charAt(pos);
                if (escapes && c == '\\') {
                    pos += 2;
                } else if (c == '\'') {
                    if (pos + 1 < len && s.charAt(pos + 1) == '\'') {
                        pos += 2;
                    } else {
                        pos++;
                        return;
                    }
                } else {
                    pos++;
                }
            }
            pos = Math.min(pos, len);
        }

        private void skipQuotedIdentifier() {
            pos++;
            while (pos < len) {
                if (s.charAt(pos) == '"') {
                    if (pos + 1 < len && s.charAt(pos + 1) == '"') {
                        pos += 2;
                    } else {
                        pos++;
                        return;
                    }
                } else {
                    pos++;
                }
            }
        }

        /** {@code $1} is a parameter; {@code $tag$ ... $tag$} (tag may be empty) is a dollar-quoted string. */
        private void lexDollar() {
            int p = pos + 1;
            if (p < len && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
                while (p < len && s.charAt(p) >= '0' && s.charAt(p) <= '9') {
                    p++;
                }
                pos = p;
                tok = Tok.PARAM;
                return;
            }
            if (p < len && isIdentStart(s.charAt(p))) {
                p++;
                while (p < len && isTagPart(s.charAt(p))) {
                    p++;
                }
            }
            if (p < len && s.charAt(p) == '$') {
                String delimiter = s.substring(pos, p + 1);
                int close = s.indexOf(delimiter, p + 1);
                pos = close < 0 ? len : close + delimiter.length();
                tok = Tok.STRING;
                return;
            }
            pos++;
            tok = Tok.OTHER;
        }

        private static boolean isIdentStart(char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
        }

        private static boolean isIdentPart(char c) {
            return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$';
        }

        private static boolean isTagPart(char c) {
            return isIdentStart(c) || (c >= '0' && c <= '9');
        }
    }
}
