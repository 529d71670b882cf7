package io.lockhygiene.internal.guard;

import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.ScanResult;

/**
 * What one text is, decided once (at prepare time, or per Statement.execute): the text pgjdbc gets (the
 * application's, or rewrite's), what the scanner found in it, and, under emulate, the shape of its
 * advisory calls. Each execution asks the policy for its plan with this and where the connection is then.
 */
public final class StatementPlan {
    final String original;
    final String sent;
    /** The scan of the application's text; NOTHING for text the prefilter ruled out. */
    final ScanResult scan;
    /** The scan of what is sent (a rewrite leaves no session-level call, unless its own COMMIT kept some). */
    final ScanResult sentScan;
    /** emulate: the shape of its calls; null otherwise. */
    final LockShape shape;
    final boolean callable;
    /** Whether what is sent runs in a transaction block as it would alone (a fenced twin can carry it); asked once. */
    private byte blockable;

    StatementPlan(String original, String sent, ScanResult scan, ScanResult sentScan, LockShape shape, boolean callable) {
        this.original = original;
        this.sent = sent;
        this.scan = scan;
        this.sentScan = sentScan;
        this.shape = shape;
        this.callable = callable;
    }

    static StatementPlan unflagged(String sql) {
        return new StatementPlan(sql, sql, ScanResult.NOTHING, ScanResult.NOTHING, null, false);
    }

    /** What is sent may run in one transaction block with a fence after it (a single ordinary statement). */
    boolean runsInTransactionBlockAsAlone() {
        if (blockable == 0) {
            blockable = io.lockhygiene.internal.sql.SqlScanner.runsInTransactionBlockAsAlone(sent) ? (byte) 1 : (byte) 2;
        }
        return blockable == 1;
    }

    /** The text pgjdbc prepares. */
    public String sent() {
        return sent;
    }

    public String original() {
        return original;
    }

    /** True when no execution needs any work (unless the connection watches every statement). */
    public boolean unflagged() {
        return scan == ScanResult.NOTHING;
    }

    /** emulate decides the calls: the bind values must be kept for it. */
    public boolean keepsBinds() {
        return shape != null;
    }

    /** The text's last statement ends the transaction (see {@link ScanResult#finalTransactionEnd}). */
    public io.lockhygiene.internal.sql.TransactionControl finalTransactionEnd() {
        return scan.finalTransactionEnd();
    }
}
