package io.lockhygiene.events;

/** Receives every event. Called on the application's thread: keep it short and do not throw. */
@FunctionalInterface
public interface LockHygieneListener {
    void onEvent(LockHygieneEvent event);
}
