package io.lockhygiene.internal.sql;

import static io.lockhygiene.internal.sql.SqlLexer.END;
import static io.lockhygiene.internal.sql.SqlLexer.IDENT;
import static io.lockhygiene.internal.sql.SqlLexer.LPAREN;
import static io.lockhygiene.internal.sql.SqlLexer.SEMI;

import java.util.Collections;
import java.util.List;

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

    /**
     * True when the text's first statement is one PostgreSQL refuses inside a transaction block, or one whose meaning
     * a transaction block would change, so that no transaction of ours may go around it: VACUUM, CREATE or DROP
     * INDEX CONCURRENTLY, REINDEX ... CONCURRENTLY (and of a whole DATABASE or SYSTEM), CREATE or DROP DATABASE and
     * TABLESPACE, ALTER SYSTEM, the SUBSCRIPTION commands, CLUSTER of every table, DISCARD ALL, COMMIT or ROLLBACK
     * PREPARED, a CALL (its procedure may commit, which it cannot in a block) and a DO block whose text says COMMIT
     * or ROLLBACK. Looks at the first words only (a DO block's body is read as text): asked only where a transaction
     * of ours would otherwise go around the statement, never on the hot path.
     */
    public static boolean refusesTransactionBlock(String sql) {
        if (sql == null) {
            return false;
        }
        SqlLexer l = new SqlLexer(sql);
        if (l.next() != IDENT) {
            return false;
        }
        if (l.isWord("vacuum") || l.isWord("call")) {
            return true;
        }
        if (l.isWord("do")) {
            return mentions(sql, "commit") || mentions(sql, "rollback");
        }
        if (l.isWord("discard")) {
            return l.next() == IDENT && l.isWord("all");
        }
        if (l.isWord("commit") || l.isWord("rollback")) {
            return l.next() == IDENT && l.isWord("prepared");
        }
        if (l.isWord("alter")) {
            return l.next() == IDENT && (l.isWord("system") || l.isWord("subscription"));
        }
        if (l.isWord("cluster")) {
            int k = l.next();
            if (k == IDENT && l.isWord("verbose")) {
                k = l.next();
            }
            return k == SEMI || k == END; // CLUSTER of every table the user owns
        }
        if (l.isWord("reindex")) {
            int k = l.next();
            if (k == IDENT && (l.isWord("database") || l.isWord("system"))) {
                return true;
            }
            for (; k != SEMI && k != END; k = l.next()) {
                if (l.isWord("concurrently")) {
                    return true;
                }
            }
            return false;
        }
        boolean create = l.isWord("create");
        if (!create && !l.isWord("drop")) {
            return false;
        }
        if (l.next() != IDENT) {
            return false;
        }
        if (l.isWord("database") || l.isWord("tablespace") || l.isWord("subscription")) {
            return true;
        }
        if (create && l.isWord("unique") && l.next() != IDENT) {
            return false;
        }
        return l.isWord("index") && l.next() == IDENT && l.isWord("concurrently");
    }

    /** {@code word} (lower case) anywhere in {@code sql}, in any case. */
    private static boolean mentions(String sql, String word) {
        for (int i = 0; i + word.length() <= sql.length(); i++) {
            if (sql.regionMatches(true, i, word, 0, word.length())) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when {@code sql} is {@code DISCARD ALL} alone (any case, spaces and comments, a trailing
     * semicolon), which on PostgreSQL also releases the session's advisory locks.
     */
    public static boolean discardsAll(String sql) {
        if (sql == null) {
            return false;
        }
        SqlLexer lexer = new SqlLexer(sql);
        if (lexer.next() != SqlLexer.IDENT || !lexer.isWord("discard")
                || lexer.next() != SqlLexer.IDENT || !lexer.isWord("all")) {
            return false;
        }
        int kind = lexer.next();
        if (kind == SqlLexer.SEMI) {
            kind = lexer.next();
        }
        return kind == SqlLexer.END;
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

    /** What the scanner found in one SQL text. Immutable once built; safe to cache and share. */
    public static final class ScanResult {
        /** The verdict for the overwhelming majority of statements: nothing of interest. */
        public static final ScanResult NOTHING = new ScanResult(Collections.emptyList(), false, false, 1,
                Collections.emptyList(), Collections.emptyList(), Collections.emptyList(), Collections.emptyList());

        private final List<AdvisoryCall> calls;
        private final boolean skipLocked;
        private final boolean sessionLevel;
        private final boolean sessionAcquire;
        private final boolean writes;
        private final int statements;
        private final List<int[]> bodies;
        private final List<Integer> semicolons;
        private final List<Integer> skipLockedAt;
        private final List<TransactionControl> transactionControls;

        ScanResult(List<AdvisoryCall> calls, boolean skipLocked, boolean writes, int statements, List<int[]> bodies,
                   List<Integer> semicolons, List<Integer> skipLockedAt, List<TransactionControl> transactionControls) {
            this.transactionControls = Collections.unmodifiableList(transactionControls);
            this.bodies = Collections.unmodifiableList(bodies);
            this.semicolons = Collections.unmodifiableList(semicolons);
            this.skipLockedAt = Collections.unmodifiableList(skipLockedAt);
            this.calls = Collections.unmodifiableList(calls);
            this.skipLocked = skipLocked;
            this.writes = writes;
            this.statements = statements;
            boolean session = false;
            boolean acquire = false;
            for (AdvisoryCall c : calls) {
                if (c.function().isSessionLevel()) {
                    session = true;
                    acquire |= c.function().isAcquire();
                }
            }
            this.sessionLevel = session;
            this.sessionAcquire = acquire;
            this.nothingOfInterest = calls.isEmpty() && !skipLocked && bodies.isEmpty() && transactionControls.isEmpty();
        }

        private final boolean nothingOfInterest;

        /**
         * True when the text has no advisory call, SKIP LOCKED, code body or transaction control: {@link #NOTHING},
         * or a text of several such statements (which keeps its count).
         */
        public boolean nothingOfInterest() {
            return nothingOfInterest;
        }

        /** Every advisory function call, in text order, session-level and xact alike. */
        public List<AdvisoryCall> calls() {
            return calls;
        }

        /** True when a session-level function (lock, try, unlock or unlock_all) is called. */
        public boolean hasSessionLevelCall() {
            return sessionLevel;
        }

        /** True when a session-level lock is taken (lock or try, exclusive or shared). */
        public boolean hasSessionAcquire() {
            return sessionAcquire;
        }

        /** True when {@code SKIP LOCKED} appears outside strings and comments. */
        public boolean hasSkipLocked() {
            return skipLocked;
        }

        /**
         * True when the text has a keyword of a data, schema, transaction or session change, or a row lock
         * (INSERT, UPDATE, DELETE, MERGE, CREATE, SET, FOR UPDATE/SHARE, DO, CALL, COPY, ...).
         */
        public boolean hasWrites() {
            return writes;
        }

        /**
         * The [start, end) ranges of dollar-quoted strings that are code: bodies of DO blocks and of CREATE
         * FUNCTION / PROCEDURE. Their calls are not in {@link #calls()}: no statement-level rewrite can see
         * into them; a file scan looks inside with another scan.
         */
        public List<int[]> codeBodies() {
            return bodies;
        }

        /** Positions of top-level semicolons, for splitting a script into statements. */
        public List<Integer> semicolons() {
            return semicolons;
        }

        /** Positions of the SKIP of each SKIP LOCKED. */
        public List<Integer> skipLockedPositions() {
            return skipLockedAt;
        }

        /** Number of non-empty statements separated by semicolons. */
        public int statementCount() {
            return statements;
        }

        /** True when a blocking (non-try) session-level lock is taken. */
        public boolean hasBlockingAcquire() {
            for (AdvisoryCall c : calls) {
                if (c.function().isSessionLevel() && c.function().isAcquire() && !c.function().isTry()) {
                    return true;
                }
            }
            return false;
        }

        /** Top-level BEGIN, COMMIT, ROLLBACK [TO], SAVEPOINT, ... statements, in text order. */
        public List<TransactionControl> transactionControls() {
            return transactionControls;
        }

        /** True when the text opens or ends a transaction itself: LockHygiene must not wrap it in one. */
        public boolean hasTransactionControl() {
            return !transactionControls.isEmpty();
        }

        /**
         * The transaction end that is the text's last statement (COMMIT, ROLLBACK, END, ABORT, PREPARE
         * TRANSACTION, without AND CHAIN), or null: after such a text no transaction is open, whatever
         * came before, so a leak check may follow it on the same server.
         */
        public TransactionControl finalTransactionEnd() {
            if (transactionControls.isEmpty()) {
                return null;
            }
            TransactionControl last = transactionControls.get(transactionControls.size() - 1);
            return last.kind() == TransactionControl.Kind.END && last.statementIndex() == statements - 1 ? last : null;
        }

        /**
         * The transaction end that is the text's last statement, chained or not ({@link #finalTransactionEnd}, or
         * COMMIT / ROLLBACK ... AND CHAIN), or null: the transaction the text runs in ends there.
         */
        public TransactionControl finalEnd() {
            if (transactionControls.isEmpty()) {
                return null;
            }
            TransactionControl last = transactionControls.get(transactionControls.size() - 1);
            return (last.kind() == TransactionControl.Kind.END || last.kind() == TransactionControl.Kind.END_AND_CHAIN)
                    && last.statementIndex() == statements - 1 ? last : null;
        }

        /** True when the text has a COMMIT or ROLLBACK ... AND CHAIN: a transaction ends in it and the next begins. */
        public boolean chainsTransaction() {
            for (TransactionControl tc : transactionControls) {
                if (tc.kind() == TransactionControl.Kind.END_AND_CHAIN) {
                    return true;
                }
            }
            return false;
        }

        /** True when a BEGIN (or a chained end) stands before {@code end} in the text. */
        public boolean opensTransactionBefore(TransactionControl end) {
            for (TransactionControl tc : transactionControls) {
                if (tc.start() < end.start()
                        && (tc.kind() == TransactionControl.Kind.BEGIN || tc.kind() == TransactionControl.Kind.END_AND_CHAIN)) {
                    return true;
                }
            }
            return false;
        }

        /**
         * Whether each call (same order as {@link #calls()}) runs inside a transaction block, following the
         * text's own BEGIN and COMMIT from the state the text starts in.
         */
        public boolean[] callsInTransaction(boolean startsInTransaction) {
            boolean[] in = new boolean[calls.size()];
            int t = 0;
            boolean open = startsInTransaction;
            for (int i = 0; i < in.length; i++) {
                int at = calls.get(i).nameStart();
                while (t < transactionControls.size() && transactionControls.get(t).start() < at) {
                    TransactionControl.Kind k = transactionControls.get(t).kind();
                    if (k == TransactionControl.Kind.BEGIN || k == TransactionControl.Kind.END_AND_CHAIN) {
                        open = true;
                    } else if (k == TransactionControl.Kind.END) {
                        open = false;
                    }
                    t++;
                }
                in[i] = open;
            }
            return in;
        }

        /** The first session-level call, for messages. */
        public AdvisoryCall firstSessionCall() {
            for (AdvisoryCall c : calls) {
                if (c.function().isSessionLevel()) {
                    return c;
                }
            }
            return null;
        }

        @Override
        public String toString() {
            return "ScanResult" + calls + (skipLocked ? " SKIP LOCKED" : "");
        }
    }
}
