package io.lockhygiene.monitor;

/** One backend waiting for an advisory lock another backend holds, as one poll saw it. */
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

    AdvisoryWait(int blockedPid, int blockingPid, String key, String mode, long waitMillis, String state,
                 String waitEventType, String waitEvent, String blockedQuery, String blockingQuery) {
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
