package io.lockhygiene.internal.emulate;

import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.shape.BindView;
import io.lockhygiene.internal.shape.KeyArg;

/**
 * The value of a key argument where the JVM can know it exactly, as PostgreSQL would read it: integer
 * literals, NULL, and bind parameters set with an integer setter (bare, or cast to an integer type), within
 * the ranges PostgreSQL's types and casts allow. Anything else (a string or numeric bind, a bigint bind for
 * one of two int keys, an expression) is the server's to evaluate, and its error is the server's too.
 */
public final class KeyValues {
    private KeyValues() {
    }

    /**
     * The value, or null when only the server can tell.
     *
     * @param pair one of two int keys (PostgreSQL's int4 argument), else the one bigint key
     */
    public static KeyValue resolve(KeyArg arg, boolean pair, BindView binds) {
        switch (arg.kind()) {
            case NULL:
                return KeyValue.NULL;
            case LITERAL:
                return literal(arg.literal(), arg.cast(), pair);
            case PARAMETER:
                return parameter(arg, pair, binds);
            default:
                return null;
        }
    }

    private static KeyValue literal(long value, KeyArg.IntType cast, boolean pair) {
        boolean fitsInt = value >= Integer.MIN_VALUE && value <= Integer.MAX_VALUE;
        if (cast == KeyArg.IntType.INT2 && (value < Short.MIN_VALUE || value > Short.MAX_VALUE)) {
            return null; // smallint out of range: the server's error
        }
        if (cast == KeyArg.IntType.INT4 && !fitsInt) {
            return null;
        }
        if (pair && (cast == KeyArg.IntType.INT8 || (cast == null && !fitsInt))) {
            return null; // a bigint for an int argument: no such function, the server says so
        }
        return KeyValue.of(value);
    }

    private static KeyValue parameter(KeyArg arg, boolean pair, BindView binds) {
        if (binds == null) {
            return null;
        }
        int i = arg.parameter();
        String method = binds.method(i);
        if (method == null) {
            return null; // not set: pgjdbc says so
        }
        Object v = binds.arg(i, 0);
        KeyArg.IntType sent; // the type pgjdbc sends the parameter as
        Long value;
        switch (method) {
            case "setNull":
                return nullOf(binds.arg(i, 0), arg.cast(), pair);
            case "setByte":
            case "setShort":
                sent = KeyArg.IntType.INT2;
                value = ((Number) v).longValue();
                break;
            case "setInt":
                sent = KeyArg.IntType.INT4;
                value = ((Number) v).longValue();
                break;
            case "setLong":
                sent = KeyArg.IntType.INT8;
                value = (Long) v;
                break;
            case "setObject":
                if (binds.arg(i, 1) != null || v == null) {
                    return null; // a target SQL type: pgjdbc converts first; the server decides
                }
                if (v instanceof Long) {
                    sent = KeyArg.IntType.INT8;
                } else if (v instanceof Integer) {
                    sent = KeyArg.IntType.INT4;
                } else if (v instanceof Short || v instanceof Byte) {
                    sent = KeyArg.IntType.INT2;
                } else {
                    return null;
                }
                value = ((Number) v).longValue();
                break;
            default:
                return null;
        }
        KeyArg.IntType target = arg.cast() != null ? arg.cast() : pair ? KeyArg.IntType.INT4 : KeyArg.IntType.INT8;
        if (arg.cast() == null && pair && sent == KeyArg.IntType.INT8) {
            return null; // no implicit bigint to int: function does not exist, the server says so
        }
        if (arg.cast() != null && pair && arg.cast() == KeyArg.IntType.INT8) {
            return null;
        }
        if (target == KeyArg.IntType.INT4 && (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)) {
            return null; // integer out of range: the server's error
        }
        if (target == KeyArg.IntType.INT2 && (value < Short.MIN_VALUE || value > Short.MAX_VALUE)) {
            return null;
        }
        return KeyValue.of(value);
    }

    /** setNull: a NULL PostgreSQL resolves to the advisory function (an integer or unspecified type) is NULL. */
    private static KeyValue nullOf(Object sqlType, KeyArg.IntType cast, boolean pair) {
        if (!(sqlType instanceof Integer)) {
            return null;
        }
        switch ((Integer) sqlType) {
            case java.sql.Types.TINYINT:
            case java.sql.Types.SMALLINT:
            case java.sql.Types.INTEGER:
            case java.sql.Types.NULL:
            case java.sql.Types.OTHER:
                return KeyValue.NULL;
            case java.sql.Types.BIGINT:
                return pair && cast == null ? null : KeyValue.NULL;
            default:
                return null; // a text or numeric NULL: resolving the function is the server's
        }
    }
}
