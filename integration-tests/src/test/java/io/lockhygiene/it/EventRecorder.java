package io.lockhygiene.it;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;

/** Collects the events of one test (filtered, so other tests' connections do not bleed in). */
public final class EventRecorder implements LockHygieneListener, AutoCloseable {
    private final List<LockHygieneEvent> events = Collections.synchronizedList(new ArrayList<>());
    private final Predicate<LockHygieneEvent> filter;

    private EventRecorder(Predicate<LockHygieneEvent> filter) {
        this.filter = filter;
        LockHygiene.addListener(this);
    }

    /** Events whose key, SQL or message mention {@code marker} (a test's own lock key). */
    public static EventRecorder mentioning(String marker) {
        return new EventRecorder(e -> contains(e.key(), marker) || contains(e.sql(), marker) || contains(e.message(), marker));
    }

    public static EventRecorder all() {
        return new EventRecorder(e -> true);
    }

    private static boolean contains(String s, String marker) {
        return s != null && s.contains(marker);
    }

    @Override
    public void onEvent(LockHygieneEvent event) {
        if (filter.test(event)) {
            events.add(event);
        }
    }

    public List<LockHygieneEvent> of(EventType type) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == type).collect(Collectors.toList());
        }
    }

    public List<EventType> types() {
        synchronized (events) {
            return events.stream().map(LockHygieneEvent::type).collect(Collectors.toList());
        }
    }

    /** Every recorded event, in order. */
    public List<LockHygieneEvent> events() {
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }

    @Override
    public void close() {
        LockHygiene.removeListener(this);
    }
}
