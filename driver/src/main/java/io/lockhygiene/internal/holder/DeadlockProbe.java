package io.lockhygiene.internal.holder;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;

import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;

/**
 * A deadlock between an owner of this process that waits in PostgreSQL's queue and another process:
 * PostgreSQL sees the other process wait for one of the holder's backends and our waiting connection wait
 * for the other process, but not that the holder's backend holds the key for the very owner that waits (or
 * for an owner that waits for it here). Once a second per wait older than a second (PostgreSQL's own
 * deadlock_timeout), one query on the main connection lists the advisory locks the processes blocking the
 * wait are themselves waiting for; if this process holds one of them for the waiting owner, or for an owner
 * whose wait here leads back to it, the wait is cancelled and ends with 40P01, as PostgreSQL would end it.
 */
final class DeadlockProbe {
    private static final long EVERY_NANOS = 1_000_000_000L;

    private DeadlockProbe() {
    }

    /** The ungranted advisory locks of the backends that block {@code pid}, transitively. */
    static String query(int pid) {
        return "WITH RECURSIVE b(pid) AS (SELECT pg_catalog.unnest(pg_catalog.pg_blocking_pids(" + pid + "))"
                + " UNION SELECT pg_catalog.unnest(pg_catalog.pg_blocking_pids(b.pid)) FROM b)"
                + " SELECT l.classid::text, l.objid::text, l.objsubid::text, l.mode FROM pg_catalog.pg_locks l"
                + " WHERE l.locktype = 'advisory' AND NOT l.granted AND l.pid IN (SELECT pid FROM b)";
    }

    /**
     * @param probe runs a statement on the main session (null when it is busy or closed)
     */
    static void check(BiFunction<String, Integer, List<String[]>> probe, LockTable table, ServerQueue.QueuedOwner sw) {
        long now = System.nanoTime();
        if (sw.deadlock || now - sw.lastProbeNanos < EVERY_NANOS) {
            return;
        }
        sw.lastProbeNanos = now;
        List<String[]> rows = probe.apply(query(sw.waiter.backendPid()), 4);
        if (rows == null) {
            return;
        }
        for (String[] r : rows) {
            AdvisoryKey key = keyOf(r);
            boolean shared = "ShareLock".equals(r[3]);
            for (LockOwner holderOwner : table.ownersHolding(key, shared)) {
                if (leadsTo(table, holderOwner, sw.owner)) {
                    sw.cycleWith = holderOwner + " (advisory lock " + key + ")";
                    sw.deadlock = true;
                    sw.waiter.cancel();
                    return;
                }
            }
        }
    }

    /** {@code from} is {@code target}, or waits here (owner by owner) for an owner that leads to it. */
    private static boolean leadsTo(LockTable table, LockOwner from, LockOwner target) {
        Set<LockOwner> seen = new HashSet<>();
        for (LockOwner o = from; o != null && seen.add(o); o = table.waitingFor(o)) {
            if (o == target) {
                return true;
            }
        }
        return false;
    }

    /** pg_locks' classid, objid, objsubid to a key. */
    static AdvisoryKey keyOf(String[] r) {
        long classid = Long.parseLong(r[0]);
        long objid = Long.parseLong(r[1]);
        if ("2".equals(r[2])) {
            return AdvisoryKey.pair((int) classid, (int) objid);
        }
        return AdvisoryKey.bigint((classid << 32) | objid);
    }
}
