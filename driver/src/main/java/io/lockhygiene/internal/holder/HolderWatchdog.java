package io.lockhygiene.internal.holder;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * Looks after the lock holders while they hold or wait: every {@link #PEEK_MILLIS} each watched holder looks
 * at its idle sessions without a round trip (a terminated backend is seen at once), and once a second it
 * checks its server (a bounded {@code SELECT 1}), its waits in PostgreSQL's queue (deadlocks with other
 * processes, interrupts, sessions the server ended) and its pooled threads that ended. One daemon thread per
 * JVM, alive only while some holder is watched; a holder stops being watched when its round says there is
 * nothing left.
 */
final class HolderWatchdog {
    static final long INTERVAL_MILLIS = 1000;
    /** How often the watched holders look at their idle sessions (a look reads what came; no round trip). */
    static final long PEEK_MILLIS = 10;
    /** How long one check may wait for its answer before the connection counts as lost. */
    static final long PING_TIMEOUT_MILLIS = 5000;
    private static final Set<Watched> WATCHED = ConcurrentHashMap.newKeySet();
    /** Guards starting and stopping the thread; never held while a holder is called. */
    private static final OrderedLock LIFECYCLE = new OrderedLock(LockOrder.WATCHDOG_LIFECYCLE);
    private static ScheduledExecutorService timer;

    /** A holder's round; false when it has nothing left to watch. */
    interface Watched {
        boolean round();

        /**
         * Asked after a round said false and the holder left the watch: true when the holder was used after that
         * round began. Such a use found the holder still watched and so did not add it; without this question
         * it would be left unwatched with a session it opened (a lost wake-up), so it is watched again.
         */
        boolean usedSinceRoundBegan();
    }

    private HolderWatchdog() {
    }

    static void watch(Watched holder) {
        if (!WATCHED.add(holder)) {
            return;
        }
        LIFECYCLE.lock();
        try {
            if (timer == null) {
                ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor(r -> {
                    Thread thread = new Thread(r, "lockhygiene-holder-watchdog");
                    thread.setDaemon(true);
                    return thread;
                });
                t.scheduleWithFixedDelay(HolderWatchdog::round, PEEK_MILLIS, PEEK_MILLIS, TimeUnit.MILLISECONDS);
                timer = t;
            }
        } finally {
            LIFECYCLE.unlock();
        }
    }

    static void forget(Watched holder) {
        WATCHED.remove(holder);
    }

    private static void round() {
        for (Watched h : WATCHED) {
            try {
                if (!h.round()) {
                    WATCHED.remove(h);
                    if (h.usedSinceRoundBegan()) {
                        watch(h);
                    }
                }
            } catch (RuntimeException e) {
                // one holder's trouble must not stop the watch of the others; its round says it (HolderLife)
                io.lockhygiene.internal.log.Log.debug("LockHygiene: a lock holder's watchdog round failed: {}",
                        e.toString());
            }
        }
        if (WATCHED.isEmpty()) {
            LIFECYCLE.lock();
            try {
                if (WATCHED.isEmpty() && timer != null) {
                    timer.shutdown();
                    timer = null;
                }
            } finally {
                LIFECYCLE.unlock();
            }
        }
    }
}
