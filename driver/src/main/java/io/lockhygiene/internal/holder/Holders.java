package io.lockhygiene.internal.holder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's lock holders that open connections of their own, one per endpoint identity (a database of a
 * cluster, or a pooler route where that is all that is known): Strings and openers only, nothing of an
 * application's DataSource. A holder that borrows from a DataSource's pool is that DataSource's, not here.
 * Cleared only by tests.
 */
public final class Holders {
    private static final ConcurrentHashMap<Object, Holder> HOLDERS = new ConcurrentHashMap<>();

    private Holders() {
    }

    /** The holder for {@code endpoint}, made on first use (no connection is opened until it is needed). */
    public static Holder of(HolderEndpoint endpoint) {
        return of(endpoint, null);
    }

    /** As {@link #of(HolderEndpoint)}; {@code whenMade} runs once, when this call made the holder (its start-up line). */
    public static Holder of(HolderEndpoint endpoint, Runnable whenMade) {
        Holder existing = HOLDERS.get(endpoint.identity());
        if (existing != null) {
            return existing;
        }
        Holder made = new Holder(endpoint);
        existing = HOLDERS.putIfAbsent(endpoint.identity(), made);
        if (existing != null) {
            return existing;
        }
        if (whenMade != null) {
            whenMade.run();
        }
        return made;
    }

    /** A holder of {@code endpoint} that is nobody else's (a DataSource's own, which goes with it): not kept here. */
    public static Holder own(HolderEndpoint endpoint) {
        return new Holder(endpoint);
    }

    /** How many holders the process has (one per database it holds locks in). */
    public static int count() {
        return HOLDERS.size();
    }

    /** The process's shared holders now (benchmarks read their {@link Holder#stats()}). */
    public static List<Holder> all() {
        return new ArrayList<>(HOLDERS.values());
    }

    /**
     * Shuts every holder down and forgets them (tests start afresh this way, with
     * {@code EndpointResolver.forgetAll()} for the placements above it).
     */
    public static void shutdownAll() {
        List<Holder> all = new ArrayList<>(HOLDERS.values());
        HOLDERS.clear();
        for (Holder h : all) {
            h.shutdown();
        }
    }
}
