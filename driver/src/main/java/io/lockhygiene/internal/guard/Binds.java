package io.lockhygiene.internal.guard;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;

import io.lockhygiene.internal.shape.BindView;

/**
 * The bind values of a prepared statement whose advisory calls emulate decides, as the application set
 * them (setter and arguments), kept so that the lock table can read integer keys itself and the texts sent
 * instead of the statement (key and answer queries) get the same values through the same setters.
 * Recorded by the generated statement leaves, only for such statements.
 */
public final class Binds implements BindView {
    /** Applies one recorded setter to another statement, at another index. */
    @FunctionalInterface
    public interface Setter {
        void applyTo(PreparedStatement target, int index) throws SQLException;
    }

    private String[] methods = new String[4];
    private Object[][] args = new Object[4][];
    private Setter[] setters = new Setter[4];

    /** One setter call: parameter {@code index} (from 1) was set with {@code method(index, args...)}. */
    public void set(int index, String method, Setter setter, Object... arguments) {
        if (index < 1 || index > 65535) {
            return; // pgjdbc refuses it itself
        }
        if (index > methods.length) {
            int n = Math.max(index, methods.length * 2);
            methods = Arrays.copyOf(methods, n);
            args = Arrays.copyOf(args, n);
            setters = Arrays.copyOf(setters, n);
        }
        methods[index - 1] = method;
        args[index - 1] = arguments;
        setters[index - 1] = setter;
    }

    public void clear() {
        Arrays.fill(methods, null);
        Arrays.fill(args, null);
        Arrays.fill(setters, null);
    }

    @Override
    public String method(int index) {
        return index >= 1 && index <= methods.length ? methods[index - 1] : null;
    }

    @Override
    public Object arg(int index, int n) {
        Object[] a = index >= 1 && index <= args.length ? args[index - 1] : null;
        return a == null || n >= a.length ? null : a[n];
    }

    /**
     * Sets {@code target}'s parameter i + 1 to the application's parameter {@code indexes[i]}; one never set
     * stays unset there too, so pgjdbc says what it says about the application's own statement.
     */
    @Override
    public void applyTo(PreparedStatement target, int[] indexes) throws SQLException {
        for (int i = 0; i < indexes.length; i++) {
            int from = indexes[i];
            Setter s = from >= 1 && from <= setters.length ? setters[from - 1] : null;
            if (s != null) {
                s.applyTo(target, i + 1);
            }
        }
    }

    /** Sets each recorded parameter of {@code target} at its own index, with the application's setter. */
    public void applyAllTo(PreparedStatement target) throws SQLException {
        for (int i = 0; i < setters.length; i++) {
            if (setters[i] != null) {
                setters[i].applyTo(target, i + 1);
            }
        }
    }

    /**
     * The values and setters of {@code indexes}, as text: equal signatures give equal key values (for the
     * cache of immutable key expressions). Null when a value cannot be told by its text (a stream, a blob).
     */
    @Override
    public String valueSignature(int[] indexes) {
        StringBuilder b = new StringBuilder();
        for (int index : indexes) {
            String m = method(index);
            if (m == null || m.contains("Stream") || m.contains("Blob") || m.contains("Clob") || m.equals("setRef")
                    || m.equals("setArray") || m.equals("setSQLXML") || m.equals("setRowId")) {
                return null;
            }
            b.append(m).append('(');
            Object[] a = args[index - 1];
            for (int j = 0; a != null && j < a.length; j++) {
                Object v = a[j];
                b.append(j == 0 ? "" : ",").append(v == null ? "null" : v.getClass().getSimpleName() + ":"
                        + (v instanceof byte[] ? Arrays.toString((byte[]) v) : String.valueOf(v)));
            }
            b.append(')');
        }
        return b.toString();
    }

    /** Which setter set each parameter (the types PostgreSQL resolves the statement with), for validation caches. */
    @Override
    public String typeSignature(int count) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= count; i++) {
            String m = method(i);
            b.append(m == null ? "-" : m);
            if ("setNull".equals(m) || ("setObject".equals(m) && arg(i, 1) != null)) {
                b.append(':').append(arg(i, "setNull".equals(m) ? 0 : 1));
            } else if ("setObject".equals(m)) {
                Object v = arg(i, 0);
                b.append(':').append(v == null ? "null" : v.getClass().getName());
            }
            b.append(',');
        }
        return b.toString();
    }

    /** A copy (a batch entry keeps the values it was added with). */
    public Binds copy() {
        Binds c = new Binds();
        c.methods = methods.clone();
        c.args = args.clone();
        c.setters = setters.clone();
        return c;
    }
}
