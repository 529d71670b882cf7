package io.lockhygiene.internal.leak;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The lock calls a connection sent since its last leak check, for attribution, bounded: a long-lived
 * connection that never sees a check (the plain driver URL under a pool, direct or session pooling)
 * keeps the most recent {@link #MAX} and counts what it dropped, so a leak found later is attributed to a
 * recent call or reported as inherited with the number of older calls that were no longer kept.
 */
public final class RecentCalls {
    public static final int MAX = 256;

    private final List<LockCall> calls = new ArrayList<>(2);
    private long dropped;

    public void add(LockCall call) {
        calls.add(call);
        if (calls.size() > MAX) {
            int excess = calls.size() - MAX;
            calls.subList(0, excess).clear();
            dropped += excess;
        }
    }

    /** Adds the last {@code n} calls of {@code from}. */
    public void addLast(RecentCalls from, int n) {
        List<LockCall> source = from.calls;
        for (LockCall c : source.subList(Math.max(0, source.size() - n), source.size())) {
            add(c);
        }
    }

    public boolean isEmpty() {
        return calls.isEmpty();
    }

    /** Read-only view, oldest first. */
    public List<LockCall> list() {
        return Collections.unmodifiableList(calls);
    }

    /** Calls dropped since the last clear, oldest first: attribution cannot see them. */
    public long dropped() {
        return dropped;
    }

    public void clear() {
        calls.clear();
        dropped = 0;
    }
}
