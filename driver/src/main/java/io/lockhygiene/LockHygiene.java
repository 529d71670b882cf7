package io.lockhygiene;

import io.lockhygiene.events.LockHygieneListener;
import io.lockhygiene.internal.events.Events;
import io.lockhygiene.events.LockHygieneMXBean;

/**
 * The small Java API: process-wide counters (also over JMX as {@code io.lockhygiene:type=LockHygiene})
 * and event listeners.
 */
public final class LockHygiene {

    private LockHygiene() {
    }

    /** Statements seen, flagged, rewritten, rejected; leaks and inherited locks released; failed checks. */
    public static LockHygieneMXBean counters() {
        return Events.counters();
    }

    /** Every event from every connection of this class loader goes to the listener. */
    public static void addListener(LockHygieneListener listener) {
        Events.addListener(listener);
    }

    public static void removeListener(LockHygieneListener listener) {
        Events.removeListener(listener);
    }
}
