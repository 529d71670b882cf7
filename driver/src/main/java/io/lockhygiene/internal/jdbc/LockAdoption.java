package io.lockhygiene.internal.jdbc;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.emulate.AdvisoryKey;
import io.lockhygiene.internal.leak.Attribution;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.LockCall;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.leak.RecentCalls;
import io.lockhygiene.settings.Settings;

/**
 * emulate: session locks one connection took on its own server inside a transaction (a statement that
 * also writes, say) and still held at the transaction's end move to the process's lock holder.
 */
final class LockAdoption {
    private final Settings settings;
    private final String id;
    private final LeakReporter reporter;
    /** The calls that ran on the application's own server since the transaction began. */
    private final RecentCalls adoptable = new RecentCalls();

    LockAdoption(Settings settings, String id, LeakReporter reporter) {
        this.settings = settings;
        this.id = id;
        this.reporter = reporter;
    }

    boolean pending() {
        return !adoptable.isEmpty();
    }

    /** The last {@code n} calls recorded ran on the application's own server: their locks may move. */
    void add(RecentCalls calls, int n) {
        adoptable.addLast(calls, n);
    }

    void clear() {
        adoptable.clear();
    }

    /**
     * Before the end of a transaction whose session locks will move to the holder: lists the transaction's
     * own advisory locks (one round trip, only then) and registers those that will move as handed over, so
     * that no other owner of this process gets one while it is on its way. Returns what to unregister.
     */
    List<HeldLock> beginHandOver(java.sql.Connection raw, SharedHolder shared, LockOwner owner) {
        if (adoptable.isEmpty()) {
            return java.util.Collections.emptyList();
        }
        List<HeldLock> held;
        try (java.sql.Statement s = raw.createStatement()) {
            held = LeakReporter.readHeldLocks(s, s.execute(PgLocks.LIST));
        } catch (SQLException | RuntimeException e) {
            return java.util.Collections.emptyList(); // an aborted transaction, say: its end moves what it can
        }
        List<HeldLock> moving = moving(held);
        for (HeldLock lock : moving) {
            shared.handOvers.begin(owner, keyOf(lock), lock.isShared());
        }
        return moving;
    }

    /** The transaction ended and its locks moved (or failed to): the keys are no longer on their way. */
    void endHandOver(List<HeldLock> moving, SharedHolder shared, LockOwner owner) {
        if (moving.isEmpty()) {
            return;
        }
        for (HeldLock lock : moving) {
            shared.handOvers.end(owner, keyOf(lock));
        }
        shared.handOverEnded();
    }

    /** Of {@code held} (the transaction's own locks, listed before its end), those that will move. */
    List<HeldLock> moving(List<HeldLock> held) {
        List<HeldLock> moving = new ArrayList<>();
        for (HeldLock lock : held) {
            if (Attribution.takerOf(lock, adoptable.list()) != null) {
                moving.add(lock);
            }
        }
        return moving;
    }

    static AdvisoryKey keyOf(HeldLock lock) {
        return lock.isBigintKey() ? AdvisoryKey.bigint(lock.bigintKey()) : AdvisoryKey.pair(lock.firstIntKey(), lock.secondIntKey());
    }

    /**
     * emulate: locks this connection took inside its transaction and still held at its end were just
     * released with the transaction's end (on the backend that held them); the holder takes them again.
     * Between the two another client can take the key: said at WARN. Returns the locks left to report
     * (inherited ones, which are not ours to keep).
     */
    List<HeldLock> moveToHolder(List<HeldLock> held, String command, SharedHolder shared, LockOwner owner) {
        if (adoptable.isEmpty()) {
            return held;
        }
        List<HeldLock> notOurs = new ArrayList<>();
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, adoptable.list());
            if (taker == null) {
                notOurs.add(lock);
                continue;
            }
            try {
                AdvisoryKey key = keyOf(lock);
                for (int i = 0; i < lock.count(); i++) { // as often as the application's session had stacked it
                    shared.acquire(owner, key, lock.isShared(), false, null, 0, settings.lockTimeoutMillis(), 0);
                }
                owner.calls.add(taker); // the holder holds it for that call now: attribute it there
                ReportLog.warn("moved@" + CallSite.describe(taker.takenAt()), "session locks moved to the lock holder"
                        + " at their transaction's end, taken at " + CallSite.describe(taker.takenAt()), lock.key(),
                        "LockHygiene: {} still held session advisory lock {} ({}) at {} of the transaction that took it;"
                        + " the lock holder took it over (between release and re-acquisition another client could take"
                        + " the key). Take such locks outside the transaction, or release them before it ends.",
                        id, lock.key(), lock.mode(), command);
            } catch (SQLException | RuntimeException e) {
                reporter.checkFailed("while moving lock " + lock.key() + " to the lock holder", e);
            }
        }
        adoptable.clear();
        return notOurs;
    }
}
