package io.lockhygiene.internal.jdbc;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.lockhygiene.internal.emulate.AdvisoryKey;

/**
 * Session locks on their way from an application's own server to the lock holder (see
 * {@link LockAdoption}): released with the transaction's COMMIT, then taken again by the holder. For
 * PostgreSQL the owner held them all along, so while a key is on its way, another owner of this process
 * must not get it: a try is refused, a blocking call waits (see {@link HolderAcquisition}).
 */
final class HandOvers {
    private static final class Entry {
        final LockOwner owner;
        final boolean shared;

        Entry(LockOwner owner, boolean shared) {
            this.owner = owner;
            this.shared = shared;
        }
    }

    private final Map<AdvisoryKey, List<Entry>> pending = new HashMap<>();

    synchronized void begin(LockOwner owner, AdvisoryKey key, boolean shared) {
        pending.computeIfAbsent(key, k -> new ArrayList<>(1)).add(new Entry(owner, shared));
    }

    synchronized void end(LockOwner owner, AdvisoryKey key) {
        List<Entry> entries = pending.get(key);
        if (entries != null) {
            entries.removeIf(e -> e.owner == owner);
            if (entries.isEmpty()) {
                pending.remove(key);
            }
        }
    }

    /** Another owner whose hand-over of {@code key} conflicts with {@code asking} taking it in this mode, or null. */
    synchronized LockOwner conflicting(LockOwner asking, AdvisoryKey key, boolean shared) {
        List<Entry> entries = pending.get(key);
        if (entries != null) {
            for (Entry e : entries) {
                if (e.owner != asking && !(shared && e.shared)) {
                    return e.owner;
                }
            }
        }
        return null;
    }
}
