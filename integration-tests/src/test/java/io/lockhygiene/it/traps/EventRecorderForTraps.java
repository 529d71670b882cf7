package io.lockhygiene.it.traps;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;

/** Events whose SQL mentions a marker, for one test. */
final class EventRecorderForTraps implements LockHygieneListener, AutoCloseable {
    private final String marker;
    private final List<LockHygieneEvent> events = Collections.synchronizedList(new ArrayList<>());

    EventRecorderForTraps(String marker) {
        this.marker = marker;
        LockHygiene.addListener(this);
    }

    @Override
    public void onEvent(LockHygieneEvent e) {
        if (e.sql() != null && e.sql().contains(marker)) {
            events.add(e);
        }
    }

    long count(EventType type) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == type).count();
        }
    }

    String first(EventType type) {
        synchronized (events) {
            return events.stream().filter(e -> e.type() == type).findFirst().map(LockHygieneEvent::message).orElse("");
        }
    }

    @Override
    public void close() {
        LockHygiene.removeListener(this);
    }
}
