package io.lockhygiene.it.bed;

import io.lockhygiene.internal.placement.EndpointResolver;

/** The process's LockHygiene holders, as tests see them. */
public final class Holders {
    private Holders() {
    }

    /**
     * Every shared holder shut down and forgotten, and every endpoint placement with them: the next test (or
     * benchmark variant) gets holders made with its own settings.
     */
    public static void reset() {
        io.lockhygiene.internal.holder.Holders.shutdownAll();
        EndpointResolver.forgetAll();
    }
}
