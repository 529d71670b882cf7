package io.lockhygiene.internal.sql;

/**
 * A top-level statement that opens, ends or nests a transaction, as PostgreSQL's grammar spells it.
 * LockHygiene follows these so it never ends a transaction the application opened (by text or by the
 * JDBC API) and checks for leaks only once the transaction really ended.
 */
public final class TransactionControl {
    /** What the statement does to the transaction. */
    public enum Kind {
        /** BEGIN, START TRANSACTION: opens one (a warning only, when one is open already). */
        BEGIN,
        /** COMMIT, END, ROLLBACK, ABORT (without AND CHAIN), PREPARE TRANSACTION: ends it. */
        END,
        /** COMMIT / ROLLBACK ... AND CHAIN: ends it and opens the next at once, on the same server. */
        END_AND_CHAIN,
        /** SAVEPOINT name. */
        SAVEPOINT,
        /** ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name: undoes the transaction's work after it. */
        ROLLBACK_TO,
        /** RELEASE [SAVEPOINT] name. */
        RELEASE
    }

    private final Kind kind;
    private final int start;
    private final int end;
    private final int statementIndex;
    private final boolean keepsWork;

    TransactionControl(Kind kind, int start, int end, int statementIndex, boolean keepsWork) {
        this.kind = kind;
        this.start = start;
        this.end = end;
        this.statementIndex = statementIndex;
        this.keepsWork = keepsWork;
    }

    /**
     * True for an end that keeps what the transaction did: COMMIT and END (with or without AND CHAIN), and PREPARE
     * TRANSACTION, whose work is kept for a later COMMIT PREPARED. Not a ROLLBACK or ABORT.
     */
    public boolean keepsWork() {
        return keepsWork;
    }

    /** The first word of a statement {@link #classify} took for an end: whether that end keeps the work. */
    static boolean keepsWork(Kind kind, String firstWord) {
        return (kind == Kind.END || kind == Kind.END_AND_CHAIN)
                && ("commit".equals(firstWord) || "end".equals(firstWord) || "prepare".equals(firstWord));
    }

    /** Which statement of the text it is, from 0. */
    public int statementIndex() {
        return statementIndex;
    }

    public Kind kind() {
        return kind;
    }

    /** Where the statement's first word starts. */
    public int start() {
        return start;
    }

    /** Where the statement ends: its semicolon, or the end of the text. */
    public int end() {
        return end;
    }

    /** The statement's text in {@code sql}, the text it was scanned from. */
    public String textIn(String sql) {
        return sql.substring(start, end);
    }

    /**
     * The savepoint's name in this SAVEPOINT, ROLLBACK TO or RELEASE statement of {@code sql} (the text it was
     * scanned from): its last name, a bare one folded to lower case and a quoted one exact, as PostgreSQL
     * names it ({@code "a""b"} is {@code a"b}, never {@code b}); "" when it has none.
     */
    public String savepointName(String sql) {
        SqlLexer lexer = new SqlLexer(sql.substring(start, end));
        String name = "";
        lexer.next(); // the statement's first word is a keyword, never the name
        for (int kind = lexer.next(); kind != SqlLexer.END; kind = lexer.next()) {
            if (kind == SqlLexer.IDENT || kind == SqlLexer.QUOTED) {
                name = lexer.name();
            }
        }
        return name;
    }

    /**
     * True when the transaction end {@code endText} commits (COMMIT, END, COMMIT AND CHAIN in any case, after
     * comments): not a ROLLBACK, ABORT or PREPARE TRANSACTION.
     */
    public static boolean commits(String endText) {
        SqlLexer lexer = new SqlLexer(endText);
        return lexer.next() == SqlLexer.IDENT && (lexer.isWord("commit") || lexer.isWord("end"));
    }

    /**
     * True when the transaction end {@code endText} keeps the transaction's work (see {@link #keepsWork()}): COMMIT,
     * END, COMMIT AND CHAIN, PREPARE TRANSACTION, in any case, after comments.
     */
    public static boolean keepsWork(String endText) {
        SqlLexer lexer = new SqlLexer(endText);
        return lexer.next() == SqlLexer.IDENT && (lexer.isWord("commit") || lexer.isWord("end") || lexer.isWord("prepare"));
    }

    /**
     * Classifies a statement by its leading words (lower-cased, at most five); null when it is no
     * transaction control. COMMIT PREPARED and ROLLBACK PREPARED act on a prepared transaction, not on
     * the session's, and are none of these.
     */
    static Kind classify(String[] words, int count) {
        if (count == 0) {
            return null;
        }
        String w1 = words[0];
        String w2 = count > 1 ? words[1] : "";
        switch (w1) {
            case "begin":
                return Kind.BEGIN;
            case "start":
                return "transaction".equals(w2) ? Kind.BEGIN : null;
            case "savepoint":
                return Kind.SAVEPOINT;
            case "release":
                return Kind.RELEASE;
            case "prepare":
                return "transaction".equals(w2) ? Kind.END : null;
            case "commit":
            case "end":
            case "rollback":
            case "abort":
                if ("prepared".equals(w2)) {
                    return null;
                }
                int i = 1;
                if ("work".equals(w2) || "transaction".equals(w2)) {
                    i = 2;
                }
                String next = count > i ? words[i] : "";
                if ("to".equals(next)) {
                    return "rollback".equals(w1) || "abort".equals(w1) ? Kind.ROLLBACK_TO : null;
                }
                if ("and".equals(next)) {
                    String after = count > i + 1 ? words[i + 1] : "";
                    return "chain".equals(after) ? Kind.END_AND_CHAIN : Kind.END; // AND NO CHAIN
                }
                return Kind.END;
            default:
                return null;
        }
    }

    @Override
    public String toString() {
        return kind + "@" + start;
    }

    /**
     * The text starts with a transaction end's word (COMMIT, END, ROLLBACK, ABORT; a look at its first word, no scan):
     * it may be the application's end of a transaction whose leak check is due, which must carry the check. For a
     * front end that decides before it reads a text (R2DBC, when a statement is made).
     */
    public static boolean mayStartWithEnd(String sql) {
        int i = 0;
        int n = sql.length();
        while (i < n && Character.isWhitespace(sql.charAt(i))) {
            i++;
        }
        return startsWord(sql, i, "commit") || startsWord(sql, i, "end") || startsWord(sql, i, "rollback")
                || startsWord(sql, i, "abort");
    }

    private static boolean startsWord(String sql, int at, String word) {
        int end = at + word.length();
        return sql.regionMatches(true, at, word, 0, word.length())
                && (end == sql.length() || !Character.isJavaIdentifierPart(sql.charAt(end)));
    }

    /**
     * The text is one transaction end and nothing else: COMMIT, END, ROLLBACK or ABORT, chained or not (not PREPARE
     * TRANSACTION). A front end that sends a text as one statement (R2DBC) can put the fence or the check in the
     * round trip of such an end only.
     */
    public static boolean isSoleEnd(SqlScanner.ScanResult scan, String sql) {
        return scan.statementCount() == 1 && scan.finalEnd() != null
                && !sql.regionMatches(true, scan.finalEnd().start(), "prepare", 0, 7);
    }
}
