package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.lockhygiene.internal.log.EmulateMessages;
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

    /**
     * How long one statement's blocking advisory call may wait, as PostgreSQL bounds it: by
     * {@code lockhygiene.lockTimeout} (55P03, PostgreSQL's lock_timeout), by the statement's query timeout and
     * by {@link #cancel} (57014, as a cancel request). One per execution; {@code Statement.cancel()} of the
     * application reaches it from another thread.
     */
    public static final class Limits {
        private final long lockTimeoutMillis;
        private final long deadlineNanos;
        private final long startNanos = System.nanoTime();
        private volatile boolean cancelled;
        private volatile Runnable onCancel;

        /**
         * @param lockTimeoutMillis 0 for none
         * @param queryTimeoutSeconds the statement's query timeout, 0 for none
         */
        public Limits(long lockTimeoutMillis, int queryTimeoutSeconds) {
            this.lockTimeoutMillis = lockTimeoutMillis;
            this.deadlineNanos = queryTimeoutSeconds > 0 ? startNanos + TimeUnit.SECONDS.toNanos(queryTimeoutSeconds) : 0;
        }

        /** No limit but a cancel. */
        public static Limits none() {
            return new Limits(0, 0);
        }

        public long lockTimeoutMillis() {
            return lockTimeoutMillis;
        }

        /** The application cancels the statement: a wait in progress ends with 57014. */
        public void cancel() {
            cancelled = true;
            Runnable r = onCancel;
            if (r != null) {
                r.run();
            }
        }

        boolean cancelled() {
            return cancelled;
        }

        /** What cancels the wait in progress (a server statement's cancel, a wake-up), or null. */
        void whileWaiting(Runnable cancelAction) {
            onCancel = cancelAction;
            if (cancelAction != null && cancelled) {
                cancelAction.run();
            }
        }

        /** Nanoseconds a wait may last from now (at most {@code cap}); throws when a limit is reached. */
        long remainingNanos(long cap) throws SQLException {
            long now = System.nanoTime();
            long wait = cap;
            if (cancelled || Thread.currentThread().isInterrupted()) {
                throw cancelledException();
            }
            if (lockTimeoutMillis > 0) {
                long left = startNanos + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis) - now;
                if (left <= 0) {
                    throw new SQLException(EmulateMessages.lockTimeout(lockTimeoutMillis), "55P03");
                }
                wait = Math.min(wait, left);
            }
            if (deadlineNanos != 0) {
                long left = deadlineNanos - now;
                if (left <= 0) {
                    throw cancelledException();
                }
                wait = Math.min(wait, left);
            }
            return wait;
        }

        /** The lock timeout left, in milliseconds, for a server's lock_timeout (0: none; at least 1). */
        long lockTimeoutLeftMillis() {
            if (lockTimeoutMillis <= 0) {
                return 0;
            }
            long left = lockTimeoutMillis - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
            return Math.max(1, left);
        }

        /** The query timeout left, in whole seconds rounded up (0: none). */
        int queryTimeoutLeftSeconds() {
            if (deadlineNanos == 0) {
                return 0;
            }
            long left = deadlineNanos - System.nanoTime();
            return (int) Math.max(1, (left + 999_999_999L) / 1_000_000_000L);
        }

        static SQLException cancelledException() {
            return new SQLException(EmulateMessages.CANCELLED, "57014");
        }
    }
}
