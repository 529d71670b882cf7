package io.lockhygiene.internal.locktable;

/** A lock one of the holder's backends lets go of on the server (see {@link LockTable#surplus}). */
public final class ServerLock {
    public final AdvisoryKey key;
    public final boolean shared;
    /** The backend that holds it. */
    public final LockTable.Backend on;

    ServerLock(AdvisoryKey key, boolean shared, LockTable.Backend on) {
        this.key = key;
        this.shared = shared;
        this.on = on;
    }

    @Override
    public String toString() {
        return key + (shared ? " shared" : " exclusive");
    }
}
