package io.lockhygiene.internal.holder;

import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.sql.Seals;

/**
 * Where one holder's seals go: into the first partition of the server's lock table once a session has told
 * the database's OID and confirmed the hash ({@link Seals#freshInFirstPartition}), anywhere before that or on a
 * server whose hash is not ours. Learned once per endpoint (the first session's opening costs one round trip
 * more); read by every session of it. Its two fields are written once, together, before {@code learned} is.
 */
final class SealPlacement {
    private volatile boolean learned;
    private int databaseOid;
    private boolean placed;

    /** True once a session has answered {@link Seals#PLACEMENT_COLUMNS}. */
    boolean learned() {
        return learned;
    }

    /** What a session answered to {@link Seals#PLACEMENT_COLUMNS}: the database's OID and the probe's hash. */
    void learn(String databaseOid, String probeHash, Object endpoint) {
        if (learned) {
            return;
        }
        if (databaseOid == null || !Seals.placesSeals(probeHash)) {
            cannotLearn("it does not hash lock tags as PostgreSQL does on a little-endian machine: hashtext answered "
                    + probeHash, endpoint);
            return;
        }
        this.databaseOid = (int) Long.parseLong(databaseOid); // an OID is unsigned: its bits, as C has them
        this.placed = true;
        learned = true;
    }

    /** The server cannot say where its lock table keeps a lock ({@code why}): seals go anywhere, said once. */
    void cannotLearn(String why, Object endpoint) {
        if (learned) {
            return;
        }
        Log.info("LockHygiene (lockhygiene.mode=emulate): the server behind {} cannot say where its lock table keeps"
                + " a lock ({}); the holder's seals go anywhere in it, so a commit fence racing the exit of a lost holder"
                + " session may let one commit through (docs/emulate.md, a lost lock fences its owner)", endpoint, why);
        placed = false;
        learned = true;
    }

    /** A fresh seal for a session of this endpoint. */
    int fresh() {
        return learned && placed ? Seals.freshInFirstPartition(databaseOid) : Seals.fresh();
    }
}
