package io.lockhygiene.internal.locktable;

/** What a request gets from the lock table right now (see {@link LockTable#request}). */
public final class Answer {
    /** What a take queued for the main session still needs when its batch is sent. */
    public enum ServerStep { NOT_NEEDED, TRY, GRANTED_AT_ONCE }

    /** The decision. */
    public enum Verdict { GRANTED, SERVER, REFUSED, WAIT, DEADLOCK }

    public final Verdict verdict;
    /** WAIT, DEADLOCK, REFUSED: the owner waited for. */
    public final LockOwner blocker;
    /** SERVER: the backend the key lives on (its other mode, or the mode itself for a queue check), or null. */
    public final LockTable.Backend home;
    /** SERVER: the server holds this mode already for other owners; only PostgreSQL's queue may refuse. */
    public final boolean queueCheckOnly;
    /** The table's generation when this was decided: {@link LockTable#awaitChange} returns at once if it moved. */
    public final long generation;

    Answer(Verdict verdict, LockOwner blocker, LockTable.Backend home, boolean queueCheckOnly, long generation) {
        this.verdict = verdict;
        this.blocker = blocker;
        this.home = home;
        this.queueCheckOnly = queueCheckOnly;
        this.generation = generation;
    }
}
