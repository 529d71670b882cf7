package io.lockhygiene.it.bed;

import java.time.Duration;

/**
 * The one way tests wait for state they do not get a signal for (the server's {@code pg_locks}, a row count, a
 * session going away): ask again every few milliseconds until it holds, within a bound; fail with what was
 * awaited and what was last seen when the bound passes. Never a bare sleep standing in for the state.
 */
public final class Eventually {
    /** What a test asks each time: its answer, or null while the state is not there yet. */
    @FunctionalInterface
    public interface Probe<T> {
        T get() throws Exception;
    }

    private static final long PAUSE_MILLIS = 10;

    private Eventually() {
    }

    /** The first non-null answer of {@code probe} within {@code bound}; an AssertionError naming {@code what} after it. */
    public static <T> T await(String what, Duration bound, Probe<T> probe) {
        long deadline = System.nanoTime() + bound.toNanos();
        Exception last = null;
        while (true) {
            try {
                T answer = probe.get();
                if (answer != null) {
                    return answer;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            } catch (Exception e) {
                last = e;
            }
            if (System.nanoTime() - deadline >= 0) {
                AssertionError failed = new AssertionError("not within " + bound.toMillis() + " ms: " + what);
                if (last != null) {
                    failed.initCause(last);
                }
                throw failed;
            }
            try {
                Thread.sleep(PAUSE_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + what, e);
            }
        }
    }

    /** Returns once {@code condition} holds, within {@code bound}. */
    public static void until(String what, Duration bound, Probe<Boolean> condition) {
        await(what, bound, () -> Boolean.TRUE.equals(condition.get()) ? Boolean.TRUE : null);
    }
}
