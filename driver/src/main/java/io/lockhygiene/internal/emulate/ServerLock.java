package io.lockhygiene.internal.emulate;

/** A lock the holder's backend takes or lets go of on the server (see {@link LockTable#surplus}). */
public final class ServerLock {
    public final AdvisoryKey key;
    public final boolean shared;

    ServerLock(AdvisoryKey key, boolean shared) {
        this.key = key;
        this.shared = shared;
    }

    @Override
    public String toString() {
        return key + (shared ? " shared" : " exclusive");
    }
}
