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

    /** Words after which a bare word is not an alias of the expression before it. */
    private static final Set<String> NOT_AN_ALIAS = new HashSet<>(Arrays.asList(
            "from", "where", "group", "having", "order", "limit", "offset", "fetch", "for", "window", "union",
            "intersect", "except", "into", "and", "or", "not", "is", "then", "else", "end", "when", "as", "on",
            "join", "left", "right", "inner", "outer", "full", "cross", "natural", "using", "lateral", "with",
            "returning", "collate", "between", "like", "ilike", "similar", "in", "isnull", "notnull"));
    /** Top-level words that make a row statement's call count depend on more than its rows. */
    private static final Set<String> ROW_COUNT_WORDS = new HashSet<>(Arrays.asList(
            "limit", "offset", "fetch", "order", "group", "having", "window", "union", "intersect", "except",
            "distinct"));

    private final SqlTokens t;
    private final int last;
    private final boolean[] callAt;
    private final int[] parameterIndex;
    private final List<Node.Call> calls = new ArrayList<>(2);
    private int parameters;
    private int pos;

    private ShapeParser(String sql) {
        this.t = SqlTokens.of(sql);
        int n = t.size();
        while (n > 0 && t.kind(n - 1) == SqlTokens.SEMI) {
            n--; // trailing semicolons end the one statement
        }
        this.last = n;
        this.callAt = new boolean[n + 1];
        this.parameterIndex = new int[n + 1];
        for (int i = 0; i < n; i++) {
            callAt[i] = callNameLength(i) > 0;
            if (t.kind(i) == SqlTokens.PARAM && "?".equals(t.text(i))) {
                parameterIndex[i] = ++parameters;
            }
        }
    }

    /** The shape of {@code sql}, one statement (a trailing semicolon allowed). Never throws. */
    public static LockShape parse(String sql) {
        ShapeParser p = new ShapeParser(sql);
        try {
            return p.statement();
        } catch (Unsupported u) {
            return LockShape.unsupported(sql, u.getMessage(), p.calls, p.parameters);
        } catch (RuntimeException bug) {
            return LockShape.unsupported(sql, "a statement emulate could not read (" + bug + ")", p.calls, p.parameters);
        }
    }

    /** Thrown inside the parser for any shape it does not follow. */
    private static final class Unsupported extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unsupported(String why) {
            super(why, null, false, false);
        }
    }

    private LockShape statement() {
        for (int i = 0; i < last; i++) {
            if (t.kind(i) == SqlTokens.SEMI) {
                throw new Unsupported(SEVERAL_STATEMENTS);
            }
        }
        if (t.kind(0) == SqlTokens.LBRACE) {
            return escape();
        }
        if (!t.isWord(0, "select")) {
            throw new Unsupported("a statement that is not a SELECT (" + (last == 0 ? "empty" : t.text(0)) + ")");
        }
        pos = 1;
        if (t.isWord(pos, "all")) {
            pos++;
        } else if (t.isWord(pos, "distinct")) {
            throw new Unsupported("SELECT DISTINCT");
        }
        int fromAt = findTopLevelWord(pos, last, "from");
        int itemsEnd = fromAt < 0 ? last : fromAt;
        if (itemsEnd == pos) {
            throw new Unsupported("an empty select list");
        }
        for (int i = pos; i < itemsEnd; i++) {
            if (t.isWord(i, "into") && depthAt(pos, i) == 0) {
                throw new Unsupported("SELECT ... INTO");
            }
        }
        if (fromAt < 0) {
            List<LockShape.Item> items = items(pos, itemsEnd, null);
            return new LockShape(t.text(), LockShape.Form.SELECT_LIST, items, null, null, null, -1, false, -1, calls,
                    parameters, false);
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
        int nameLength = callNameLength(i);
        if (nameLength == 0) {
            return null;
        }
        int open = i + nameLength;
        int close = matching(open);
        if (close < 0) {
            throw new Unsupported("an unterminated call");
        }
        int after = close + 1;
        String alias = null;
        String column = null;
        boolean columns = false;
        int aliasEnd = close + 1;
        if (after < last) {
            int a = after;
            if (t.isWord(a, "as")) {
                a++;
            }
            if (!isAliasToken(a)) {
                return null; // WITH ORDINALITY, a join, a WHERE: rows, not one call
            }
            alias = t.name(a);
            column = alias;
            aliasEnd = t.end(a);
            a++;
            if (t.kind(a) == SqlTokens.LPAREN) {
                int c = matching(a);
                if (c != a + 2 || !isAliasToken(a + 1)) {
                    throw new Unsupported("a column alias list emulate does not read");
                }
                column = t.name(a + 1);
                columns = true;
                aliasEnd = t.end(c);
                a = c + 1;
            }
            if (a != last) {
                return null;
            }
        }
        // the FROM's call is evaluated before the select list
        Node.Call call = call(i, close + 1);
        String name = call.function.sqlName();
        if (column == null) {
            column = name;
        }
        List<LockShape.Item> items = items(pos, fromAt, new String[] {alias == null ? name : alias, column});
        return new LockShape(t.text(), LockShape.Form.FROM_CALL, items, call, alias, column,
                alias == null ? t.end(close) : aliasEnd, columns, -1, calls, parameters, false);
    }

    /** {@code SELECT f(key), ... FROM rows}: each item a call, evaluated for each row the rest yields. */
    private LockShape rows(int fromAt) {
        for (int i = fromAt; i < last; i++) {
            if (callAt[i]) {
                throw new Unsupported("an advisory call in the FROM or WHERE of a statement that reads rows (how often"
                        + " PostgreSQL calls it depends on its plan)");
            }
            if (t.kind(i) == SqlTokens.IDENT && ROW_COUNT_WORDS.contains(t.name(i)) && depthAt(fromAt, i) == 0) {
                throw new Unsupported("a statement that reads rows with " + t.name(i).toUpperCase(java.util.Locale.ROOT)
                        + " (which rows PostgreSQL calls the function for depends on its plan)");
            }
        }
        List<LockShape.Item> items = items(pos, fromAt, null);
        for (LockShape.Item item : items) {
            if (!(item.expr instanceof Node.Call)) {
                throw new Unsupported("a statement that reads rows with select-list items other than advisory calls");
            }
        }
        return new LockShape(t.text(), LockShape.Form.ROWS, items, null, null, null, -1, false, t.start(fromAt), calls,
                parameters, false);
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
            throw new Unsupported("a JDBC escape other than {call ...}");
        }
        i++;
        int nameLength = callNameLength(i);
        if (nameLength == 0) {
            throw new Unsupported("a {call} of another function");
        }
        int close = matching(i + nameLength);
        if (close < 0 || t.kind(close + 1) != SqlTokens.RBRACE || close + 2 != last) {
            throw new Unsupported("a {call} escape emulate does not read");
        }
        Node.Call call = call(i, close + 1);
        String name = call.function.sqlName();
        List<LockShape.Item> items = new ArrayList<>(1);
        items.add(new LockShape.Item(call, "result", true));
        return new LockShape(t.text(), LockShape.Form.CALL_ESCAPE, items, call, "result", "result", -1, false, -1,
                calls, parameters, out);
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
                    throw new Unsupported("an empty select-list item");
                }
                items.add(item(start, i, fromNames));
                start = i + 1;
            }
        }
        return items;
    }

    private LockShape.Item item(int from, int to, String[] fromNames) {
        if (fromNames != null && !containsCall(from, to)) {
            boolean star = to - from == 1 && t.isOp(from, "*");
            boolean qualifiedStar = to - from == 3 && isAliasToken(from) && t.name(from).equals(fromNames[0])
                    && t.kind(from + 1) == SqlTokens.DOT && t.isOp(from + 2, "*");
            boolean column = to - from == 1 && isAliasToken(from) && t.name(from).equals(fromNames[1]);
            if (star || qualifiedStar || column) {
                return new LockShape.Item(new Node.Opaque(t.start(from), t.end(to - 1)), fromNames[1], true);
            }
        }
        if (!containsCall(from, to)) {
            return new LockShape.Item(new Node.Opaque(t.start(from), t.end(to - 1)), null, false);
        }
        pos = from;
        Node expr = expression(to);
        String alias = null;
        if (pos < to && t.isWord(pos, "as")) {
            pos++;
            if (!isAliasToken(pos) && t.kind(pos) != SqlTokens.IDENT) {
                throw new Unsupported("an alias emulate does not read");
            }
            alias = t.name(pos++);
        } else if (pos < to && isAliasToken(pos)) {
            alias = t.name(pos++);
        }
        if (pos != to) {
            throw new Unsupported("an advisory call inside an expression emulate does not follow ("
                    + t.text().substring(t.start(from), t.end(to - 1)).trim() + ")");
        }
        return new LockShape.Item(expr, alias, false);
    }

    // expression := or ; or := and (OR and)* ; and := not (AND not)* ; not := NOT not | postfix
    // postfix := atom ('::' type)* ; atom := call | CASE ... END | CAST(expression AS type) | (expression) | TRUE | FALSE | NULL

    private Node expression(int to) {
        Node left = and(to);
        if (!t.isWord(pos, "or") || pos >= to) {
            return left;
        }
        List<Node> args = new ArrayList<>();
        args.add(left);
        while (pos < to && t.isWord(pos, "or")) {
            pos++;
            args.add(and(to));
        }
        return checkedBool(Node.Bool.Op.OR, args);
    }

    /**
     * AND / OR: PostgreSQL evaluates left to right and stops early, and folds a constant operand first
     * (an AND with a constant FALSE calls nothing). An operand only the server can evaluate may therefore
     * decide whether a call runs: emulate does not follow such an expression.
     */
    private Node checkedBool(Node.Bool.Op op, List<Node> args) {
        boolean anyCall = false;
        boolean anyOpaque = false;
        for (Node a : args) {
            anyCall |= a.containsCall();
            anyOpaque |= !decidable(a);
        }
        if (anyCall && anyOpaque) {
            throw new Unsupported("an advisory call in an " + op + " whose other operand calls none (it may decide"
                    + " whether the call runs)");
        }
        return new Node.Bool(args.get(0).start, args.get(args.size() - 1).end, op, args);
    }

    private Node and(int to) {
        Node left = not(to);
        if (pos >= to || !t.isWord(pos, "and")) {
            return left;
        }
        List<Node> args = new ArrayList<>();
        args.add(left);
        while (pos < to && t.isWord(pos, "and")) {
            pos++;
            args.add(not(to));
        }
        return checkedBool(Node.Bool.Op.AND, args);
    }

    private Node not(int to) {
        if (pos < to && t.isWord(pos, "not")) {
            int start = t.start(pos);
            pos++;
            Node inner = not(to);
            List<Node> args = new ArrayList<>(1);
            args.add(inner);
            return new Node.Bool(start, inner.end, Node.Bool.Op.NOT, args);
        }
        return postfix(to);
    }

    private Node postfix(int to) {
        Node n = atom(to);
        while (pos < to && t.isOp(pos, "::")) {
            pos++;
            int typeEnd = typeName(pos, to);
            n = new Node.Cast(n.start, t.end(typeEnd - 1), n);
            pos = typeEnd;
        }
        return n;
    }

    private Node atom(int to) {
        if (pos >= to) {
            throw new Unsupported("an incomplete expression");
        }
        int nameLength = callNameLength(pos);
        if (nameLength > 0) {
            int close = matching(pos + nameLength);
            if (close < 0 || close >= to) {
                throw new Unsupported("an unterminated call");
            }
            Node.Call c = call(pos, close + 1);
            pos = close + 1;
            return c;
        }
        if (t.isWord(pos, "case")) {
            return caseExpression(to);
        }
        if (t.isWord(pos, "cast") && t.kind(pos + 1) == SqlTokens.LPAREN) {
            int close = matching(pos + 1);
            if (close < 0 || close >= to) {
                throw new Unsupported("an unterminated CAST");
            }
            int start = t.start(pos);
            int as = findTopLevelWord(pos + 2, close, "as");
            if (as < 0) {
                throw new Unsupported("a CAST without AS");
            }
            Node inner = span(pos + 2, as);
            typeName(as + 1, close);
            pos = close + 1;
            return new Node.Cast(start, t.end(close), inner);
        }
        if (t.kind(pos) == SqlTokens.LPAREN) {
            int close = matching(pos);
            if (close < 0 || close >= to) {
                throw new Unsupported("an unterminated parenthesis");
            }
            Node inner = span(pos + 1, close);
            pos = close + 1;
            return inner;
        }
        if (t.isWord(pos, "true") || t.isWord(pos, "false") || t.isWord(pos, "null")) {
            Boolean v = t.isWord(pos, "null") ? null : t.isWord(pos, "true");
            Node.Const c = new Node.Const(t.start(pos), t.end(pos), v);
            pos++;
            return c;
        }
        // something else next to an advisory call (a comparison, an operator): not followed
        int end = pos;
        while (end < to && !callAt[end] && t.kind(end) != SqlTokens.COMMA) {
            end++;
        }
        throw new Unsupported("an advisory call combined with other operators ("
                + t.text().substring(t.start(pos), t.end(Math.max(pos, end - 1))).trim() + ")");
    }

    /** {@code CASE WHEN c THEN r ... [ELSE e] END}; a condition that calls nothing may not decide a later call. */
    private Node caseExpression(int to) {
        int start = t.start(pos);
        pos++;
        if (!t.isWord(pos, "when")) {
            throw new Unsupported("a simple CASE (CASE x WHEN ...)");
        }
        int endAt = caseEnd(pos, to);
        List<Node> conditions = new ArrayList<>(2);
        List<Node> results = new ArrayList<>(2);
        Node otherwise = null;
        while (t.isWord(pos, "when")) {
            int then = caseWord(pos + 1, endAt, "then");
            conditions.add(span(pos + 1, then));
            int next = caseNext(then + 1, endAt);
            results.add(span(then + 1, next));
            pos = next;
        }
        if (t.isWord(pos, "else")) {
            otherwise = span(pos + 1, endAt);
            pos = endAt;
        }
        if (pos != endAt) {
            throw new Unsupported("a CASE emulate does not read");
        }
        pos = endAt + 1;
        Node.Case c = new Node.Case(start, t.end(endAt), conditions, results, otherwise);
        // a condition PostgreSQL evaluates decides the calls of every branch after it
        for (int i = 0; i < conditions.size(); i++) {
            if (!decidable(conditions.get(i))) {
                boolean laterCall = otherwise != null && otherwise.containsCall();
                for (int j = i; j < results.size() && !laterCall; j++) {
                    laterCall = results.get(j).containsCall() || (j > i && conditions.get(j).containsCall());
                }
                if (laterCall) {
                    throw new Unsupported("a CASE whose condition calls no advisory function but decides whether one"
                            + " is called (emulate cannot know its value beforehand)");
                }
            }
        }
        return c;
    }

    /** True when the lock table can tell the value: calls, boolean constants, NOT / AND / OR of those. */
    static boolean decidable(Node n) {
        if (n instanceof Node.Call || n instanceof Node.Const) {
            return true;
        }
        if (n instanceof Node.Bool) {
            for (Node a : ((Node.Bool) n).args) {
                if (!decidable(a)) {
                    return false;
                }
            }
            return true;
        }
        if (n instanceof Node.Case) {
            Node.Case c = (Node.Case) n;
            for (Node a : c.conditions) {
                if (!decidable(a)) {
                    return false;
                }
            }
            for (Node a : c.results) {
                if (!decidable(a)) {
                    return false;
                }
            }
            return c.otherwise == null || decidable(c.otherwise);
        }
        return false;
    }

    /** Tokens [from, to): opaque when they call nothing, else one expression that must use all of them. */
    private Node span(int from, int to) {
        if (from >= to) {
            throw new Unsupported("an empty expression");
        }
        if (!containsCall(from, to)) {
            if (to - from == 1 && (t.isWord(from, "true") || t.isWord(from, "false") || t.isWord(from, "null"))) {
                return new Node.Const(t.start(from), t.end(from), t.isWord(from, "null") ? null : t.isWord(from, "true"));
            }
            return new Node.Opaque(t.start(from), t.end(to - 1));
        }
        int saved = pos;
        pos = from;
        Node n = expression(to);
        if (pos != to) {
            throw new Unsupported("an advisory call inside an expression emulate does not follow ("
                    + t.text().substring(t.start(from), t.end(to - 1)).trim() + ")");
        }
        pos = saved;
        return n;
    }

    /** The call whose name starts at token {@code at} and whose ')' is token {@code end - 1}. */
    private Node.Call call(int at, int end) {
        int nameLength = callNameLength(at);
        int nameToken = at + nameLength - 1;
        AdvisoryFunction f = function(nameToken);
        int open = nameToken + 1;
        int close = end - 1;
        List<KeyArg> args = new ArrayList<>(2);
        if (close > open + 1) {
            int start = open + 1;
            int depth = 0;
            for (int i = open + 1; i <= close; i++) {
                int k = t.kind(i);
                if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                    depth++;
                } else if ((k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) && i < close) {
                    depth--;
                } else if ((k == SqlTokens.COMMA && depth == 0) || i == close) {
                    if (i == start) {
                        throw new Unsupported("an empty argument");
                    }
                    if (containsCall(start, i)) {
                        throw new Unsupported("an advisory call whose key is computed by another advisory call");
                    }
                    args.add(KeyArg.read(t, start, i, parameterIndex));
                    start = i + 1;
                }
            }
        }
        Node.Call c = new Node.Call(t.start(at), t.end(close), f, args, calls.size());
        calls.add(c);
        return c;
    }

    /**
     * The number of tokens of an advisory function's name starting at {@code i} ({@code name} or
     * {@code pg_catalog.name}, bare in any case or quoted exactly) when a '(' follows; 0 otherwise.
     */
    private int callNameLength(int i) {
        if (function(i) != null && t.kind(i + 1) == SqlTokens.LPAREN && t.kind(i - 1) != SqlTokens.DOT) {
            return 1;
        }
        if (t.kind(i + 1) == SqlTokens.DOT && function(i + 2) != null && t.kind(i + 3) == SqlTokens.LPAREN
                && t.kind(i - 1) != SqlTokens.DOT && "pg_catalog".equals(t.kind(i) == SqlTokens.IDENT
                || t.kind(i) == SqlTokens.QUOTED ? t.name(i) : null)) {
            return 3;
        }
        return 0;
    }

    private AdvisoryFunction function(int i) {
        int k = t.kind(i);
        if (k == SqlTokens.IDENT) {
            return AdvisoryFunction.byName(t.text(), t.start(i), t.end(i), false);
        }
        if (k == SqlTokens.QUOTED && t.end(i) - t.start(i) > 2) {
            return AdvisoryFunction.byName(t.text(), t.start(i) + 1, t.end(i) - 1, true);
        }
        return null;
    }

    private boolean containsCall(int from, int to) {
        for (int i = from; i < to; i++) {
            if (callAt[i]) {
                return true;
            }
        }
        return false;
    }

    /** The matching ')' of the '(' at {@code open}, or -1. */
    private int matching(int open) {
        if (t.kind(open) != SqlTokens.LPAREN) {
            return -1;
        }
        int depth = 0;
        for (int i = open; i < last; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
                if (depth == 0) {
                    return k == SqlTokens.RPAREN ? i : -1;
                }
            }
        }
        return -1;
    }

    private int depthAt(int from, int at) {
        int depth = 0;
        for (int i = from; i < at; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            }
        }
        return depth;
    }

    /** The first {@code word} at parenthesis depth 0 in [from, to), CASE ... END skipped; -1 if none. */
    private int findTopLevelWord(int from, int to, String word) {
        int depth = 0;
        int cases = 0;
        for (int i = from; i < to; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            } else if (depth == 0 && t.isWord(i, "case")) {
                cases++;
            } else if (depth == 0 && cases > 0 && t.isWord(i, "end")) {
                cases--;
            } else if (depth == 0 && cases == 0 && t.isWord(i, word)) {
                return i;
            }
        }
        return -1;
    }

    /** The END of the CASE whose first WHEN is at {@code from}. */
    private int caseEnd(int from, int to) {
        int depth = 0;
        int cases = 0;
        for (int i = from; i < to; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            } else if (depth == 0 && t.isWord(i, "case")) {
                cases++;
            } else if (depth == 0 && t.isWord(i, "end")) {
                if (cases == 0) {
                    return i;
                }
                cases--;
            }
        }
        throw new Unsupported("a CASE without END");
    }

    /** {@code word} at this CASE's own level in [from, to). */
    private int caseWord(int from, int to, String word) {
        int depth = 0;
        int cases = 0;
        for (int i = from; i < to; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            } else if (depth == 0 && t.isWord(i, "case")) {
                cases++;
            } else if (depth == 0 && cases > 0 && t.isWord(i, "end")) {
                cases--;
            } else if (depth == 0 && cases == 0 && t.isWord(i, word)) {
                return i;
            }
        }
        throw new Unsupported("a CASE without " + word.toUpperCase(java.util.Locale.ROOT));
    }

    /** The next WHEN or ELSE of this CASE after a THEN, or its END. */
    private int caseNext(int from, int endAt) {
        int depth = 0;
        int cases = 0;
        for (int i = from; i < endAt; i++) {
            int k = t.kind(i);
            if (k == SqlTokens.LPAREN || k == SqlTokens.LBRACKET) {
                depth++;
            } else if (k == SqlTokens.RPAREN || k == SqlTokens.RBRACKET) {
                depth--;
            } else if (depth == 0 && t.isWord(i, "case")) {
                cases++;
            } else if (depth == 0 && cases > 0 && t.isWord(i, "end")) {
                cases--;
            } else if (depth == 0 && cases == 0 && (t.isWord(i, "when") || t.isWord(i, "else"))) {
                return i;
            }
        }
        return endAt;
    }

    /**
     * The end (exclusive) of a type name starting at {@code from}: a word (schema-qualified or not), the
     * second word of PostgreSQL's two-word types, a (n) modifier, [].
     */
    private int typeName(int from, int to) {
        int i = from;
        if (i >= to || (t.kind(i) != SqlTokens.IDENT && t.kind(i) != SqlTokens.QUOTED)) {
            throw new Unsupported("a cast to a type emulate does not read");
        }
        i++;
        if (i + 1 < to && t.kind(i) == SqlTokens.DOT) {
            i += 2;
        }
        if (i < to && (t.isWord(i, "varying") || t.isWord(i, "precision"))) {
            i++;
        }
        if (i + 2 < to && (t.isWord(i, "with") || t.isWord(i, "without")) && t.isWord(i + 1, "time")
                && t.isWord(i + 2, "zone")) {
            i += 3;
        }
        if (i < to && t.kind(i) == SqlTokens.LPAREN) {
            int close = matching(i);
            if (close < 0 || close >= to) {
                throw new Unsupported("a cast to a type emulate does not read");
            }
            i = close + 1;
        }
        while (i + 1 < to && t.kind(i) == SqlTokens.LBRACKET && t.kind(i + 1) == SqlTokens.RBRACKET) {
            i += 2;
        }
        return i;
    }

    private boolean isAliasToken(int i) {
        return t.kind(i) == SqlTokens.QUOTED || (t.kind(i) == SqlTokens.IDENT && !NOT_AN_ALIAS.contains(t.name(i)));
    }
}
