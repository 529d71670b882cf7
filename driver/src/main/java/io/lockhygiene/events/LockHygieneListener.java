package io.lockhygiene.events;

/**
 * Receives every event, synchronously, on the thread that noticed it: the application's own thread for what
 * its statements, commits and returns do; for a lock holder's loss ({@code LOCK_LOST}) the thread that found
 * it, which may be the holder's watchdog ({@code lockhygiene-holder-watchdog}) and never holds a lock of
 * ours then. Keep it short (a slow listener delays that thread) and do not throw (an exception is logged
 * and dropped).
 */
@FunctionalInterface
public interface LockHygieneListener {
    void onEvent(LockHygieneEvent event);
}
