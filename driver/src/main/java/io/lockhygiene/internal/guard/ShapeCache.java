package io.lockhygiene.internal.guard;

import java.util.concurrent.ConcurrentHashMap;

import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;

/** Shapes of texts with advisory calls under emulate, shared by all connections; bounded like {@link ScanCache}. */
final class ShapeCache {
    static final int MAX_ENTRIES = 2048;
    private static final ConcurrentHashMap<String, LockShape> CACHE = new ConcurrentHashMap<>();

    private ShapeCache() {
    }

    static LockShape shape(String sql) {
        LockShape s = CACHE.get(sql);
        if (s == null) {
            s = ShapeParser.parse(sql);
            if (CACHE.size() >= MAX_ENTRIES) {
                CACHE.clear();
            }
            CACHE.put(sql, s);
        }
        return s;
    }
}
