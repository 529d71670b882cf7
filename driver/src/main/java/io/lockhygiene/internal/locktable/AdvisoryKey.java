package io.lockhygiene.internal.locktable;

/**
 * An advisory lock key as PostgreSQL tells keys apart: the one-bigint space ({@code pg_advisory_lock(k)})
 * and the two-int space ({@code pg_advisory_lock(a, b)}) never meet, even for equal numbers.
 */
public final class AdvisoryKey {
    private final boolean pair;
    private final long value;

    private AdvisoryKey(boolean pair, long value) {
        this.pair = pair;
        this.value = value;
    }

    public static AdvisoryKey bigint(long key) {
        return new AdvisoryKey(false, key);
    }

    public static AdvisoryKey pair(int first, int second) {
        return new AdvisoryKey(true, ((long) first << 32) | (second & 0xFFFFFFFFL));
    }

    private int first() {
        return (int) (value >> 32);
    }

    private int second() {
        return (int) value;
    }

    /** Which of {@code n} places this key goes to: stable, and spread for consecutive keys. */
    public int spread(int n) {
        long h = value ^ (pair ? 0x5DEECE66DL : 0); // MurmurHash3's finalizer: every bit of the key counts
        h = (h ^ (h >>> 33)) * 0xff51afd7ed558ccdL;
        h = (h ^ (h >>> 33)) * 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return (int) ((h >>> 1) % n);
    }

    /** The arguments of a function call on this key, as SQL literals. */
    public String sqlArguments() {
        return pair ? first() + ", " + second() : Long.toString(value);
    }

    /** pg_locks' classid, objid, objsubid for this key. */
    public long classid() {
        return pair ? first() & 0xFFFFFFFFL : (value >>> 32);
    }

    public long objid() {
        return pair ? second() & 0xFFFFFFFFL : (value & 0xFFFFFFFFL);
    }

    public int objsubid() {
        return pair ? 2 : 1;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AdvisoryKey && ((AdvisoryKey) o).pair == pair && ((AdvisoryKey) o).value == value;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(value) * 31 + (pair ? 1 : 0);
    }

    @Override
    public String toString() {
        return sqlArguments();
    }

    /**
     * The value of one argument of an advisory call, as PostgreSQL takes it: an integer, or SQL NULL (the
     * functions are strict: a NULL argument calls nothing and the call's answer is NULL). Where only the
     * server can tell a value, there is no KeyValue (callers use null for "not known here").
     */
    public static final class KeyValue {
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
}
