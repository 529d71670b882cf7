package io.lockhygiene.internal.holder;

import java.sql.SQLException;

import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;

/**
 * A server acquisition some owner waits for, sent in the next round trip of the holder's main session by
 * whichever thread holds its {@code io} lock then (owners share round trips instead of queueing for them).
 * Written under {@code io}; read by its owner once {@link #done} says it was answered.
 */
final class Take {
    /** What the server said to a take, or that the table must decide again (it changed meanwhile). */
    enum Result { GRANTED, REFUSED, DECIDE_AGAIN }

    final LockOwner owner;
    final AdvisoryKey key;
    final boolean shared;
    final boolean tryLock;
    final TransactionId tx;
    final int level;
    /** The owner is in the key's queue (it waited locally before). */
    final boolean queued;
    /** Only asks whether the key is free now (taken and let go in the same statement); nothing is granted. */
    final boolean probe;
    /** A blocking shared request on a backend that holds the key exclusively: PostgreSQL grants it at once. */
    boolean grantedAtOnce;
    /** Written last, after the result or the failure: read by its owner's thread without the turn. */
    volatile boolean done;
    Result result;
    SQLException failure;

    Take(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, TransactionId tx, int level, boolean queued,
         boolean probe) {
        this.owner = owner;
        this.key = key;
        this.shared = shared;
        this.tryLock = tryLock;
        this.tx = tx;
        this.level = level;
        this.queued = queued;
        this.probe = probe;
    }

    void fail(SQLException e) {
        failure = e;
        done = true;
    }

    void decideAgain() {
        result = Result.DECIDE_AGAIN;
        done = true;
    }

    void answer(boolean got) {
        result = got ? Result.GRANTED : Result.REFUSED;
        done = true;
    }
}
