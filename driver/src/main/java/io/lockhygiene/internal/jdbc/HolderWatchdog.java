package io.lockhygiene.internal.jdbc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Notices a lock holder whose server connection is gone while it holds locks, even when its owner sends
 * nothing: once a second it asks each holding holder, with one simple-protocol {@code SELECT 1} on its own
 * connection, whether it is still there. One daemon thread per JVM, alive only while some holder holds
 * locks; holders are watched only while they hold something.
 */
final class HolderWatchdog {
    static final long INTERVAL_MILLIS = 1000;
    /** How long one check may wait for its answer before the connection counts as lost. */
    static final long PING_TIMEOUT_MILLIS = 5000;
    private static final Set<Watched> WATCHED = ConcurrentHashMap.newKeySet();
    private static volatile ScheduledExecutorService timer;

    /** A holder to check: it asks its own server, bounded by {@link #PING_TIMEOUT_MILLIS}. */
    @FunctionalInterface
    interface Watched {
        void checkAlive();
    }

    private HolderWatchdog() {
    }

    /**
     * One simple-protocol {@code SELECT 1} on a holder's connection, bounded by {@link #PING_TIMEOUT_MILLIS}:
     * a blackholed network must not hang the watchdog (nor the owners waiting for the holder).
     */
    static void ping(java.sql.Connection c) throws java.sql.SQLException {
        int before = c.getNetworkTimeout();
        c.setNetworkTimeout(Runnable::run, (int) PING_TIMEOUT_MILLIS);
        try {
            Pgjdbc.executeSimple(c, "SELECT 1");
        } finally {
            if (!c.isClosed()) {
                c.setNetworkTimeout(Runnable::run, before);
            }
        }
    }

    static synchronized void watch(Watched holder) {
        if (WATCHED.add(holder) && timer == null) {
            start();
        }
    }

    /**
     * Stops watching. The thread ends at its next round with nothing left to watch (it starts again when
     * needed): a holder that pins and lets go of its server at every lock must not start a thread each time.
     */
    static void forget(Watched holder) {
        WATCHED.remove(holder);
    }

    private static synchronized void stopIfIdle() {
        if (WATCHED.isEmpty() && timer != null) {
            timer.shutdown();
            timer = null;
        }
    }

    private static void start() {
        ScheduledExecutorService t = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "lockhygiene-holder-watchdog");
            thread.setDaemon(true);
            return thread;
        });
        t.scheduleWithFixedDelay(HolderWatchdog::round, INTERVAL_MILLIS, INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
        timer = t;
    }

    private static void round() {
        if (WATCHED.isEmpty()) {
            stopIfIdle();
            return;
        }
        for (Watched h : WATCHED) {
            try {
                h.checkAlive();
            } catch (RuntimeException e) {
                // one holder's trouble must not stop the watch of the others
            }
        }
    }
}
