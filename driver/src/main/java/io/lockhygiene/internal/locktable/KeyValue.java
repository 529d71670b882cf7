package io.lockhygiene.internal.locktable;

/**
 * The value of one argument of an advisory call, as PostgreSQL takes it: an integer, or SQL NULL (the
 * functions are strict: a NULL argument calls nothing and the call's answer is NULL). Where only the
 * server can tell a value, there is no KeyValue (callers use null for "not known here").
 */
public final class KeyValue {
    /** SQL NULL. */
    public static final KeyValue NULL = new KeyValue(0, true);

    private final long value;
    private final boolean isNull;

    private KeyValue(long value, boolean isNull) {
        this.value = value;
        this.isNull = isNull;
    }

    public static KeyValue of(long value) {
        return new KeyValue(value, false);
    }

    public boolean isNull() {
        return isNull;
    }

    /** The integer; 0 for NULL (ask {@link #isNull} first). */
    public long value() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KeyValue && ((KeyValue) o).isNull == isNull && ((KeyValue) o).value == value;
    }

    @Override
    public int hashCode() {
        return isNull ? -1 : Long.hashCode(value);
    }

    @Override
    public String toString() {
        return isNull ? "NULL" : Long.toString(value);
    }
}
