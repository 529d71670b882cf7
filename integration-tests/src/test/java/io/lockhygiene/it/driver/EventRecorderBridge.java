package io.lockhygiene.it.driver;

import io.lockhygiene.events.EventType;

/** Every event, for tests in other packages. */
public final class EventRecorderBridge implements AutoCloseable {
    private final EventRecorder recorder = EventRecorder.all();

    public long count(EventType type) {
        return recorder.of(type).size();
    }

    public java.util.List<io.lockhygiene.events.LockHygieneEvent> events() {
        java.util.List<io.lockhygiene.events.LockHygieneEvent> all = new java.util.ArrayList<>();
        for (EventType t : EventType.values()) {
            all.addAll(recorder.of(t));
        }
        return all;
    }

    @Override
    public void close() {
        recorder.close();
    }
}
