package io.lockhygiene.internal.shape;

import java.util.ArrayList;
import java.util.List;

/**
 * The texts emulate sends instead of a statement whose calls the lock table decides: the key query (the
 * server evaluates key expressions PostgreSQL's way and nothing else) and the answer query (the statement
 * with every call replaced by its decided result, for the server to compute the rest). Each comes with the
 * JDBC indexes of the application's bind parameters it uses, in order. Pure.
 */
public final class ShapeText {
    /** A text to send and the application's parameters it binds (JDBC indexes, in the text's order). */
    public static final class Query {
        private final String sql;
        private final int[] parameters;

        Query(String sql, int[] parameters) {
            this.sql = sql;
            this.parameters = parameters;
        }

        public String sql() {
            return sql;
        }

        /** Parameter i + 1 of this text is the application's parameter {@code parameters()[i]}. */
        public int[] parameters() {
            return parameters.clone();
        }

        @Override
        public String toString() {
            return sql;
        }
    }

    private ShapeText() {
    }

    /**
     * {@code SELECT int8send((k)), int4send((a)), int4send((b)), ...}: the keys of {@code calls}, as the
     * advisory function would read them (int8send and int4send take exactly the advisory functions'
     * argument types, so PostgreSQL resolves and converts the arguments the same way; NULL stays NULL).
     */
    public static Query keyQuery(LockShape shape, List<Node.Call> calls) {
        StringBuilder sql = new StringBuilder("SELECT ");
        List<Integer> params = new ArrayList<>();
        boolean first = true;
        for (Node.Call c : calls) {
            for (KeyArg a : c.args) {
                sql.append(first ? "" : ", ").append(c.args.size() == 1 ? "pg_catalog.int8send((" : "pg_catalog.int4send((")
                        .append(a.textIn(shape.sql)).append("))");
                first = false;
                for (int i = 0; i < a.parameterCount(); i++) {
                    params.add(a.parameterAt(i));
                }
            }
        }
        return new Query(sql.toString(), toArray(params));
    }

    /**
     * ROWS: the statement with each call item replaced by its keys ({@code int8send} / {@code int4send}
     * columns), the rest (FROM, WHERE, row locks) as written: the rows and their keys, in one snapshot.
     */
    public static Query rowsQuery(LockShape shape) {
        StringBuilder sql = new StringBuilder("SELECT ");
        boolean first = true;
        for (LockShape.Item item : shape.items) {
            Node.Call c = (Node.Call) item.expr;
            if (c.args.isEmpty()) {
                sql.append(first ? "" : ", ").append("NULL::bytea");
                first = false;
            }
            for (KeyArg a : c.args) {
                sql.append(first ? "" : ", ").append(c.args.size() == 1 ? "pg_catalog.int8send((" : "pg_catalog.int4send((")
                        .append(a.textIn(shape.sql)).append("))");
                first = false;
            }
        }
        sql.append(' ').append(shape.sql, shape.tailStart, shape.sql.length());
        int[] params = new int[shape.parameterCount];
        for (int i = 0; i < params.length; i++) {
            params[i] = i + 1; // items are calls only: their parameters come first, as in the statement
        }
        return new Query(sql.toString(), params);
    }

    /**
     * The statement with every call replaced by a one-row subquery of its decided result, labelled with the
     * function's name (so the column keeps PostgreSQL's label and type); the FROM's call keeps its table
     * alias and column name. Calls not made (a branch not taken) get a NULL of their type, which the server
     * does not evaluate either.
     */
    public static Query answerQuery(LockShape shape, ShapeEvaluator.Row row) {
        String sql = shape.sql;
        StringBuilder out = new StringBuilder(sql.length() + 32 * shape.calls.size());
        List<Integer> params = new ArrayList<>();
        int at = 0;
        List<int[]> paramPositions = parameterPositions(shape);
        List<Node.Call> inTextOrder = new ArrayList<>(shape.calls);
        inTextOrder.sort((a, b) -> Integer.compare(a.start, b.start));
        for (Node.Call c : inTextOrder) {
            for (int[] p : paramPositions) {
                if (p[0] >= at && p[0] < c.start) {
                    params.add(p[1]);
                }
            }
            out.append(sql, at, c.start);
            Object v = row.called(c.index) ? row.result(c.index) : null;
            boolean fromCall = shape.fromCall == c;
            String label = fromCall ? shape.fromColumn : c.function.sqlName();
            out.append("(SELECT ").append(literal(c, v)).append(" AS ").append(quote(label)).append(')');
            at = c.end;
            if (fromCall && shape.fromAlias == null) {
                out.append(" AS ").append(quote(c.function.sqlName()));
            }
        }
        for (int[] p : paramPositions) {
            if (p[0] >= at) {
                params.add(p[1]);
            }
        }
        out.append(sql, at, sql.length());
        return new Query(out.toString(), toArray(params));
    }

    /** SQL for one call's result: true, false, NULL::boolean, ''::void or NULL::void. */
    static String literal(Node.Call c, Object v) {
        if (c.function.returnsBoolean()) {
            return v == null ? "NULL::boolean" : Boolean.TRUE.equals(v) ? "true" : "false";
        }
        return v == null ? "NULL::void" : "''::void";
    }

    private static String quote(String name) {
        return '"' + name.replace("\"", "\"\"") + '"';
    }

    /** [text position, JDBC index] of each bind parameter of the statement. */
    private static List<int[]> parameterPositions(LockShape shape) {
        SqlTokens t = SqlTokens.of(shape.sql);
        List<int[]> out = new ArrayList<>();
        int index = 0;
        for (int i = 0; i < t.size(); i++) {
            if (t.kind(i) == SqlTokens.PARAM && "?".equals(t.text(i))) {
                out.add(new int[] {t.start(i), ++index});
            }
        }
        return out;
    }

    private static int[] toArray(List<Integer> list) {
        int[] out = new int[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = list.get(i);
        }
        return out;
    }
}
