package io.lockhygiene.internal.sql;

import static io.lockhygiene.internal.sql.SqlLexer.COMMA;
import static io.lockhygiene.internal.sql.SqlLexer.DOT;
import static io.lockhygiene.internal.sql.SqlLexer.END;
import static io.lockhygiene.internal.sql.SqlLexer.IDENT;
import static io.lockhygiene.internal.sql.SqlLexer.LPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.QUOTED;
import static io.lockhygiene.internal.sql.SqlLexer.RPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.SEMI;
import static io.lockhygiene.internal.sql.SqlLexer.STRING;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.sql.SqlScanner.ScanResult;

/**
 * One scan of a text (see {@link SqlScanner#scan}): the advisory calls with their arguments and whether they
 * are whole select-list items, SKIP LOCKED, the statements and their semicolons, code bodies, and
 * transaction control, from {@link SqlLexer}'s tokens in one pass. Not thread-safe; one per scan.
 */
final class ScanPass {
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

    ScanPass(String s) {
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
        // a text of several statements keeps its count (an owner's is one implicit transaction: its commit is fenced)
        return calls.isEmpty() && !skipLocked && bodies.isEmpty() && transactionControls.isEmpty() && statements <= 1
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
                transactionControls.add(new TransactionControl(kind, statementStart, tokStart, statements,
                        TransactionControl.keepsWork(kind, words[0])));
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
