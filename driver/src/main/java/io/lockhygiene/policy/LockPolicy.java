package io.lockhygiene.policy;

import io.lockhygiene.settings.Settings;
import io.lockhygiene.sql.ScanResult;

/**
 * The pure decision table: (what the statement calls, resolved pool mode, autocommit, mode) to
 * {@link Decision}. Session locks are legitimate under session pooling and direct connections; only
 * transaction pooling changes anything.
 */
public final class LockPolicy {

    private LockPolicy() {
    }

    /**
     * A statement can run on the lock holder when it is one statement that only reads: the holder then
     * gives it exactly PostgreSQL's session-lock semantics. One that also writes, locks rows or changes
     * session state must stay on the application's connection, in its transaction.
     */
    public static boolean canEmulate(ScanResult scan) {
        return scan.hasSessionLevelCall() && !scan.hasWrites() && scan.statementCount() == 1;
    }

    /**
     * @param transactionPooling the resolved pool mode is transaction pooling
     */
    public static Decision decide(ScanResult scan, boolean transactionPooling, boolean autoCommit, Settings.Mode mode) {
        if (mode == Settings.Mode.OFF || !transactionPooling || !scan.hasSessionLevelCall()) {
            return Decision.PASS;
        }
        switch (mode) {
            case STRICT:
                if (scan.hasSessionAcquire()) {
                    return Decision.REJECT;
                }
                // unlocks alone take nothing: let them run as in detect
                return autoCommit ? Decision.WRAP_IN_TRANSACTION : Decision.PASS;
            case EMULATE:
                if (canEmulate(scan)) {
                    return Decision.EMULATE;
                }
                // a statement that also writes (or holds several statements) cannot move to the holder
                return autoCommit ? Decision.WRAP_IN_TRANSACTION : Decision.PASS;
            case REWRITE:
                // In autocommit an xact lock would end with the statement: keep the session form, so
                // behave as detect (and warn that mutual exclusion is lost).
                return autoCommit ? Decision.WRAP_IN_TRANSACTION : Decision.REWRITE;
            case DETECT:
            default:
                return autoCommit ? Decision.WRAP_IN_TRANSACTION : Decision.PASS;
        }
    }
}
