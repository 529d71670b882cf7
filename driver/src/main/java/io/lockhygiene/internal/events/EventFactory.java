package io.lockhygiene.internal.events;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;

/**
 * How LockHygiene makes its events: {@link LockHygieneEvent} has no public constructor (an application cannot
 * forge one), and this class reaches its private one through a private lookup, which the JVM grants within
 * our own module (and on the class path) only. The arrow points one way: the public event type knows nothing
 * of this class.
 */
public final class EventFactory {
    private static final MethodHandle CONSTRUCTOR = constructor();

    private EventFactory() {
    }

    private static MethodHandle constructor() {
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(LockHygieneEvent.class, MethodHandles.lookup());
            return lookup.findConstructor(LockHygieneEvent.class, MethodType.methodType(void.class, EventType.class,
                    String.class, String.class, String.class, String.class, String.class, String.class,
                    Throwable.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("LockHygieneEvent's constructor is not reachable: " + e, e);
        }
    }

    /** A new event, now. */
    public static LockHygieneEvent make(EventType type, String connectionId, String function, String key,
                                        String lockMode, String sql, String message, Throwable takenAt) {
        try {
            return (LockHygieneEvent) CONSTRUCTOR.invokeExact(type, connectionId, function, key, lockMode, sql,
                    message, takenAt);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable impossible) {
            throw new IllegalStateException(impossible); // the constructor declares no checked exception
        }
    }
}
