package io.lockhygiene.internal.locktable;

/** One owner's session-level hold, as reported when it is released for a gone owner (see {@link LockTable#releaseOwner}). */
public final class SessionHold {
    public final AdvisoryKey key;
    public final boolean shared;
    public final int count;

    SessionHold(AdvisoryKey key, boolean shared, int count) {
        this.key = key;
        this.shared = shared;
        this.count = count;
    }
}
