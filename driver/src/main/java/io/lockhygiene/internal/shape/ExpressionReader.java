package io.lockhygiene.internal.shape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.lockhygiene.internal.sql.AdvisoryFunction;

/**
 * The expressions of one statement for {@link ShapeParser}: select-list items, calls and their keys, CASE,
 * NOT / AND / OR, casts, constants; anything else next to a call makes the shape unsupported
 * ({@link UnsupportedShape}). A recursive-descent reader over {@link SqlTokens} with one position; it also
 * keeps the statement's calls in text order and numbers its bind parameters.
 */
final class ExpressionReader {
    /** Words after which a bare word is not an alias of the expression before it. */
    private static final Set<String> NOT_AN_ALIAS = new HashSet<>(Arrays.asList(
            "from", "where", "group", "having", "order", "limit", "offset", "fetch", "for", "window", "union",
            "intersect", "except", "into", "and", "or", "not", "is", "then", "else", "end", "when", "as", "on",
            "join", "left", "right", "inner", "outer", "full", "cross", "natural", "using", "lateral", "with",
            "returning", "collate", "between", "like", "ilike", "similar", "in", "isnull", "notnull"));

    private final SqlTokens t;
    /** The statement's end: trailing semicolons are not part of it. */
    final int last;
    private final boolean[] callAt;
    private final int[] parameterIndex;
    final List<Node.Call> calls = new ArrayList<>(2);
    int parameters;
    private int pos;

    ExpressionReader(SqlTokens t) {
        this.t = t;
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

    /** True when an advisory call's name starts at token {@code i}. */
    boolean callAt(int i) {
        return callAt[i];
    }

    /** The expression at tokens [from, to): read as far as it goes; {@link #position()} says where it stopped. */
    Node expressionFrom(int from, int to) {
        pos = from;
        return expression(to);
    }

    /** Where the last expression read stopped. */
    int position() {
        return pos;
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
            anyOpaque |= !Node.decidable(a);
        }
        if (anyCall && anyOpaque) {
            throw new UnsupportedShape("an advisory call in an " + op + " whose other operand calls none (it may decide"
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
            int typeEnd = t.typeNameEnd(pos, to, last);
            if (typeEnd < 0) {
                throw new UnsupportedShape("a cast to a type emulate does not read");
            }
            n = new Node.Cast(n.start, t.end(typeEnd - 1), n);
            pos = typeEnd;
        }
        return n;
    }

    private Node atom(int to) {
        if (pos >= to) {
            throw new UnsupportedShape("an incomplete expression");
        }
        int nameLength = callNameLength(pos);
        if (nameLength > 0) {
            int close = t.matching(pos + nameLength, last);
            if (close < 0 || close >= to) {
                throw new UnsupportedShape("an unterminated call");
            }
            Node.Call c = call(pos, close + 1);
            pos = close + 1;
            return c;
        }
        if (t.isWord(pos, "case")) {
            return caseExpression(to);
        }
        if (t.isWord(pos, "cast") && t.kind(pos + 1) == SqlTokens.LPAREN) {
            int close = t.matching(pos + 1, last);
            if (close < 0 || close >= to) {
                throw new UnsupportedShape("an unterminated CAST");
            }
            int start = t.start(pos);
            int as = t.topLevelWord(pos + 2, close, "as");
            if (as < 0) {
                throw new UnsupportedShape("a CAST without AS");
            }
            Node inner = span(pos + 2, as);
            if (t.typeNameEnd(as + 1, close, last) < 0) {
                throw new UnsupportedShape("a cast to a type emulate does not read");
            }
            pos = close + 1;
            return new Node.Cast(start, t.end(close), inner);
        }
        if (t.kind(pos) == SqlTokens.LPAREN) {
            int close = t.matching(pos, last);
            if (close < 0 || close >= to) {
                throw new UnsupportedShape("an unterminated parenthesis");
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
        throw new UnsupportedShape("an advisory call combined with other operators ("
                + t.text().substring(t.start(pos), t.end(Math.max(pos, end - 1))).trim() + ")");
    }

    /** {@code CASE WHEN c THEN r ... [ELSE e] END}; a condition that calls nothing may not decide a later call. */
    private Node caseExpression(int to) {
        int start = t.start(pos);
        pos++;
        if (!t.isWord(pos, "when")) {
            throw new UnsupportedShape("a simple CASE (CASE x WHEN ...)");
        }
        int endAt = t.caseEnd(pos, to);
        if (endAt < 0) {
            throw new UnsupportedShape("a CASE without END");
        }
        List<Node> conditions = new ArrayList<>(2);
        List<Node> results = new ArrayList<>(2);
        Node otherwise = null;
        while (t.isWord(pos, "when")) {
            int then = t.caseWord(pos + 1, endAt, "then");
            if (then < 0) {
                throw new UnsupportedShape("a CASE without THEN");
            }
            conditions.add(span(pos + 1, then));
            int next = t.caseNext(then + 1, endAt);
            results.add(span(then + 1, next));
            pos = next;
        }
        if (t.isWord(pos, "else")) {
            otherwise = span(pos + 1, endAt);
            pos = endAt;
        }
        if (pos != endAt) {
            throw new UnsupportedShape("a CASE emulate does not read");
        }
        pos = endAt + 1;
        Node.Case c = new Node.Case(start, t.end(endAt), conditions, results, otherwise);
        // a condition PostgreSQL evaluates decides the calls of every branch after it
        for (int i = 0; i < conditions.size(); i++) {
            if (!Node.decidable(conditions.get(i))) {
                boolean laterCall = otherwise != null && otherwise.containsCall();
                for (int j = i; j < results.size() && !laterCall; j++) {
                    laterCall = results.get(j).containsCall() || (j > i && conditions.get(j).containsCall());
                }
                if (laterCall) {
                    throw new UnsupportedShape("a CASE whose condition calls no advisory function but decides whether one"
                            + " is called (emulate cannot know its value beforehand)");
                }
            }
        }
        return c;
    }

    /** Tokens [from, to): opaque when they call nothing, else one expression that must use all of them. */
    private Node span(int from, int to) {
        if (from >= to) {
            throw new UnsupportedShape("an empty expression");
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
            throw new UnsupportedShape("an advisory call inside an expression emulate does not follow ("
                    + t.text().substring(t.start(from), t.end(to - 1)).trim() + ")");
        }
        pos = saved;
        return n;
    }

    /** The call whose name starts at token {@code at} and whose ')' is token {@code end - 1}. */
    Node.Call call(int at, int end) {
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
                        throw new UnsupportedShape("an empty argument");
                    }
                    if (containsCall(start, i)) {
                        throw new UnsupportedShape("an advisory call whose key is computed by another advisory call");
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
    int callNameLength(int i) {
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

    boolean containsCall(int from, int to) {
        for (int i = from; i < to; i++) {
            if (callAt[i]) {
                return true;
            }
        }
        return false;
    }

    boolean isAliasToken(int i) {
        return t.kind(i) == SqlTokens.QUOTED || (t.kind(i) == SqlTokens.IDENT && !NOT_AN_ALIAS.contains(t.name(i)));
    }
}
