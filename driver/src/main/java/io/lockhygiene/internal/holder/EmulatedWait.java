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
     * How long one statement's blocking advisory calls may wait, as PostgreSQL bounds them: by the session's own
     * {@code lock_timeout} (each acquisition; 55P03) and {@code statement_timeout} (the whole statement; 57014),
     * read from the application's session when the first wait begins ({@link SessionBounds}); by
     * {@code lockhygiene.lockTimeout} (55P03, an extra bound a user may add); by the statement's query timeout and
     * by {@link #cancel} (57014, as a cancel request). The bound whose deadline comes first ends the wait, with
     * PostgreSQL's SQLState and words. One per execution, used by the executing thread; {@code Statement.cancel()}
     * of the application reaches it from another thread.
     */
    public static final class Limits {
        private final long lockTimeoutMillis;
        private final long deadlineNanos;
        private final long startNanos = System.nanoTime();
        private final SessionBounds.Source session;
        private SessionBounds bounds;
        private long acquisitionStartNanos = startNanos;
        private volatile boolean cancelled;
        private volatile Runnable onCancel;

        /**
         * @param lockTimeoutMillis lockhygiene.lockTimeout, 0 for none
         * @param queryTimeoutSeconds the statement's query timeout, 0 for none
         * @param session where the session's own bounds are read when a wait begins; null: none
         */
        public Limits(long lockTimeoutMillis, int queryTimeoutSeconds, SessionBounds.Source session) {
            this.lockTimeoutMillis = lockTimeoutMillis;
            this.deadlineNanos = queryTimeoutSeconds > 0 ? startNanos + TimeUnit.SECONDS.toNanos(queryTimeoutSeconds) : 0;
            this.session = session;
        }

        /** No limit but a cancel. */
        public static Limits none() {
            return new Limits(0, 0, null);
        }

        public long lockTimeoutMillis() {
            return lockTimeoutMillis;
        }

        /** A lock acquisition of the statement begins: the session's lock_timeout counts from here. */
        void beginAcquisition() {
            acquisitionStartNanos = System.nanoTime();
        }

        /**
         * A wait begins: the session's bounds are read, once per statement (a round trip on the application's
         * session, only for a statement that waits). The read's own failure is the statement's, as the server's
         * would be.
         */
        void beginWait() throws SQLException {
            if (bounds == null) {
                bounds = session == null ? SessionBounds.NONE : session.read();
            }
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

        private long ourLockDeadline() {
            return lockTimeoutMillis > 0 ? startNanos + TimeUnit.MILLISECONDS.toNanos(lockTimeoutMillis) : 0;
        }

        private long sessionLockDeadline() {
            return bounds != null && bounds.lockTimeoutMillis() > 0
                    ? acquisitionStartNanos + TimeUnit.MILLISECONDS.toNanos(bounds.lockTimeoutMillis()) : 0;
        }

        private long statementDeadline() {
            return bounds != null && bounds.statementTimeoutMillis() > 0
                    ? startNanos + TimeUnit.MILLISECONDS.toNanos(bounds.statementTimeoutMillis()) : 0;
        }

        /** Nanoseconds a wait may last from now (at most {@code cap}); throws when a limit is reached. */
        long remainingNanos(long cap) throws SQLException {
            long now = System.nanoTime();
            if (cancelled || Thread.currentThread().isInterrupted()) {
                throw cancelledException();
            }
            // the bound whose deadline comes first decides, as the first of PostgreSQL's timers to fire would
            long[] deadlines = {sessionLockDeadline(), statementDeadline(), ourLockDeadline(), deadlineNanos};
            int first = -1;
            for (int i = 0; i < deadlines.length; i++) {
                if (deadlines[i] != 0 && (first < 0 || deadlines[i] - deadlines[first] < 0)) {
                    first = i;
                }
            }
            if (first < 0) {
                return cap;
            }
            long left = deadlines[first] - now;
            if (left <= 0) {
                switch (first) {
                    case 0:
                        throw new SQLException(EmulateMessages.LOCK_TIMEOUT, "55P03");
                    case 1:
                        throw new SQLException(EmulateMessages.STATEMENT_TIMEOUT, "57014");
                    case 2:
                        throw new SQLException(EmulateMessages.lockTimeout(lockTimeoutMillis), "55P03");
                    default:
                        throw cancelledException();
                }
            }
            return Math.min(cap, left);
        }

        /**
         * The lock timeout left, in milliseconds, for a server's lock_timeout (0: none; at least 1): the nearer of
         * the session's lock_timeout and lockhygiene.lockTimeout.
         */
        long lockTimeoutLeftMillis() {
            long d = nearer(sessionLockDeadline(), ourLockDeadline());
            return d == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(d - System.nanoTime()));
        }

        /** True when lockhygiene.lockTimeout, not the session's lock_timeout, is the nearer lock bound. */
        boolean ourLockTimeoutFirst() {
            long ours = ourLockDeadline();
            return ours != 0 && nearer(sessionLockDeadline(), ours) == ours;
        }

        /**
         * The statement_timeout left, in milliseconds, for a server's statement_timeout (0: none, or no wait asked
         * for it; at least 1): what the rest of a statement that waited may run.
         */
        public long statementTimeoutLeftMillis() {
            long d = statementDeadline();
            return d == 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(d - System.nanoTime()));
        }

        private static long nearer(long a, long b) {
            return a == 0 ? b : b == 0 ? a : (a - b < 0 ? a : b);
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
