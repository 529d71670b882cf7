package io.lockhygiene.internal.holder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The process's lock holders, one per endpoint identity (a database of a cluster, or an application route
 * where that is all that is known). Cleared only by tests.
 */
public final class Holders {
    private static final ConcurrentHashMap<Object, Holder> HOLDERS = new ConcurrentHashMap<>();

    private Holders() {
    }

    /** The holder for {@code endpoint}, made on first use (no connection is opened until it is needed). */
    public static Holder of(HolderEndpoint endpoint) {
        return HOLDERS.computeIfAbsent(endpoint.identity(), i -> new Holder(endpoint));
    }

    /** Shuts every holder down and forgets them and every endpoint placement: a test starts afresh. */
    public static void resetForTests() {
        List<Holder> all = new ArrayList<>(HOLDERS.values());
        HOLDERS.clear();
        for (Holder h : all) {
            h.shutdown();
        }
        EndpointResolver.forgetAll();
    }
}
