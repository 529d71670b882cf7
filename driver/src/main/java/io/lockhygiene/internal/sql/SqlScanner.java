package io.lockhygiene.internal.sql;

import static io.lockhygiene.internal.sql.SqlLexer.END;
import static io.lockhygiene.internal.sql.SqlLexer.IDENT;
import static io.lockhygiene.internal.sql.SqlLexer.LPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.SEMI;

/**
 * Finds advisory lock calls and {@code SKIP LOCKED} in SQL text, read by {@link SqlLexer} (PostgreSQL's
 * lexical rules): anything inside a string, a dollar-quoted body or a comment is not code. Unterminated
 * constructs run to the end of the text; no input makes it throw, and it runs in one linear pass.
 *
 * <p>Two levels: {@link #mightMatter(String)} is the hot-path prefilter (no allocation, two vectorised
 * passes for the "k" of "lock" in its two cases); only a hit pays for {@link #scan(String)}.
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
        // Every advisory function's name and SKIP LOCKED contain "lock": its last letter in its two cases,
        // found with String.indexOf (which the JIT vectorises), rules out a typical statement in two passes.
        // Only a text that says "lock" is asked for "advisory" or "skip" (a column lock_version is not ours).
        return (hasLock(sql, 'k') || hasLock(sql, 'K'))
                && (hasWordAround(sql, 'v', "advisory", 2) || hasWordAround(sql, 'V', "advisory", 2)
                || hasWordAround(sql, 'k', "skip", 1) || hasWordAround(sql, 'K', "skip", 1));
    }

    private static boolean hasLock(String sql, char k) {
        for (int i = sql.indexOf(k, 3); i >= 0; i = sql.indexOf(k, i + 1)) {
            if ((sql.charAt(i - 3) | 0x20) == 'l' && (sql.charAt(i - 2) | 0x20) == 'o' && (sql.charAt(i - 1) | 0x20) == 'c') {
                return true;
            }
        }
        return false;
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
        return new ScanPass(sql).run();
    }
}
