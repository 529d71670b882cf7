package io.lockhygiene.policy;

import io.lockhygiene.settings.Settings;
import io.lockhygiene.sql.ScanResult;

/**
 * The pure decision table: (what the statement calls, where we are, mode) to {@link Decision}. Session
 * locks are legitimate under session pooling and direct connections; only transaction pooling changes
 * anything. The connection guard acts on exactly what this returns.
 */
public final class LockPolicy {

    private LockPolicy() {
    }

    /**
     * A statement can run on the lock holder when it is one statement that only reads: the holder then
     * gives it exactly PostgreSQL's session-lock semantics. One that also writes, locks rows or changes
     * session or transaction state must stay on the application's connection, in its transaction.
     */
    public static boolean canEmulate(ScanResult scan) {
        return scan.hasSessionLevelCall() && !scan.hasWrites() && scan.statementCount() == 1;
    }

    /**
     * @param holderAvailable emulate: this connection can open a lock holder
     */
    public static Decision decide(ScanResult scan, Situation where, Settings.Mode mode, Settings.LeakCheck leakCheck,
                                  boolean holderAvailable) {
        if (mode == Settings.Mode.OFF || !where.transactionPooling() || !scan.hasSessionLevelCall()) {
            return Decision.PASS;
        }
        if (where.status() == Situation.TransactionStatus.FAILED) {
            // PostgreSQL answers 25P02 to anything but the transaction's end: send it as it is, add nothing
            return Decision.PASS;
        }
        switch (mode) {
            case STRICT:
                if (scan.hasSessionAcquire()) {
                    return Decision.REJECT;
                }
                break; // unlocks alone take nothing: as detect
            case EMULATE:
                // Inside a transaction the application's server is pinned anyway: while the holder holds
                // nothing, the call runs there (and a lock still held at the end moves to the holder).
                boolean adopts = where.status() == Situation.TransactionStatus.OPEN && !where.holderHolding();
                if (holderAvailable && canEmulate(scan) && !adopts) {
                    return Decision.EMULATE;
                }
                break; // writes, several statements, or inside the transaction: as detect
            case REWRITE:
                if (anyCallInTransaction(scan, where)) {
                    return Decision.REWRITE;
                }
                // In autocommit an xact lock would end with the statement: keep the session form (as detect)
                break;
            case DETECT:
            default:
                break;
        }
        boolean autocommitStatement = !where.statementRunsInTransaction();
        // A text with its own BEGIN or COMMIT is never wrapped: our transaction would swallow or end theirs.
        if (autocommitStatement && !scan.hasTransactionControl() && leakCheck != Settings.LeakCheck.NEVER) {
            return Decision.WRAP_IN_TRANSACTION;
        }
        return Decision.PASS;
    }

    private static boolean anyCallInTransaction(ScanResult scan, Situation where) {
        boolean[] in = scan.callsInTransaction(where.statementRunsInTransaction());
        for (int i = 0; i < in.length; i++) {
            if (in[i] && scan.calls().get(i).function().isSessionLevel()) {
                return true;
            }
        }
        return false;
    }
}
