package io.lockhygiene.internal.shape;

import java.util.Collections;
import java.util.List;

import io.lockhygiene.internal.sql.AdvisoryFunction;

/**
 * One part of a select-list expression that contains advisory calls, as far as emulate must understand
 * it to call them in PostgreSQL's order: the calls themselves, CASE, NOT / AND / OR, boolean constants and
 * casts; everything else is {@link Opaque} text that calls nothing, which the server evaluates.
 */
public abstract class Node {
    /** What an expression yields, as far as the lock table can know it. */
    public enum Type { BOOL, VOID, UNKNOWN, OTHER, ERROR }

    final int start;
    final int end;

    Node(int start, int end) {
        this.start = start;
        this.end = end;
    }

    /** Where the expression starts in the statement's text. */
    public int start() {
        return start;
    }

    /** Where it ends (exclusive). */
    public int end() {
        return end;
    }

    abstract boolean containsCall();

    /** Its type, or OTHER when only the server can tell (a cast, opaque text), ERROR when PostgreSQL refuses it. */
    public abstract Type type();

    /** The column name PostgreSQL gives it as a select-list item without alias (its FigureColname), with strength. */
    abstract String columnName();

    /** PostgreSQL's FigureColname strength: 2 for a function's name, 1 for "case", 0 for none. */
    abstract int nameStrength();

    /** One advisory function call. */
    public static final class Call extends Node {
        final AdvisoryFunction function;
        final List<KeyArg> args;
        /** Its place among the statement's calls, in text order. */
        final int index;

        Call(int start, int end, AdvisoryFunction function, List<KeyArg> args, int index) {
            super(start, end);
            this.function = function;
            this.args = Collections.unmodifiableList(args);
            this.index = index;
        }

        public AdvisoryFunction function() {
            return function;
        }

        /** 0 (unlock_all), 1 (a bigint key) or 2 (two int keys). */
        public List<KeyArg> args() {
            return args;
        }

        public int index() {
            return index;
        }

        @Override
        boolean containsCall() {
            return true;
        }

        @Override
        public Type type() {
            int expected = function.takesKey() ? args.size() == 1 || args.size() == 2 ? args.size() : -1 : 0;
            if (expected != args.size()) {
                return Type.ERROR; // no such function: PostgreSQL says so
            }
            return function.returnsBoolean() ? Type.BOOL : Type.VOID;
        }

        @Override
        String columnName() {
            return function.sqlName();
        }

        @Override
        int nameStrength() {
            return 2;
        }

        @Override
        public String toString() {
            return function.sqlName() + args;
        }
    }

    /** A searched CASE: {@code CASE WHEN c THEN r ... [ELSE e] END}. */
    public static final class Case extends Node {
        final List<Node> conditions;
        final List<Node> results;
        /** Null without ELSE (the result is NULL then). */
        final Node otherwise;

        Case(int start, int end, List<Node> conditions, List<Node> results, Node otherwise) {
            super(start, end);
            this.conditions = conditions;
            this.results = results;
            this.otherwise = otherwise;
        }

        @Override
        boolean containsCall() {
            for (Node n : conditions) {
                if (n.containsCall()) {
                    return true;
                }
            }
            for (Node n : results) {
                if (n.containsCall()) {
                    return true;
                }
            }
            return otherwise != null && otherwise.containsCall();
        }

        @Override
        public Type type() {
            for (Node c : conditions) {
                Type t = c.type();
                if (t == Type.ERROR || t == Type.VOID) {
                    return Type.ERROR;
                }
                if (t == Type.OTHER) {
                    return Type.OTHER;
                }
            }
            Type result = Type.UNKNOWN;
            for (int i = 0; i <= results.size(); i++) {
                Node r = i < results.size() ? results.get(i) : otherwise;
                if (r == null) {
                    continue;
                }
                Type t = r.type();
                if (t == Type.ERROR || t == Type.OTHER) {
                    return t;
                }
                if (t == Type.UNKNOWN) {
                    continue;
                }
                if (result != Type.UNKNOWN && result != t) {
                    return Type.ERROR; // CASE types boolean and void cannot be matched
                }
                result = t;
            }
            return result == Type.UNKNOWN ? Type.OTHER : result; // all NULL: text, the server's to say
        }

        @Override
        String columnName() {
            return otherwise != null && otherwise.nameStrength() == 2 ? otherwise.columnName() : "case";
        }

        @Override
        int nameStrength() {
            return otherwise != null && otherwise.nameStrength() == 2 ? 2 : 1;
        }
    }

    /** NOT, AND, OR. */
    public static final class Bool extends Node {
        public enum Op { NOT, AND, OR }

        final Op op;
        final List<Node> args;

        Bool(int start, int end, Op op, List<Node> args) {
            super(start, end);
            this.op = op;
            this.args = args;
        }

        @Override
        boolean containsCall() {
            for (Node n : args) {
                if (n.containsCall()) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public Type type() {
            for (Node n : args) {
                Type t = n.type();
                if (t == Type.ERROR || t == Type.VOID) {
                    return Type.ERROR;
                }
                if (t == Type.OTHER) {
                    return Type.OTHER;
                }
            }
            return Type.BOOL;
        }

        @Override
        String columnName() {
            return "?column?";
        }

        @Override
        int nameStrength() {
            return 0;
        }
    }

    /** TRUE, FALSE or NULL. */
    public static final class Const extends Node {
        /** Null for NULL. */
        final Boolean value;

        Const(int start, int end, Boolean value) {
            super(start, end);
            this.value = value;
        }

        @Override
        boolean containsCall() {
            return false;
        }

        @Override
        public Type type() {
            return value == null ? Type.UNKNOWN : Type.BOOL;
        }

        @Override
        String columnName() {
            return "?column?";
        }

        @Override
        int nameStrength() {
            return 0;
        }
    }

    /** {@code x::type} or {@code CAST(x AS type)}: the server converts the call's result. */
    public static final class Cast extends Node {
        final Node inner;

        Cast(int start, int end, Node inner) {
            super(start, end);
            this.inner = inner;
        }

        @Override
        boolean containsCall() {
            return inner.containsCall();
        }

        @Override
        public Type type() {
            return inner.type() == Type.ERROR ? Type.ERROR : Type.OTHER;
        }

        @Override
        String columnName() {
            return inner.columnName();
        }

        @Override
        int nameStrength() {
            return inner.nameStrength() == 2 ? 2 : 1;
        }
    }

    /** Text that calls no advisory function: the server evaluates it. */
    public static final class Opaque extends Node {
        Opaque(int start, int end) {
            super(start, end);
        }

        @Override
        boolean containsCall() {
            return false;
        }

        @Override
        public Type type() {
            return Type.OTHER;
        }

        @Override
        String columnName() {
            return "?column?";
        }

        @Override
        int nameStrength() {
            return 0;
        }
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
}
