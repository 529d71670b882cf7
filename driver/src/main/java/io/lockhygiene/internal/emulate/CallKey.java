package io.lockhygiene.internal.emulate;

import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.KeyValue;

/**
 * What one advisory call of an execution works on: a key, no key at all ({@code pg_advisory_unlock_all}),
 * or a NULL argument (the call does nothing and answers NULL).
 */
final class CallKey {
    /** pg_advisory_unlock_all takes no key. */
    static final CallKey NONE = new CallKey(null, false);
    /** A NULL argument. */
    static final CallKey NULL = new CallKey(null, true);

    private final AdvisoryKey key;
    private final boolean isNull;

    private CallKey(AdvisoryKey key, boolean isNull) {
        this.key = key;
        this.isNull = isNull;
    }

    /** The key of a call's argument values (one bigint, or two ints), NULL when one of them is. */
    static CallKey of(KeyValue[] values) {
        if (values.length == 0) {
            return NONE;
        }
        for (KeyValue v : values) {
            if (v.isNull()) {
                return NULL;
            }
        }
        return new CallKey(values.length == 1 ? AdvisoryKey.bigint(values[0].value())
                : AdvisoryKey.pair((int) values[0].value(), (int) values[1].value()), false);
    }

    boolean isNull() {
        return isNull;
    }

    /** The key, or null for NONE and NULL. */
    AdvisoryKey key() {
        return key;
    }

    @Override
    public String toString() {
        return isNull ? "NULL" : key == null ? "no key" : key.toString();
    }
}
