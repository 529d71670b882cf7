package io.lockhygiene.internal.holder;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.lockhygiene.internal.locktable.AdvisoryKey;

/**
 * One emulated wait, while it lasts: an owner waiting for another owner of the process (in the JVM, where
 * pg_locks cannot see it) or for another process (in PostgreSQL's queue on a connection of the holder's,
 * where it can; or polled through a transaction pooler, where it cannot). Every wait of this JVM is
 * registered here ({@link #snapshot}): the wait monitor, JMX and the meters read them, so that no emulated
 * wait goes unseen.
 */
public final class EmulatedWait {
    /** Where the wait happens. */
    public enum Where {
        /** In the JVM, for another owner of this process. */
        LOCAL,
        /** In PostgreSQL's queue, on a holder connection of its own (pg_locks shows it). */
        SERVER,
        /** Polled through the application's pooler (pg_locks does not show it). */
        POLLED
    }

    private static final Set<EmulatedWait> ACTIVE = ConcurrentHashMap.newKeySet();

    private final String owner;
    private final AdvisoryKey key;
    private final boolean shared;
    private final long sinceMillis = System.currentTimeMillis();
    private final long sinceNanos = System.nanoTime();
    private final Thread thread = Thread.currentThread();
    private volatile Where where;
    private volatile Supplier<String> heldBy;
    private volatile int backendPid;

    private EmulatedWait(String owner, AdvisoryKey key, boolean shared, Where where, Supplier<String> heldBy) {
        this.owner = owner;
        this.key = key;
        this.shared = shared;
        this.where = where;
        this.heldBy = heldBy;
    }

    static EmulatedWait begin(String owner, AdvisoryKey key, boolean shared, Where where, Supplier<String> heldBy) {
        EmulatedWait w = new EmulatedWait(owner, key, shared, where, heldBy);
        ACTIVE.add(w);
        return w;
    }

    /** {@code wait} moved to {@code where}, or begun there when there was none yet. */
    static EmulatedWait track(EmulatedWait wait, String owner, AdvisoryKey key, boolean shared, Where where,
                              Supplier<String> heldBy) {
        if (wait == null) {
            return begin(owner, key, shared, where, heldBy);
        }
        wait.moved(where, heldBy, 0);
        return wait;
    }

    static void end(EmulatedWait w) {
        if (w != null) {
            ACTIVE.remove(w);
        }
    }

    /** The waits of this JVM now, longest first. */
    public static List<EmulatedWait> snapshot() {
        List<EmulatedWait> out = new ArrayList<>(ACTIVE);
        out.sort((a, b) -> Long.compare(b.waitedMillis(), a.waitedMillis()));
        return Collections.unmodifiableList(out);
    }

    public String owner() {
        return owner;
    }

    public AdvisoryKey key() {
        return key;
    }

    public boolean shared() {
        return shared;
    }

    /** Wall-clock start, epoch milliseconds. */
    public long sinceMillis() {
        return sinceMillis;
    }

    public long waitedMillis() {
        return (System.nanoTime() - sinceNanos) / 1_000_000L;
    }

    public Where where() {
        return where;
    }

    /** Who holds the key, as far as this process knows (another owner, or another process). */
    public String heldBy() {
        Supplier<String> h = heldBy;
        return h == null ? "another process" : h.get();
    }

    /** SERVER: the holder connection's backend that waits in PostgreSQL's queue; 0 otherwise. */
    public int backendPid() {
        return backendPid;
    }

    Thread thread() {
        return thread;
    }

    long waitedNanos() {
        return System.nanoTime() - sinceNanos;
    }

    void moved(Where now, Supplier<String> by, int pid) {
        where = now;
        heldBy = by;
        backendPid = pid;
    }
}
