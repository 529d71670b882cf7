package io.lockhygiene.internal.shape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.lockhygiene.internal.sql.AdvisoryFunction;

/**
 * Reads one statement into a {@link LockShape}: a small recursive-descent parser over
 * {@link SqlTokens} for exactly the structure emulate must follow (where the calls are, what decides
 * whether each runs) and nothing more; other text is kept as opaque spans for the server. Anything it
 * does not understand makes the shape unsupported, with the reason: it never guesses.
 */
public final class ShapeParser {
    /** The reason given for a text of several statements (each is planned on its own). */
    public static final String SEVERAL_STATEMENTS = "several statements in one text";

    /** Top-level words that make a row statement's call count depend on more than its rows. */
    private static final Set<String> ROW_COUNT_WORDS = new HashSet<>(Arrays.asList(
            "limit", "offset", "fetch", "order", "group", "having", "window", "union", "intersect", "except",
            "distinct"));

    private final SqlTokens t;
    private final ExpressionReader x;
    private final int last;
    /** Where the select list starts. */
    private int listStart;

    private ShapeParser(String sql) {
        this.t = SqlTokens.of(sql);
        this.x = new ExpressionReader(t);
        this.last = x.last;
    }

    /** The shape of {@code sql}, one statement (a trailing semicolon allowed). Never throws. */
    public static LockShape parse(String sql) {
        ShapeParser p = new ShapeParser(sql);
        try {
            return p.statement();
        } catch (UnsupportedShape u) {
            return LockShape.unsupported(sql, u.getMessage(), p.x.calls, p.x.parameters);
        } catch (RuntimeException bug) {
            return LockShape.unsupported(sql, "a statement emulate could not read (" + bug + ")", p.x.calls,
                    p.x.parameters);
        }
    }

    private LockShape statement() {
        for (int i = 0; i < last; i++) {
            if (t.kind(i) == SqlTokens.SEMI) {
                throw new UnsupportedShape(SEVERAL_STATEMENTS);
            }
        }
        if (t.kind(0) == SqlTokens.LBRACE) {
            return escape();
        }
        if (!t.isWord(0, "select")) {
            throw new UnsupportedShape("a statement that is not a SELECT (" + (last == 0 ? "empty" : t.text(0)) + ")");
        }
        listStart = 1;
        if (t.isWord(listStart, "all")) {
            listStart++;
        } else if (t.isWord(listStart, "distinct")) {
            throw new UnsupportedShape("SELECT DISTINCT");
        }
        int fromAt = t.topLevelWord(listStart, last, "from");
        int itemsEnd = fromAt < 0 ? last : fromAt;
        if (itemsEnd == listStart) {
            throw new UnsupportedShape("an empty select list");
        }
        for (int i = listStart; i < itemsEnd; i++) {
            if (t.isWord(i, "into") && t.depthAt(listStart, i) == 0) {
                throw new UnsupportedShape("SELECT ... INTO");
            }
        }
        if (fromAt < 0) {
            List<LockShape.Item> items = items(listStart, itemsEnd, null);
            return LockShape.selectList(t.text(), items, x.calls, x.parameters);
        }
        LockShape fromShape = fromCall(fromAt);
        if (fromShape != null) {
            return fromShape;
        }
        return rows(fromAt);
    }

    /** {@code SELECT items FROM f(args) [[AS] alias [(column)]]}, or null when the FROM is something else. */
    private LockShape fromCall(int fromAt) {
        int i = fromAt + 1;
        int nameLength = x.callNameLength(i);
        if (nameLength == 0) {
            return null;
        }
        int open = i + nameLength;
        int close = t.matching(open, last);
        if (close < 0) {
            throw new UnsupportedShape("an unterminated call");
        }
        int after = close + 1;
        String alias = null;
        String column = null;
        if (after < last) {
            int a = after;
            if (t.isWord(a, "as")) {
                a++;
            }
            if (!x.isAliasToken(a)) {
                return null; // WITH ORDINALITY, a join, a WHERE: rows, not one call
            }
            alias = t.name(a);
            column = alias;
            a++;
            if (t.kind(a) == SqlTokens.LPAREN) {
                int c = t.matching(a, last);
                if (c != a + 2 || !x.isAliasToken(a + 1)) {
                    throw new UnsupportedShape("a column alias list emulate does not read");
                }
                column = t.name(a + 1);
                a = c + 1;
            }
            if (a != last) {
                return null;
            }
        }
        // the FROM's call is evaluated before the select list
        Node.Call call = x.call(i, close + 1);
        String name = call.function.sqlName();
        if (column == null) {
            column = name;
        }
        List<LockShape.Item> items = items(listStart, fromAt, new String[] {alias == null ? name : alias, column});
        return LockShape.fromCall(t.text(), items, call, alias, column, x.calls, x.parameters);
    }

    /** {@code SELECT f(key), ... FROM rows}: each item a call, evaluated for each row the rest yields. */
    private LockShape rows(int fromAt) {
        for (int i = fromAt; i < last; i++) {
            if (x.callAt(i)) {
                throw new UnsupportedShape("an advisory call in the FROM or WHERE of a statement that reads rows (how often"
                        + " PostgreSQL calls it depends on its plan)");
            }
            if (t.kind(i) == SqlTokens.IDENT && ROW_COUNT_WORDS.contains(t.name(i)) && t.depthAt(fromAt, i) == 0) {
                throw new UnsupportedShape("a statement that reads rows with " + t.name(i).toUpperCase(java.util.Locale.ROOT)
                        + " (which rows PostgreSQL calls the function for depends on its plan)");
            }
        }
        List<LockShape.Item> items = items(listStart, fromAt, null);
        for (LockShape.Item item : items) {
            if (!(item.expr instanceof Node.Call)) {
                throw new UnsupportedShape("a statement that reads rows with select-list items other than advisory calls");
            }
        }
        return LockShape.rows(t.text(), items, t.start(fromAt), x.calls, x.parameters);
    }

    /** JDBC's {@code {call f(args)}} and {@code {? = call f(args)}}. */
    private LockShape escape() {
        int i = 1;
        boolean out = false;
        if (t.kind(i) == SqlTokens.PARAM && t.isOp(i + 1, "=")) {
            out = true;
            i += 2;
        }
        if (!t.isWord(i, "call")) {
            throw new UnsupportedShape("a JDBC escape other than {call ...}");
        }
        i++;
        int nameLength = x.callNameLength(i);
        if (nameLength == 0) {
            throw new UnsupportedShape("a {call} of another function");
        }
        int close = t.matching(i + nameLength, last);
        if (close < 0 || t.kind(close + 1) != SqlTokens.RBRACE || close + 2 != last) {
            throw new UnsupportedShape("a {call} escape emulate does not read");
        }
        Node.Call call = x.call(i, close + 1);
        return LockShape.callEscape(t.text(), call, out, x.calls, x.parameters);
    }

    /** The select list's items between tokens [from, to). */
    private List<LockShape.Item> items(int from, int to, String[] fromNames) {
        List<LockShape.Item> items = new ArrayList<>();
        int start = from;
        int depth = 0;
        for (int i = from; i <= to; i++) {
            int k = i < to ? t.kind(i) : SqlTokens.COMMA;
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            } else if (k == SqlTokens.COMMA && depth == 0) {
                if (i == start) {
                    throw new UnsupportedShape("an empty select-list item");
                }
                items.add(item(start, i, fromNames));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new UnsupportedShape("unbalanced parentheses"); // PostgreSQL's own syntax error is asked first
        }
        return items;
    }

    private LockShape.Item item(int from, int to, String[] fromNames) {
        if (fromNames != null && !x.containsCall(from, to)) {
            boolean star = to - from == 1 && t.isOp(from, "*");
            boolean qualifiedStar = to - from == 3 && x.isAliasToken(from) && t.name(from).equals(fromNames[0])
                    && t.kind(from + 1) == SqlTokens.DOT && t.isOp(from + 2, "*");
            boolean column = to - from == 1 && x.isAliasToken(from) && t.name(from).equals(fromNames[1]);
            if (star || qualifiedStar || column) {
                return new LockShape.Item(new Node.Opaque(t.start(from), t.end(to - 1)), fromNames[1], true);
            }
        }
        if (!x.containsCall(from, to)) {
            return new LockShape.Item(new Node.Opaque(t.start(from), t.end(to - 1)), null, false);
        }
        Node expr = x.expressionFrom(from, to);
        int at = x.position();
        String alias = null;
        if (at < to && t.isWord(at, "as")) {
            at++;
            if (!x.isAliasToken(at) && t.kind(at) != SqlTokens.IDENT) {
                throw new UnsupportedShape("an alias emulate does not read");
            }
            alias = t.name(at++);
        } else if (at < to && x.isAliasToken(at)) {
            alias = t.name(at++);
        }
        if (at != to) {
            throw new UnsupportedShape("an advisory call inside an expression emulate does not follow ("
                    + t.text().substring(t.start(from), t.end(to - 1)).trim() + ")");
        }
        return new LockShape.Item(expr, alias, false);
    }
}
