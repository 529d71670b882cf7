package io.lockhygiene.internal.sql;

/**
 * One call of an advisory lock function found in SQL text, by position. The text itself is never
 * rebuilt by the scanner; {@link SqlRewriter} splices at these positions.
 */
public final class AdvisoryCall {
    private final AdvisoryFunction function;
    private final int nameStart;
    private final int nameEnd;
    private final int openParen;
    private int closeParen = -1;
    private int argCount;
    private boolean sawArgToken;
    private final boolean selectListItem;
    private boolean aliasable;

    AdvisoryCall(AdvisoryFunction function, int nameStart, int nameEnd, int openParen, boolean selectListItem) {
        this.function = function;
        this.nameStart = nameStart;
        this.nameEnd = nameEnd;
        this.openParen = openParen;
        this.selectListItem = selectListItem;
    }

    public AdvisoryFunction function() {
        return function;
    }

    /** Start of the function name token (its opening quote when quoted; after any schema). */
    public int nameStart() {
        return nameStart;
    }

    public int nameEnd() {
        return nameEnd;
    }

    /** Position of the closing parenthesis, or -1 when the text ends first. */
    public int closeParen() {
        return closeParen;
    }

    /** Number of top-level arguments: 1 (bigint key), 2 (two int keys), 0 for unlock_all. */
    public int argCount() {
        return argCount;
    }

    /**
     * True when the call is a whole select-list item without an alias, so its result column is labelled
     * with the function's name; a rewrite then adds {@code AS <original name>} to keep the label.
     */
    public boolean aliasable() {
        return aliasable;
    }

    /** The text of the arguments between the parentheses, or "" when unterminated. */
    public String argumentText(String sql) {
        return closeParen < 0 ? "" : sql.substring(openParen + 1, closeParen);
    }

    boolean selectListItem() {
        return selectListItem;
    }

    void argToken() {
        if (!sawArgToken) {
            sawArgToken = true;
            argCount = 1;
        }
    }

    void comma() {
        argCount++;
    }

    void close(int position) {
        closeParen = position;
    }

    void markAliasable() {
        aliasable = true;
    }

    @Override
    public String toString() {
        return function.sqlName() + "@" + nameStart + "(" + argCount + " args)";
    }
}
