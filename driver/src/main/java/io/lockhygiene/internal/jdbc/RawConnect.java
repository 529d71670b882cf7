package io.lockhygiene.internal.jdbc;

/**
 * Marks, per thread, a pgjdbc connect whose connection must stay raw: the one the jdbc:lockhygiene: driver
 * is about to wrap itself, or a lock holder's. The agent's hook on pgjdbc's connect asks {@link #active()}
 * and leaves such a connection alone. A class of its own so that the agent's hook can ask without loading
 * (and registering) the driver.
 */
public final class RawConnect {
    private static final ThreadLocal<Boolean> ACTIVE = new ThreadLocal<>();

    private RawConnect() {
    }

    public static boolean active() {
        return ACTIVE.get() != null;
    }

    /** @return what to hand to {@link #end}: the mark as it was (a raw connect inside another stays marked) */
    public static Boolean begin() {
        Boolean previous = ACTIVE.get();
        ACTIVE.set(Boolean.TRUE);
        return previous;
    }

    public static void end(Boolean previous) {
        if (previous == null) {
            ACTIVE.remove();
        } else {
            ACTIVE.set(previous);
        }
    }
}
