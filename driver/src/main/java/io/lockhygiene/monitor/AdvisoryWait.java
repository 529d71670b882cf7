package io.lockhygiene.monitor;

/**
 * One wait for an advisory lock, as one poll saw it: a backend waiting for another backend's lock (pg_locks),
 * or, under {@code lockhygiene.mode=emulate}, an owner of this JVM waiting in the JVM for another owner, or
 * polling for another process through a transaction pooler, which pg_locks cannot show
 * ({@link #isEmulated()}; its pids are 0 and {@link #owner()} and {@link #holder()} say who).
 */
public final class AdvisoryWait {
    private final int blockedPid;
    private final int blockingPid;
    private final String key;
    private final String mode;
    private final long waitMillis;
    private final String state;
    private final String waitEventType;
    private final String waitEvent;
    private final String blockedQuery;
    private final String blockingQuery;
    private final String owner;
    private final String holder;

    AdvisoryWait(int blockedPid, int blockingPid, String key, String mode, long waitMillis, String state,
                 String waitEventType, String waitEvent, String blockedQuery, String blockingQuery) {
        this(blockedPid, blockingPid, key, mode, waitMillis, state, waitEventType, waitEvent, blockedQuery,
                blockingQuery, null, null);
    }

    AdvisoryWait(int blockedPid, int blockingPid, String key, String mode, long waitMillis, String state,
                 String waitEventType, String waitEvent, String blockedQuery, String blockingQuery, String owner,
                 String holder) {
        this.owner = owner;
        this.holder = holder;
        this.blockedPid = blockedPid;
        this.blockingPid = blockingPid;
        this.key = key;
        this.mode = mode;
        this.waitMillis = waitMillis;
        this.state = state;
        this.waitEventType = waitEventType;
        this.waitEvent = waitEvent;
        this.blockedQuery = blockedQuery;
        this.blockingQuery = blockingQuery;
    }

    /** emulate: a wait PostgreSQL does not show (in this JVM, or polled through a pooler). */
    public boolean isEmulated() {
        return owner != null;
    }

    /** emulate: who waits (a connection, or a pool's thread); null for a backend's wait. */
    public String owner() {
        return owner;
    }

    /** emulate: who holds the key, as far as this JVM knows (another owner, or another process); null otherwise. */
    public String holder() {
        return holder;
    }

    public int blockedPid() {
        return blockedPid;
    }

    public int blockingPid() {
        return blockingPid;
    }

    /** "42" or "(7742, -5)". */
    public String key() {
        return key;
    }

    /** The mode waited for: ExclusiveLock or ShareLock. */
    public String mode() {
        return mode;
    }

    public long waitMillis() {
        return waitMillis;
    }

    public String state() {
        return state;
    }

    public String waitEventType() {
        return waitEventType;
    }

    public String waitEvent() {
        return waitEvent;
    }

    /** Already cut to the monitor's logSql setting. */
    public String blockedQuery() {
        return blockedQuery;
    }

    public String blockingQuery() {
        return blockingQuery;
    }

    @Override
    public String toString() {
        return "backend " + blockedPid + " waits " + waitMillis + " ms for advisory lock " + key + " (" + mode
                + ") held by backend " + blockingPid;
    }
}
