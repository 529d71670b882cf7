package io.lockhygiene.internal.holder;

import java.util.LinkedHashMap;
import java.util.Map;

import io.lockhygiene.internal.locktable.AdvisoryKey.KeyValue;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * Values of key expressions made only of immutable parts ({@code hashtext('report-daily')},
 * {@code hashtext(?)} with its bind value), as the server computed them, per database: asked once, then
 * known. Bounded (least recently used go first).
 */
public final class KeyCache {
    static final int MAX_ENTRIES = 10_000;
    private final OrderedLock lock = new OrderedLock(LockOrder.KEY_CACHE);
    private final Map<String, KeyValue> values = new LinkedHashMap<String, KeyValue>(64, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, KeyValue> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    /** The cached value, or null when unknown. */
    public KeyValue get(String key) {
        lock.lock();
        try {
            return values.get(key); // an access-ordered map: a get moves the entry, so it needs the lock too
        } finally {
            lock.unlock();
        }
    }

    public void put(String key, KeyValue value) {
        lock.lock();
        try {
            values.put(key, value);
        } finally {
            lock.unlock();
        }
    }
}
