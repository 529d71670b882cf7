package io.lockhygiene.internal.leak;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockhygiene.internal.log.Log;

/**
 * Keeps a leak storm readable: the first report of each kind per call site is logged at ERROR with its
 * stack (HikariCP's leak report); repeats are counted and logged as one line per call site per interval,
 * with the count and a few keys, and what is still pending at JVM exit is logged then. Events, counters,
 * JMX, listeners and the report file still see every single one: only the log is summarised.
 */
public final class ReportLog {
    static final long INTERVAL_NANOS = 60_000_000_000L;
    private static final int MAX_SITES = 1024;
    private static final int KEYS_SHOWN = 5;
    private static final Map<String, Site> SITES = new ConcurrentHashMap<>();
    private static final AtomicBoolean EXIT_HOOK = new AtomicBoolean();

    /** One call site's repeats since its last log line. */
    private static final class Site {
        final String what;
        final boolean error;
        long lastLine = System.nanoTime();
        long repeats;
        final Set<String> keys = new LinkedHashSet<>();

        Site(String what, boolean error) {
            this.what = what;
            this.error = error;
        }

        void write(String line) {
            logFull(error, "{}", line);
        }

        /** The summary line for the repeats so far, or null when there are none. */
        synchronized String takeSummary() {
            if (repeats == 0) {
                return null;
            }
            String line = "LockHygiene: " + repeats + " more " + what + " (keys " + String.join(", ", keys)
                    + (repeats > keys.size() ? ", ..." : "") + "); the first report, with its stack, is above";
            repeats = 0;
            keys.clear();
            lastLine = System.nanoTime();
            return line;
        }

        synchronized boolean repeat(String key) {
            repeats++;
            if (keys.size() < KEYS_SHOWN && key != null) {
                keys.add(key);
            }
            return System.nanoTime() - lastLine >= INTERVAL_NANOS;
        }
    }

    private ReportLog() {
    }

    /**
     * @param site where it happened (a call site, and what kind of report)
     * @param what what a repeat is, for the summary line ("leaked locks released at X")
     */
    public static void error(String site, String what, String key, String format, Object... args) {
        log(true, site, what, key, format, args);
    }

    /** The same at WARN. */
    public static void warn(String site, String what, String key, String format, Object... args) {
        log(false, site, what, key, format, args);
    }

    private static void log(boolean error, String site, String what, String key, String format, Object... args) {
        Site known = SITES.get(site);
        if (known == null && SITES.size() < MAX_SITES) {
            Site fresh = new Site(what, error);
            known = SITES.putIfAbsent(site, fresh);
            if (known == null) {
                logFull(error, format, args); // the first one, in full
                installExitHook();
                return;
            }
        }
        if (known == null) {
            logFull(error, format, args); // more call sites than we keep: unsummarised
            return;
        }
        if (known.repeat(key)) {
            String summary = known.takeSummary();
            if (summary != null) {
                known.write(summary);
            }
        }
    }

    private static void logFull(boolean error, String format, Object... args) {
        if (error) {
            Log.error(format, args);
        } else {
            Log.warn(format, args);
        }
    }

    private static void installExitHook() {
        if (EXIT_HOOK.compareAndSet(false, true)) {
            try {
                Runtime.getRuntime().addShutdownHook(new Thread(ReportLog::flush, "lockhygiene-report-log-flush"));
            } catch (IllegalStateException shuttingDown) {
                // too late to summarise at exit; the counts are in the events and counters
            }
        }
    }

    /** Logs what is pending, one line per call site. */
    public static void flush() {
        for (Site s : SITES.values()) {
            String summary = s.takeSummary();
            if (summary != null) {
                s.write(summary);
            }
        }
    }
}
