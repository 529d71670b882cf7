package io.lockhygiene.internal.leak;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.sql.AdvisoryFunction;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * The lock calls a connection sent since its last leak check, for attribution, bounded: a long-lived
 * connection that never sees a check (the plain driver URL under a pool, direct or session pooling)
 * keeps the most recent {@link #MAX} and counts what it dropped, so a leak found later is attributed to a
 * recent call or reported as inherited with the number of older calls that were no longer kept.
 */
public final class RecentCalls {
    public static final int MAX = 256;

    /**
     * The calls and the dropped count. A connection's own thread adds; a {@code close()} or {@code abort()} on
     * another thread may clear them at the same moment (FaultsTest races the two on purpose), so both sides
     * take this leaf lock; it is taken only for advisory calls and reports, never on the hot path.
     */
    private final OrderedLock lock = new OrderedLock(LockOrder.RECENT_CALLS);
    private final List<LockCall> calls = new ArrayList<>(2);
    private long dropped;
    /** The calls' count, written under the lock: {@link #isEmpty()} reads it without, on every statement's path. */
    private volatile int size;

    public void add(LockCall call) {
        lock.lock();
        try {
            addUnderLock(call);
        } finally {
            lock.unlock();
        }
    }

    private void addUnderLock(LockCall call) {
        calls.add(call);
        if (calls.size() > MAX) {
            int excess = calls.size() - MAX;
            calls.subList(0, excess).clear();
            dropped += excess;
        }
        size = calls.size();
    }

    /** Adds the last {@code n} calls of {@code from} (read under its lock first, then added under ours: never both). */
    public void addLast(RecentCalls from, int n) {
        List<LockCall> last;
        from.lock.lock();
        try {
            last = new ArrayList<>(from.calls.subList(Math.max(0, from.calls.size() - n), from.calls.size()));
        } finally {
            from.lock.unlock();
        }
        lock.lock();
        try {
            for (LockCall c : last) {
                addUnderLock(c);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Without the lock: one volatile read (the guard asks it for every statement under transaction pooling). */
    public boolean isEmpty() {
        return size == 0;
    }

    /** A copy, oldest first (read for a report; another thread may change the calls meanwhile). */
    public List<LockCall> list() {
        lock.lock();
        try {
            return new ArrayList<>(calls);
        } finally {
            lock.unlock();
        }
    }

    /** Calls dropped since the last clear, oldest first: attribution cannot see them. */
    public long dropped() {
        lock.lock();
        try {
            return dropped;
        } finally {
            lock.unlock();
        }
    }

    public void clear() {
        lock.lock();
        try {
            calls.clear();
            dropped = 0;
            size = 0;
        } finally {
            lock.unlock();
        }
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
