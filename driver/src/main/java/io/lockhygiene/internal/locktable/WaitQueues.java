package io.lockhygiene.internal.locktable;

import java.util.HashMap;
import java.util.Map;

/**
 * Who is queued for which key (an owner waits for one lock at a time), and the wait-for graph read from
 * the table as it is, for deadlocks. The queues themselves are the keys' (see {@link KeyState}). Not
 * thread-safe: {@link LockTable} uses it under its lock.
 */
final class WaitQueues {
    private final Holdings holdings;
    private final Map<LockOwner, AdvisoryKey> queuedOn = new HashMap<>();

    WaitQueues(Holdings holdings) {
        this.holdings = holdings;
    }

    /** Queues a request; false when waiting for {@code blocker} closes a cycle (a deadlock), then nothing is queued. */
    boolean enqueue(LockOwner owner, AdvisoryKey key, boolean shared, LockOwner blocker) {
        if (blocker != null && closesCycle(owner, blocker)) {
            return false;
        }
        holdings.key(key).queue.add(new KeyState.QueuedRequest(owner, shared));
        queuedOn.put(owner, key);
        return true;
    }

    void dequeue(LockOwner owner, AdvisoryKey key) {
        queuedOn.remove(owner, key);
        KeyState k = holdings.keys.get(key);
        if (k != null && k.queue.removeIf(w -> w.owner == owner)) {
            holdings.touched.add(key);
        }
    }

    /** The owner leaves whatever queue it is in. */
    void leave(LockOwner owner) {
        AdvisoryKey key = queuedOn.get(owner);
        if (key != null) {
            dequeue(owner, key);
        }
    }

    /** True when {@code owner} waiting for {@code blocker} closes a cycle of owners waiting for each other. */
    boolean closesCycle(LockOwner owner, LockOwner blocker) {
        LockOwner o = blocker;
        for (int i = 0; o != null && i <= queuedOn.size() + 1; i++) {
            if (o == owner) {
                return true;
            }
            o = waitingFor(o);
        }
        return false;
    }

    /**
     * Whom {@code owner} waits for now, always computed from the table as it is (a remembered edge goes stale
     * the moment its owner lets go, and a stale edge is a deadlock that is not there).
     */
    LockOwner waitingFor(LockOwner owner) {
        AdvisoryKey key = queuedOn.get(owner);
        KeyState k = key == null ? null : holdings.keys.get(key);
        KeyState.QueuedRequest w = k == null ? null : k.queued(owner);
        return w == null ? null : k.blockerInQueue(owner, w.shared);
    }

    void clear() {
        queuedOn.clear();
    }

    @Override
    public String toString() {
        return queuedOn.toString();
    }
}
