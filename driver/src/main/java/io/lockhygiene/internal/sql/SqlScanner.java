package io.lockhygiene.internal.sql;

import java.util.ArrayList;
import java.util.List;

import static io.lockhygiene.internal.sql.SqlLexer.COMMA;
import static io.lockhygiene.internal.sql.SqlLexer.DOT;
import static io.lockhygiene.internal.sql.SqlLexer.END;
import static io.lockhygiene.internal.sql.SqlLexer.IDENT;
import static io.lockhygiene.internal.sql.SqlLexer.LPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.QUOTED;
import static io.lockhygiene.internal.sql.SqlLexer.RPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.SEMI;
import static io.lockhygiene.internal.sql.SqlLexer.STRING;

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

    /**
     * True when the text is one statement that may run inside a transaction block as it would alone:
     * SELECT, INSERT, UPDATE, DELETE, MERGE, WITH, VALUES, TABLE (not VACUUM, CREATE INDEX CONCURRENTLY,
     * CALL, transaction control or anything else a BEGIN would change or break), with no semicolon but a
     * trailing one. The leak check sample wraps only such autocommit statements; the plan caches the answer.
     */
    public static boolean runsInTransactionBlockAsAlone(String sql) {
        if (sql == null) {
            return false;
        }
        SqlLexer lexer = new SqlLexer(sql);
        int kind = lexer.next();
        while (kind == LPAREN) {
            kind = lexer.next();
        }
        if (kind != IDENT || !isOneOf(lexer, WRAPPABLE_FIRST_WORDS)) {
            return false;
        }
        do {
            kind = lexer.next();
        } while (kind != SEMI && kind != END);
        if (kind == SEMI) {
            kind = lexer.next();
        }
        return kind == END && !lexer.sawUnterminated(); // an unclosed text would swallow what follows it
    }

    private static boolean isOneOf(SqlLexer lexer, String[] words) {
        for (String w : words) {
            if (lexer.isWord(w)) {
                return true;
            }
        }
        return false;
    }

    /** The full lexical scan. Never throws for any non-null input; null and "" give NOTHING. */
    public static ScanResult scan(String sql) {
        if (sql == null || sql.isEmpty()) {
            return ScanResult.NOTHING;
        }
        return new Pass(sql).run();
    }

    /** One scan's state. */
    private static final class Pass {
        private final String s;
        private final SqlLexer lexer;

        // current token
        private int tok;
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
        private int t1 = END;
        private int t1Start;
        private int t1End;
        private int t2 = END;
        private int t2Start;
        private int t2End;
        private int t3 = END;
        private int t3Start;
        private int t3End;
        private int t4 = END;
        private int t4Start;
        private int t4End;
        private AdvisoryCall justClosed; // waits for the next token to decide aliasable

        Pass(String s) {
            this.s = s;
            this.lexer = new SqlLexer(s);
        }

        ScanResult run() {
            do {
                tok = lexer.next();
                tokStart = lexer.start();
                tokEnd = lexer.end();
                onToken();
            } while (tok != END);
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
            if (!open.isEmpty() && tok != RPAREN) {
                AdvisoryCall innermost = open.get(open.size() - 1);
                int callDepth = openDepth.get(open.size() - 1);
                if (depth == callDepth && tok == COMMA) {
                    innermost.comma();
                } else if (depth >= callDepth && tok != END) {
                    innermost.argToken();
                }
            }
            if (tok != SEMI && tok != END) {
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
            if (t1 == IDENT || t1 == QUOTED) {
                boolean quoted = t1 == QUOTED;
                int ns = quoted ? t1Start + 1 : t1Start;
                int ne = quoted ? t1End - 1 : t1End;
                AdvisoryFunction f = AdvisoryFunction.byName(s, ns, ne, quoted);
                if (f != null) {
                    boolean qualified = t2 == DOT;
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
                    && (t1 == IDENT && (word(t1Start, t1End, "do") || word(t2Start, t2End, "language")));
            boolean routine = routineInStatement && firstWordStart >= 0 && word(firstWordStart, firstWordEnd, "create")
                    && t1 == IDENT && word(t1Start, t1End, "as");
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
        private boolean startsSelectItem(int before, int start, int end) {
            return before == COMMA || (before == IDENT
                    && (word(start, end, "select") || word(start, end, "distinct") || word(start, end, "all")));
        }

        private boolean isPgCatalog(int t, int start, int end) {
            if (t == IDENT) {
                return word(start, end, "pg_catalog");
            }
            return t == QUOTED && s.regionMatches(start, "\"pg_catalog\"", 0, 12) && end - start == 12;
        }

        private boolean isWord(String lower) {
            return word(tokStart, tokEnd, lower);
        }

        private boolean word(int start, int end, String lower) {
            return SqlLexer.isWord(s, start, end, lower);
        }

        private void ensureDepth() {
            if (depth >= selectList.length) {
                boolean[] bigger = new boolean[selectList.length * 2];
                System.arraycopy(selectList, 0, bigger, 0, selectList.length);
                selectList = bigger;
            }
        }
    }
}
