package io.lockhygiene.internal.holder;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Values of key expressions made only of immutable parts ({@code hashtext('report-daily')},
 * {@code hashtext(?)} with its bind value), as the server computed them, per database: asked once, then
 * known. Bounded (least recently used go first).
 */
public final class KeyCache {
    static final int MAX_ENTRIES = 10_000;
    /** The value of an expression that is NULL. */
    public static final Object NULL = new Object();

    private final Map<String, Object> values = new LinkedHashMap<String, Object>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Object> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    /** The cached value (a Long, or {@link #NULL}), or null when unknown. */
    public Object get(String key) {
        synchronized (values) {
            return values.get(key);
        }
    }

    public void put(String key, Object value) {
        synchronized (values) {
            values.put(key, value);
        }
    }
}
