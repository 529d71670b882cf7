package io.lockhygiene.internal.shape;

import java.util.Collections;
import java.util.List;

/**
 * One statement's advisory calls as emulate decides them: which calls, on which keys, in the order
 * PostgreSQL evaluates them, and how the statement is answered. Made by {@link ShapeParser}; pure and
 * immutable but for the parameter types PostgreSQL accepted it with; cached with the text's analysis.
 *
 * <p>Forms:
 * <ul>
 * <li>{@link Form#SELECT_LIST}: {@code SELECT item, ...} without FROM (one row): calls, CASE, NOT/AND/OR,
 * casts and other expressions that call nothing;</li>
 * <li>{@link Form#FROM_CALL}: {@code SELECT ... FROM f(args) [AS alias]} (what pgjdbc sends for
 * {@code {call f(?)}}, and {@code SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))});</li>
 * <li>{@link Form#ROWS}: {@code SELECT f(key), ... FROM ... [WHERE ...]}: every select-list item a call,
 * keys that may read the rows, evaluated once per row in the order of the rows;</li>
 * <li>{@link Form#CALL_ESCAPE}: JDBC's {@code {call f(?)}} and {@code {? = call f(?)}}.</li>
 * </ul>
 * A statement of any other shape is {@linkplain #unsupported() unsupported}, with the reason.
 */
public final class LockShape {
    public enum Form { SELECT_LIST, FROM_CALL, ROWS, CALL_ESCAPE }

    /** One select-list item and the name of its result column. */
    public static final class Item {
        final Node expr;
        /** The alias as PostgreSQL names it, or null. */
        final String alias;
        /** FROM_CALL: the item is {@code *} or the call's column, answered from the call itself. */
        final boolean fromColumn;

        Item(Node expr, String alias, boolean fromColumn) {
            this.expr = expr;
            this.alias = alias;
            this.fromColumn = fromColumn;
        }

        public Node expr() {
            return expr;
        }

        /** The column label PostgreSQL gives it: its alias, or the expression's derived name. */
        public String label() {
            return alias != null ? alias : expr.columnName();
        }
    }

    final String sql;
    final Form form;
    final List<Item> items;
    /** FROM_CALL and CALL_ESCAPE: the call the statement is about. */
    final Node.Call fromCall;
    /** FROM_CALL: the table alias written (null: none, the function's name is used). */
    final String fromAlias;
    /** FROM_CALL: the call's result column name (its column alias, its table alias, or the function's name). */
    final String fromColumn;
    /** ROWS: where the text after the select list starts (its FROM). */
    final int tailStart;
    final List<Node.Call> calls;
    final int parameterCount;
    final boolean outParameter;
    final String unsupported;
    private static final int MAX_ACCEPTED = 16;
    private final java.util.Set<String> accepted = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private LockShape(String sql, Form form, List<Item> items, Node.Call fromCall, String fromAlias, String fromColumn,
                      int tailStart, List<Node.Call> calls, int parameterCount, boolean outParameter, String unsupported) {
        this.sql = sql;
        this.form = form;
        this.items = Collections.unmodifiableList(items);
        this.fromCall = fromCall;
        this.fromAlias = fromAlias;
        this.fromColumn = fromColumn;
        this.tailStart = tailStart;
        this.calls = Collections.unmodifiableList(calls);
        this.parameterCount = parameterCount;
        this.outParameter = outParameter;
        this.unsupported = unsupported;
    }

    /** {@code SELECT item, ...} without FROM. */
    static LockShape selectList(String sql, List<Item> items, List<Node.Call> calls, int parameters) {
        return new LockShape(sql, Form.SELECT_LIST, items, null, null, null, -1, calls, parameters, false, null);
    }

    /** {@code SELECT ... FROM call [AS alias [(column)]]}: {@code alias} null when none is written. */
    static LockShape fromCall(String sql, List<Item> items, Node.Call call, String alias, String column,
                              List<Node.Call> calls, int parameters) {
        return new LockShape(sql, Form.FROM_CALL, items, call, alias, column, -1, calls, parameters, false, null);
    }

    /** {@code SELECT call, ... FROM ...}: the rows' part of the text starts at {@code tailStart}. */
    static LockShape rows(String sql, List<Item> items, int tailStart, List<Node.Call> calls, int parameters) {
        return new LockShape(sql, Form.ROWS, items, null, null, null, tailStart, calls, parameters, false, null);
    }

    /** {@code {call f(...)}} or, with {@code outParameter}, {@code {? = call f(...)}}. */
    static LockShape callEscape(String sql, Node.Call call, boolean outParameter, List<Node.Call> calls, int parameters) {
        List<Item> items = Collections.singletonList(new Item(call, "result", true));
        return new LockShape(sql, Form.CALL_ESCAPE, items, call, "result", "result", -1, calls, parameters,
                outParameter, null);
    }

    /** A statement emulate cannot decide exactly, and why. */
    static LockShape unsupported(String sql, String why, List<Node.Call> calls, int parameterCount) {
        return new LockShape(sql, null, Collections.emptyList(), null, null, null, -1, calls, parameterCount, false, why);
    }

    /**
     * This statement, refused for {@code why} by a front end that cannot do what its shape needs (R2DBC: keys or
     * answers only the server could compute), so that the one decision table decides what happens to it.
     */
    public LockShape refusedBecause(String why) {
        return unsupported(sql, why, calls, parameterCount);
    }

    public String sql() {
        return sql;
    }

    public Form form() {
        return form;
    }

    /** Why emulate cannot decide this statement's calls exactly, or null when it can. */
    public String unsupported() {
        return unsupported;
    }

    public boolean isSupported() {
        return unsupported == null;
    }

    public List<Item> items() {
        return items;
    }

    /** FROM_CALL and CALL_ESCAPE: the call the statement is about. */
    public Node.Call fromCall() {
        return fromCall;
    }

    /** Every advisory call, in text order (each call's {@link Node.Call#index()}). */
    public List<Node.Call> calls() {
        return calls;
    }

    /** True when PostgreSQL accepted the text with parameters of these types (see {@link #accept}). */
    public boolean accepted(String parameterTypes) {
        return accepted.contains(parameterTypes);
    }

    /**
     * PostgreSQL accepted the text with parameters of these types: a fact about the text, kept with its shape
     * (a few sets of types; a text bound with ever new types is asked again past that).
     */
    public void accept(String parameterTypes) {
        if (accepted.size() < MAX_ACCEPTED) {
            accepted.add(parameterTypes);
        }
    }

    /** JDBC bind parameters ({@code ?}) in the text, the out parameter of {@code {? = call}} included. */
    public int parameterCount() {
        return parameterCount;
    }

    /** {@code {? = call f(...)}}: parameter 1 is the function's result. */
    public boolean hasOutParameter() {
        return outParameter;
    }

    /** True when some call is session-level. */
    public boolean hasSessionLevelCall() {
        for (Node.Call c : calls) {
            if (c.function.isSessionLevel()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Kill Bill's {@code isFree}: {@code SELECT CASE WHEN pg_try_advisory_lock(k) THEN pg_advisory_unlock(k)
     * [ELSE FALSE] END}, one try and the unlock of the same mode (whether their keys are equal is seen when
     * they are known): the calls, [try, unlock], or null when the statement is something else.
     */
    public Node.Call[] freeProbe() {
        if (form != Form.SELECT_LIST || items.size() != 1 || !(items.get(0).expr instanceof Node.Case)) {
            return null;
        }
        Node.Case c = (Node.Case) items.get(0).expr;
        if (c.conditions.size() != 1 || !(c.conditions.get(0) instanceof Node.Call)
                || !(c.results.get(0) instanceof Node.Call)) {
            return null;
        }
        Node.Call take = (Node.Call) c.conditions.get(0);
        Node.Call release = (Node.Call) c.results.get(0);
        boolean elseFalse = c.otherwise == null || (c.otherwise instanceof Node.Const
                && Boolean.FALSE.equals(((Node.Const) c.otherwise).value));
        boolean matching = take.function.isSessionLevel() && take.function.isTry() && take.function.isAcquire()
                && release.function.isSessionLevel() && release.function.kind() == io.lockhygiene.internal.sql.AdvisoryFunction.Kind.RELEASE
                && take.function.isShared() == release.function.isShared() && take.args.size() == release.args.size();
        return elseFalse && matching ? new Node.Call[] {take, release} : null;
    }

    /**
     * True when the lock table can make the whole answer (every item a call, CASE, NOT/AND/OR or a boolean
     * constant, each of boolean or void type); otherwise the server computes it from the calls' results.
     */
    public boolean answeredLocally() {
        if (form == Form.ROWS || form == Form.CALL_ESCAPE) {
            return true;
        }
        for (Item i : items) {
            if (i.fromColumn) {
                continue;
            }
            Node.Type t = i.expr.type();
            if (t != Node.Type.BOOL && t != Node.Type.VOID) {
                return false;
            }
        }
        return true;
    }

    /**
     * True when PostgreSQL may refuse the statement for reasons the lock table cannot see (a type error,
     * a missing column in text that calls nothing): it is described by the server before any call is decided.
     */
    public boolean needsValidation() {
        if (form == Form.ROWS) {
            return false; // its key query is the statement itself: the server checks it there
        }
        if (form == Form.FROM_CALL && fromCall.type() == Node.Type.ERROR) {
            return true;
        }
        for (Item i : items) {
            if (!i.fromColumn && i.expr.type() != Node.Type.BOOL && i.expr.type() != Node.Type.VOID) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return isSupported() ? form + " " + calls : "unsupported: " + unsupported;
    }
}
