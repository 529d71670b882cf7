package io.lockhygiene;

import io.lockhygiene.events.Counters;
import io.lockhygiene.events.Events;
import io.lockhygiene.events.LockHygieneListener;

/**
 * The small Java API: process-wide counters (also over JMX as {@code io.lockhygiene:type=LockHygiene})
 * and event listeners.
 */
public final class LockHygiene {

    private LockHygiene() {
    }

    /** Statements seen, flagged, rewritten, rejected; leaks and inherited locks released; failed checks. */
    public static Counters counters() {
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
