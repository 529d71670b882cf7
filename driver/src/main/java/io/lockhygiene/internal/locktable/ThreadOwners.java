package io.lockhygiene.internal.locktable;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;

import io.lockhygiene.internal.leak.LeakReporter;

/**
 * The owners of pooled connections, one per thread (a pool lends its connections to any thread, so under
 * emulate the thread is the session): made at a thread's first advisory call, forgotten when the thread
 * ended and its locks were released (the holder's reaping).
 */
public final class ThreadOwners {
    private final Map<Thread, LockOwner> byThread = Collections.synchronizedMap(new WeakHashMap<>());
    /** The calling thread's owner, without the map's lock (the hot path asks it while anything is held). */
    private final ThreadLocal<LockOwner> ofThisThread = new ThreadLocal<>();

    /** The calling thread's owner; the reporter of the connection it uses now. */
    public LockOwner current(LeakReporter reporter) {
        LockOwner o = ofThisThread.get();
        if (o == null || o.isClosed()) {
            o = byThread.computeIfAbsent(Thread.currentThread(), t -> LockOwner.ofThread(t, reporter));
            ofThisThread.set(o);
        }
        if (o.reporter() != reporter) {
            o.usedBy(reporter);
        }
        return o;
    }

    /** A gone thread's owner, its locks released: forgotten. */
    public void forget(LockOwner owner) {
        byThread.values().remove(owner);
    }
}
