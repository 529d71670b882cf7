package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;

import io.lockhygiene.internal.emulate.AdvisoryKey;

/** A server acquisition some owner waits for: done by whichever thread holds the holder's io next (see {@link HolderServer#flush}). */
final class HolderTake {
    final LockOwner owner;
    final AdvisoryKey key;
    final boolean shared;
    final boolean tryLock;
    final Object tx;
    final int level;
    boolean grantedAtOnce;
    /** Under io: set when done. null result: decide again. */
    boolean done;
    Boolean result;
    SQLException failure;

HolderTake(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, Object tx, int level) {
        this.owner = owner;
        this.key = key;
        this.shared = shared;
        this.tryLock = tryLock;
        this.tx = tx;
        this.level = level;
    }
}
