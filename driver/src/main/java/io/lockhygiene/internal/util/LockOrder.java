package io.lockhygiene.internal.util;

/**
 * The lock-order table: every lock of the driver that a thread may wait for, outermost first. A thread that
 * holds one may wait only for those below it; a leaf is taken alone (nothing is waited for while it is held).
 * {@link OrderedLock} checks this at run time wherever Java assertions are on (every test run), and costs one
 * static boolean test where they are off. Beside these, only short JDK monitors exist, each a leaf that calls
 * nothing of ours: the synchronized maps {@code ThreadOwners.byThread} and {@code UnlockWatch.TAKEN}, and
 * {@code ReportLog.Repeats}' two methods (counters). No lock is held while a connection is opened or borrowed,
 * and no user callback (listener, log sink) runs under any of them.
 */
public enum LockOrder {
    /**
     * One main session of a lock holder ({@code SessionTurn}): one round trip at a time, and the batch it sends.
     * A thread holds one main session's at a time; the last user's close tries the others without waiting.
     */
    HOLDER_MAIN_SESSION(false),
    /** One waiting session of a lock holder: its wait in PostgreSQL's queue, or its releases. */
    HOLDER_WAITING_SESSION(false),
    /** The lock table ({@code LockTable.state}) and its condition, on which local waiters sleep. Never across a round trip. */
    LOCK_TABLE(false),
    /** The idle and all lists of a holder's waiting sessions ({@code WaitingSessions.lists}); a session is opened outside it. */
    WAITING_SESSION_LISTS(false),
    /** Starting and stopping the holders' watchdog thread ({@code HolderWatchdog.LIFECYCLE}). */
    WATCHDOG_LIFECYCLE(false),
    /** The key cache's map ({@code KeyCache}): a lookup or an insert. */
    KEY_CACHE(true),
    /** The advisory wait monitor's episodes and its start and close ({@code AdvisoryWaitMonitor.lock}); its poll runs before it. */
    WAIT_MONITOR(true),
    /** The process report file's writes ({@code ProcessReports.reportLock}). */
    PROCESS_REPORT(true),
    /**
     * One connection's or owner's recent lock calls ({@code RecentCalls}): its own thread adds, a close on another
     * thread clears.
     */
    RECENT_CALLS(true);

    private final boolean leaf;

    LockOrder(boolean leaf) {
        this.leaf = leaf;
    }

    /** True when nothing may be waited for while this lock is held. */
    public boolean leaf() {
        return leaf;
    }
}
