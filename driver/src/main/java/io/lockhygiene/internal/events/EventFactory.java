package io.lockhygiene.internal.events;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;

/**
 * How LockHygiene makes its events: {@link LockHygieneEvent} has no public constructor (an application
 * cannot forge one) and hands its own to this class when it is initialised.
 */
public final class EventFactory {
    /** The event's constructor. */
    @FunctionalInterface
    public interface Maker {
        LockHygieneEvent make(EventType type, String connectionId, String function, String key, String lockMode,
                              String sql, String message, Throwable takenAt);
    }

    private static volatile Maker maker;

    private EventFactory() {
    }

    /**
     * Called once, by LockHygieneEvent's class initialiser (the JVM runs it once, so no lock is needed); later
     * calls change nothing. A maker made elsewhere could not build an event anyway: the constructor is private.
     */
    public static void install(Maker m) {
        if (maker == null) {
            maker = m;
        }
    }

    /** A new event, now. */
    public static LockHygieneEvent make(EventType type, String connectionId, String function, String key,
                                        String lockMode, String sql, String message, Throwable takenAt) {
        Maker m = maker;
        if (m == null) {
            try {
                Class.forName(LockHygieneEvent.class.getName(), true, LockHygieneEvent.class.getClassLoader());
            } catch (ClassNotFoundException impossible) {
                throw new IllegalStateException(impossible);
            }
            m = maker;
        }
        return m.make(type, connectionId, function, key, lockMode, sql, message, takenAt);
    }
}
