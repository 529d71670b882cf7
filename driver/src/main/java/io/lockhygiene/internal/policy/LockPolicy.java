package io.lockhygiene.internal.policy;

import io.lockhygiene.internal.sql.ScanResult;
import io.lockhygiene.settings.Settings;

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
        return scan.hasSessionLevelCall() && canRunOnHolder(scan);
    }

    /** One statement that only reads: it may run on the lock holder. */
    public static boolean canRunOnHolder(ScanResult scan) {
        return !scan.hasWrites() && scan.statementCount() == 1;
    }

    /**
     * @param holderAvailable emulate: this connection can open a lock holder
     */
    public static Decision decide(ScanResult scan, Situation where, Settings.Mode mode, Settings.LeakCheck leakCheck,
                                  boolean holderAvailable) {
        if (mode == Settings.Mode.OFF || !where.transactionPooling() || scan.calls().isEmpty()) {
            return Decision.PASS;
        }
        if (!scan.hasSessionLevelCall()) {
            // xact-level calls alone: only emulate moves them, to the holder, while it is their venue
            return mode == Settings.Mode.EMULATE && holderAvailable && where.status() != Situation.TransactionStatus.FAILED
                    && canRunOnHolder(scan) && where.venue() == Situation.Venue.HOLDER ? Decision.EMULATE : Decision.PASS;
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
                // Inside a transaction the application's server is pinned anyway: unless the holder is this
                // transaction's venue, the call runs there (a lock still held at the end moves to the holder).
                // Never the other way: a transaction that pins its server must not wait for the holder to
                // find one (with every server pinned by such transactions, nobody would move).
                if (holderAvailable && canEmulate(scan) && (where.venue() == Situation.Venue.HOLDER
                        || (where.venue() == Situation.Venue.UNDECIDED
                            && where.status() != Situation.TransactionStatus.OPEN))) {
                    return Decision.EMULATE;
                }
                break; // writes, several statements, or on the application's server: recorded, moved at the end
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
        return wrapsAutocommit(where, scan.hasTransactionControl(), leakCheck != Settings.LeakCheck.NEVER);
    }

    /**
     * leakCheck=always: an execution with no session-level call is wrapped under the same rule, since under
     * transaction pooling every autocommit statement ends a transaction whose server must be checked.
     */
    public static Decision decideUnflagged(Situation where, boolean textHasTransactionControl,
                                           Settings.Mode mode, Settings.LeakCheck leakCheck) {
        if (mode == Settings.Mode.OFF || leakCheck != Settings.LeakCheck.ALWAYS || !where.transactionPooling()
                || where.status() == Situation.TransactionStatus.FAILED) {
            return Decision.PASS;
        }
        return wrapsAutocommit(where, textHasTransactionControl, true);
    }

    /**
     * A statement that runs while no transaction is open on the server is wrapped in one of ours, so the
     * leak check at its COMMIT runs on the server that holds the lock; a text with its own BEGIN or COMMIT
     * never is (our transaction would swallow or end theirs).
     */
    private static Decision wrapsAutocommit(Situation where, boolean textHasTransactionControl, boolean checked) {
        return checked && !where.statementRunsInTransaction() && !textHasTransactionControl
                ? Decision.WRAP_IN_TRANSACTION : Decision.PASS;
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
