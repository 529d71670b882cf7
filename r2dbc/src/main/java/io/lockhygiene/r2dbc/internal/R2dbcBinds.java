package io.lockhygiene.r2dbc.internal;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import io.r2dbc.spi.Statement;
import io.lockhygiene.internal.shape.BindView;
import io.lockhygiene.internal.sql.NumberedParameters;

/**
 * One binding of an R2DBC statement, kept by LockHygiene: the values by their {@code $n} (bound again on the
 * statement that is sent), which the lock table reads as a JDBC statement's
 * parameters: r2dbc-postgresql sends an Integer as int4, a Long as int8, a Short or Byte as int2, exactly
 * what the core's rules for {@code setObject} say; a NULL bound for one of them is that type's NULL.
 */
final class R2dbcBinds implements BindView {
    private static final Object UNBOUND = new Object();
    private static final Object[] NO_VALUES = {};
    private static final Class<?>[] NO_NULLS = {};

    /**
     * By {@code $n - 1}: the value bound ({@link #UNBOUND} where none is). Arrays, not maps or a list of calls: a
     * statement of an owner under emulate is kept here on its way to the driver (every statement there is), so this
     * is on the hot path; the statement that is sent gets the same binds from them.
     */
    private Object[] values = NO_VALUES;
    /** By {@code $n - 1}: the Java type of a NULL bound there, else null. */
    private Class<?>[] nulls = NO_NULLS;
    /**
     * By {@code $n - 1}: bound by its name ({@code "$2"}), so it is sent by name as the application bound it
     * (r2dbc-proxy's listeners tell names from indexes); null until a name is bound.
     */
    private boolean[] named;
    /** Bind calls the arrays cannot say (a negative index, a name that is not {@code $n}), in order; null until one. */
    private List<Consumer<Statement>> odd;
    private NumberedParameters text;

    void bind(int index, Object value) {
        if (index < 0) {
            odd(s -> s.bind(index, value)); // the driver's own error when it is sent
        } else {
            put(index + 1, value, null, false);
        }
    }

    void bind(String name, Object value) {
        int dollar = dollar(name);
        if (dollar <= 0) {
            odd(s -> s.bind(name, value)); // a name r2dbc-postgresql does not know: its own error when it is sent
        } else {
            put(dollar, value, null, true);
        }
    }

    void bindNull(int index, Class<?> type) {
        if (index < 0) {
            odd(s -> s.bindNull(index, type));
        } else {
            put(index + 1, null, type, false);
        }
    }

    void bindNull(String name, Class<?> type) {
        int dollar = dollar(name);
        if (dollar <= 0) {
            odd(s -> s.bindNull(name, type));
        } else {
            put(dollar, null, type, true);
        }
    }

    private void odd(Consumer<Statement> call) {
        if (odd == null) {
            odd = new ArrayList<>(1);
        }
        odd.add(call);
    }

    private void put(int dollar, Object value, Class<?> nullType, boolean byName) {
        if (dollar > values.length) {
            int was = values.length;
            values = Arrays.copyOf(values, Math.max(dollar, 2 * was));
            Arrays.fill(values, was, values.length, UNBOUND);
        }
        if (byName || (named != null && dollar <= named.length)) {
            if (named == null || dollar > named.length) {
                named = named == null ? new boolean[values.length] : Arrays.copyOf(named, values.length);
            }
            named[dollar - 1] = byName; // the last bind of a $n says how it is sent
        }
        if (nullType != null) {
            if (dollar > nulls.length) {
                nulls = Arrays.copyOf(nulls, values.length);
            }
            values[dollar - 1] = UNBOUND;
            nulls[dollar - 1] = nullType;
        } else {
            if (dollar <= nulls.length) {
                nulls[dollar - 1] = null;
            }
            values[dollar - 1] = value;
        }
    }

    /** A NULL was bound to {@code $dollar}: its Java type; else null. */
    private Class<?> nullType(int dollar) {
        return dollar > 0 && dollar <= nulls.length ? nulls[dollar - 1] : null;
    }

    /** A value (not a NULL of a type) was bound to {@code $dollar}. */
    private boolean hasValue(int dollar) {
        return dollar > 0 && dollar <= values.length && values[dollar - 1] != UNBOUND;
    }

    private Object value(int dollar) {
        return hasValue(dollar) ? values[dollar - 1] : null;
    }

    /** {@code $3} is 3; any other name 0. */
    private static int dollar(String name) {
        if (name != null && name.length() > 1 && name.charAt(0) == '$') {
            try {
                return Integer.parseInt(name.substring(1));
            } catch (NumberFormatException notOurs) {
                return 0;
            }
        }
        return 0;
    }

    boolean isEmpty() {
        return values.length == 0 && odd == null; // every bind with an index or a $n makes values longer
    }

    /**
     * The application's binds on the statement that is sent: each {@code $n} as it was last bound (by index or by
     * name, a value or a NULL of its type), then the calls the arrays cannot say, so the driver gives its own error.
     */
    void applyTo(Statement target) {
        for (int i = 0; i < values.length; i++) {
            boolean byName = named != null && i < named.length && named[i];
            Class<?> nullType = i < nulls.length ? nulls[i] : null;
            if (nullType != null) {
                if (byName) {
                    target.bindNull("$" + (i + 1), nullType);
                } else {
                    target.bindNull(i, nullType);
                }
            } else if (values[i] != UNBOUND) {
                if (byName) {
                    target.bind("$" + (i + 1), values[i]);
                } else {
                    target.bind(i, values[i]);
                }
            }
        }
        if (odd != null) {
            for (Consumer<Statement> c : odd) {
                c.accept(target);
            }
        }
    }

    /**
     * Binds {@code $i+1} of {@code target} (a statement of ours) to the JDBC parameter {@code indexes[i]} as the
     * application bound it (a NULL with its type); one it never bound stays unbound, so the server says what it says
     * of the application's own statement.
     */
    void applyTo(Statement target, int[] indexes) {
        for (int i = 0; i < indexes.length; i++) {
            int dollar = text == null ? 0 : text.dollarOf(indexes[i]);
            if (nullType(dollar) != null) {
                target.bindNull("$" + (i + 1), nullType(dollar));
            } else if (hasValue(dollar)) {
                target.bind("$" + (i + 1), value(dollar));
            }
        }
    }

    /** Read as the parameters of {@code jdbcText} (its {@code ?} in order). */
    R2dbcBinds readAs(NumberedParameters jdbcText) {
        this.text = jdbcText;
        return this;
    }

    @Override
    public String method(int index) {
        int dollar = text == null ? 0 : text.dollarOf(index);
        if (nullType(dollar) != null) {
            return "setNull";
        }
        return hasValue(dollar) ? "setObject" : null;
    }

    @Override
    public Object arg(int index, int n) {
        int dollar = text == null ? 0 : text.dollarOf(index);
        if (nullType(dollar) != null) {
            return n == 0 ? sqlType(nullType(dollar)) : null;
        }
        return n == 0 ? value(dollar) : null; // no target SQL type: the value's own
    }

    /**
     * The values of {@code indexes} with their Java types (which decide the PostgreSQL types r2dbc-postgresql sends),
     * for the holder's cache of keys the server computed; marked as R2DBC's, so never equal to a JDBC setter's. Null
     * when a value cannot be told by its text.
     */
    @Override
    public String valueSignature(int[] indexes) {
        StringBuilder b = new StringBuilder("r2dbc");
        for (int index : indexes) {
            int dollar = text == null ? 0 : text.dollarOf(index);
            if (nullType(dollar) != null) {
                b.append("|null:").append(nullType(dollar).getName());
            } else if (hasValue(dollar)) {
                Object v = value(dollar);
                if (!(v instanceof String || v instanceof Number || v instanceof Boolean || v instanceof Character)) {
                    return null;
                }
                String text = v.toString(); // its length first: two values never read as one
                b.append('|').append(v.getClass().getName()).append(':').append(text.length()).append(':').append(text);
            } else {
                b.append("|-");
            }
        }
        return b.toString();
    }

    @Override
    public String typeSignature(int count) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= count; i++) {
            String m = method(i);
            Object v = arg(i, 0);
            b.append(m == null ? "-" : m).append(':').append(v == null ? "null" : v.getClass().getName()).append(',');
        }
        return b.toString();
    }

    /** Each value as r2dbc-postgresql would send it (its Java type decides the PostgreSQL type). */
    @Override
    public void applyTo(PreparedStatement target, int[] indexes) throws SQLException {
        for (int i = 0; i < indexes.length; i++) {
            String m = method(indexes[i]);
            if ("setNull".equals(m)) {
                target.setNull(i + 1, (Integer) arg(indexes[i], 0));
            } else if (m != null) {
                target.setObject(i + 1, arg(indexes[i], 0));
            }
        }
    }

    /** The SQL type r2dbc-postgresql gives a NULL of this Java type, as far as the lock table cares. */
    private static int sqlType(Class<?> type) {
        if (type == Integer.class) {
            return Types.INTEGER;
        }
        if (type == Long.class) {
            return Types.BIGINT;
        }
        if (type == Short.class) {
            return Types.SMALLINT;
        }
        if (type == Byte.class) {
            return Types.TINYINT;
        }
        return Types.VARCHAR; // a text or other NULL: resolving the function is the server's
    }
}
