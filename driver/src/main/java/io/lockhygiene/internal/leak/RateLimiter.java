package io.lockhygiene.internal.leak;

import java.util.concurrent.ConcurrentHashMap;

/** At most one log line per key per interval; bounded, so distinct SQL texts cannot grow it forever. */
public final class RateLimiter {
    private static final int MAX_KEYS = 1024;
    private final long intervalNanos;
    private final ConcurrentHashMap<String, Long> last = new ConcurrentHashMap<>();

    public RateLimiter(long intervalMillis) {
        this.intervalNanos = intervalMillis * 1_000_000L;
    }

    public boolean allow(String key) {
        long now = System.nanoTime();
        Long prev = last.get(key);
        if (prev != null && now - prev < intervalNanos) {
            return false;
        }
        if (last.size() >= MAX_KEYS) {
            last.clear();
        }
        last.put(key, now);
        return true;
    }
}
