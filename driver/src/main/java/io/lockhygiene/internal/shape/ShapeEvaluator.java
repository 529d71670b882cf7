package io.lockhygiene.internal.shape;

import java.sql.SQLException;
import java.util.List;

/**
 * Walks a {@link LockShape} in PostgreSQL's evaluation order and asks for each call that PostgreSQL would
 * make: the FROM's call before the select list, select-list items left to right, a call's keys before the
 * call, CASE conditions in order until one is true, AND / OR left to right until the answer is known, and
 * PostgreSQL's constant folding first (an AND with a constant FALSE, a CASE branch after a constant TRUE,
 * call nothing). Pure: the {@link Decider} does the work.
 */
public final class ShapeEvaluator {
    /** The value of a void function's result (pg_advisory_lock and friends). */
    public static final Object VOID = new Object() {
        @Override
        public String toString() {
            return "void";
        }
    };
    /** A value only the server computes (opaque text, a cast): the lock table needs none of them. */
    static final Object UNKNOWN = new Object() {
        @Override
        public String toString() {
            return "unknown";
        }
    };

    /** Decides one call PostgreSQL makes: TRUE, FALSE, null (SQL NULL: a NULL key) or {@link #VOID}. */
    @FunctionalInterface
    public interface Decider {
        Object decide(Node.Call call) throws SQLException;
    }

    /** One evaluation of a shape (one row): each call's result (in call order) and each item's value. */
    public static final class Row {
        private final Object[] calls;
        private final boolean[] called;
        private final Object[] items;

        Row(int calls, int items) {
            this.calls = new Object[calls];
            this.called = new boolean[calls];
            this.items = new Object[items];
        }

        /** True when PostgreSQL called the call with this index. */
        public boolean called(int callIndex) {
            return called[callIndex];
        }

        /** The call's result: TRUE, FALSE, null or {@link #VOID}; null also when not called. */
        public Object result(int callIndex) {
            return calls[callIndex];
        }

        /** The item's value, for answers made locally: TRUE, FALSE, null or {@link #VOID}. */
        public Object item(int itemIndex) {
            return items[itemIndex];
        }
    }

    private final Decider decider;
    private final Row row;

    private ShapeEvaluator(LockShape shape, Decider decider) {
        this.decider = decider;
        this.row = new Row(shape.calls.size(), shape.items.size());
    }

    /** Evaluates the shape once: every call PostgreSQL would make is decided, in its order. */
    public static Row evaluate(LockShape shape, Decider decider) throws SQLException {
        ShapeEvaluator e = new ShapeEvaluator(shape, decider);
        Object fromValue = shape.fromCall != null ? e.eval(shape.fromCall) : null;
        List<LockShape.Item> items = shape.items;
        for (int i = 0; i < items.size(); i++) {
            LockShape.Item item = items.get(i);
            e.row.items[i] = item.fromColumn ? fromValue : e.eval(item.expr);
        }
        return e.row;
    }

    private Object eval(Node n) throws SQLException {
        if (n instanceof Node.Call) {
            Node.Call c = (Node.Call) n;
            if (row.called[c.index]) {
                return row.calls[c.index]; // the FROM's call, answered once
            }
            Object v = decider.decide(c);
            row.calls[c.index] = v;
            row.called[c.index] = true;
            return v;
        }
        if (n instanceof Node.Const) {
            return ((Node.Const) n).value;
        }
        if (n instanceof Node.Bool) {
            return bool((Node.Bool) n);
        }
        if (n instanceof Node.Case) {
            return caseValue((Node.Case) n);
        }
        if (n instanceof Node.Cast) {
            eval(((Node.Cast) n).inner);
            return UNKNOWN;
        }
        return UNKNOWN;
    }

    private Object bool(Node.Bool b) throws SQLException {
        Object folded = constant(b);
        if (folded != UNKNOWN) {
            return folded;
        }
        if (b.op == Node.Bool.Op.NOT) {
            Object v = eval(b.args.get(0));
            return v instanceof Boolean ? Boolean.valueOf(!(Boolean) v) : v;
        }
        boolean and = b.op == Node.Bool.Op.AND;
        boolean sawNull = false;
        for (Node a : b.args) {
            Object c = constant(a);
            Object v = c != UNKNOWN ? c : eval(a); // constants were folded away: nothing to call
            if (v == null) {
                sawNull = true;
            } else if (v instanceof Boolean && (Boolean) v != and) {
                return !and; // FALSE ends an AND, TRUE an OR
            }
        }
        return sawNull ? null : and;
    }

    private Object caseValue(Node.Case c) throws SQLException {
        for (int i = 0; i < c.conditions.size(); i++) {
            Node cond = c.conditions.get(i);
            Object k = constant(cond);
            Object v = k != UNKNOWN ? k : eval(cond);
            if (Boolean.TRUE.equals(v)) {
                return eval(c.results.get(i));
            }
        }
        return c.otherwise == null ? null : eval(c.otherwise);
    }

    /**
     * The value PostgreSQL's planner folds {@code n} to before running anything (its
     * eval_const_expressions: constants, NOT of a constant, AND with a FALSE, OR with a TRUE, a CASE whose
     * conditions fold), or UNKNOWN when it must be evaluated.
     */
    static Object constant(Node n) {
        if (n instanceof Node.Const) {
            return ((Node.Const) n).value;
        }
        if (n instanceof Node.Bool) {
            Node.Bool b = (Node.Bool) n;
            if (b.op == Node.Bool.Op.NOT) {
                Object v = constant(b.args.get(0));
                return v == UNKNOWN || v == null ? v : Boolean.valueOf(!(Boolean) v);
            }
            boolean and = b.op == Node.Bool.Op.AND;
            boolean allConstant = true;
            boolean sawNull = false;
            for (Node a : b.args) {
                Object v = constant(a);
                if (v == UNKNOWN) {
                    allConstant = false;
                } else if (v == null) {
                    sawNull = true;
                } else if ((Boolean) v != and) {
                    return !and; // one FALSE folds an AND (one TRUE an OR), whatever the rest would call
                }
            }
            if (!allConstant) {
                return UNKNOWN;
            }
            return sawNull ? null : and;
        }
        if (n instanceof Node.Case) {
            Node.Case c = (Node.Case) n;
            for (int i = 0; i < c.conditions.size(); i++) {
                Object v = constant(c.conditions.get(i));
                if (v == UNKNOWN) {
                    return UNKNOWN;
                }
                if (Boolean.TRUE.equals(v)) {
                    return constant(c.results.get(i));
                }
            }
            return c.otherwise == null ? null : constant(c.otherwise);
        }
        return UNKNOWN;
    }
}
