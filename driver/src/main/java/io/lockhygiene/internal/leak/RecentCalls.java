package io.lockhygiene.internal.leak;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.lockhygiene.internal.sql.AdvisoryFunction;
import io.lockhygiene.settings.Settings;

/**
 * The lock calls a connection sent since its last leak check, for attribution, bounded: a long-lived
 * connection that never sees a check (the plain driver URL under a pool, direct or session pooling)
 * keeps the most recent {@link #MAX} and counts what it dropped, so a leak found later is attributed to a
 * recent call or reported as inherited with the number of older calls that were no longer kept.
 */
public final class RecentCalls {
    public static final int MAX = 256;

    private final List<LockCall> calls = new ArrayList<>(2);
    private long dropped;

    public void add(LockCall call) {
        calls.add(call);
        if (calls.size() > MAX) {
            int excess = calls.size() - MAX;
            calls.subList(0, excess).clear();
            dropped += excess;
        }
    }

    /** Adds the last {@code n} calls of {@code from}. */
    public void addLast(RecentCalls from, int n) {
        List<LockCall> source = from.calls;
        for (LockCall c : source.subList(Math.max(0, source.size() - n), source.size())) {
            add(c);
        }
    }

    public boolean isEmpty() {
        return calls.isEmpty();
    }

    /** Read-only view, oldest first. */
    public List<LockCall> list() {
        return Collections.unmodifiableList(calls);
    }

    /** Calls dropped since the last clear, oldest first: attribution cannot see them. */
    public long dropped() {
        return dropped;
    }

    public void clear() {
        calls.clear();
        dropped = 0;
    }

    /**
     * The last few texts this connection sent, for a leak report whose lock was taken where no SQL showed it:
     * what we know then is what ran just before. References only (a store per statement, nothing copied or
     * cut until a report asks); one thread at a time, as the connection.
     */
    public static final class RecentStatements {
        public static final int KEPT = 8;
        private final String[] texts = new String[KEPT];
        private int next;

        /** Hot path: one reference store. */
        public void add(String sql) {
            texts[next++ & (KEPT - 1)] = sql;
        }

        /** Oldest first, each cut as {@code logSql} says. */
        public List<String> describe(Settings settings) {
            List<String> out = new ArrayList<>(KEPT);
            for (int k = 0; k < KEPT; k++) {
                String s = texts[(next + k) & (KEPT - 1)];
                if (s != null) {
                    out.add(settings.loggable(s));
                }
            }
            return out;
        }
    }

    /** A session-level lock call this connection sent, kept until the next leak check for attribution. */
    public static final class LockCall {
        private final AdvisoryFunction function;
        private final String sql;
        private final String argumentText;
        private final Throwable takenAt;

        public LockCall(AdvisoryFunction function, String sql, String argumentText, Throwable takenAt) {
            this.function = function;
            this.sql = sql;
            this.argumentText = argumentText;
            this.takenAt = takenAt;
        }

        public AdvisoryFunction function() {
            return function;
        }

        /** The original SQL text (cut only when logged). */
        public String sql() {
            return sql;
        }

        public String argumentText() {
            return argumentText;
        }

        /** Where the application sent it. */
        public Throwable takenAt() {
            return takenAt;
        }

        /** Whether argument text is made only of integer literals (so it can be matched exactly). */
        public static boolean isLiteral(String argumentText) {
            for (String p : argumentText.split(",", -1)) {
                try {
                    Long.parseLong(p.trim());
                } catch (NumberFormatException e) {
                    return false;
                }
            }
            return true;
        }
    }
}
