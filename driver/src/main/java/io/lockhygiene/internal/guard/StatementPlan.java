package io.lockhygiene.internal.guard;

import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;

/**
 * What one text is, decided once (at prepare time, or per Statement.execute): the text pgjdbc gets (the
 * application's, or rewrite's), what the scanner found in it, and, under emulate, the shape of its
 * advisory calls. A prepared statement's executions each ask the policy for their plan with this and where
 * the connection is then; a text run at once (a Statement's) carries the situation and plan decided when it
 * was read, so both are made once per execution.
 */
public final class StatementPlan implements LockPolicy.OwnerText {
    final String original;
    final String sent;
    /** The scan of the application's text; NOTHING for text the prefilter ruled out. */
    final ScanResult scan;
    /** The scan of what is sent (a rewrite leaves no session-level call, unless its own COMMIT kept some). */
    final ScanResult sentScan;
    /** emulate: the shape of its calls; null otherwise. */
    final LockShape shape;
    final LockPolicy.Form form;
    /** A text run at once: where the connection stood and the plan decided when it was read; else null. */
    final Situation where;
    final Plan decided;
    /** A text run at once whose end the leak check sample took. */
    final boolean sampled;
    /** Whether what is sent runs in a transaction block as it would alone (a fenced twin can carry it); asked once. */
    private byte blockable;
    /** {@link #scan()}: what is sent, read once when the prefilter ruled it out; null until asked. */
    private ScanResult read;

    StatementPlan(String original, String sent, ScanResult scan, ScanResult sentScan, LockShape shape,
                  LockPolicy.Form form) {
        this(original, sent, scan, sentScan, shape, form, null, null, false);
    }

    private StatementPlan(String original, String sent, ScanResult scan, ScanResult sentScan, LockShape shape,
                          LockPolicy.Form form, Situation where, Plan decided, boolean sampled) {
        this.original = original;
        this.sent = sent;
        this.scan = scan;
        this.sentScan = sentScan;
        this.shape = shape;
        this.form = form;
        this.where = where;
        this.decided = decided;
        this.sampled = sampled;
    }

    static StatementPlan unflagged(String sql) {
        return new StatementPlan(sql, sql, ScanResult.NOTHING, ScanResult.NOTHING, null, LockPolicy.Form.TEXT);
    }

    /** This plan for a text run at once, with the situation and plan decided now (when {@code where} is not null). */
    StatementPlan decidedNow(Situation now, Plan plan, boolean sampledEnd) {
        return now == null && !sampledEnd ? this
                : new StatementPlan(original, sent, scan, sentScan, shape, form, now, plan, sampledEnd);
    }

    boolean callable() {
        return form == LockPolicy.Form.CALLABLE;
    }

    /** What is sent may run in one transaction block with a fence after it (a single ordinary statement). */
    @Override
    public boolean runsInTransactionBlockAsAlone() {
        if (blockable == 0) {
            blockable = SqlScanner.runsInTransactionBlockAsAlone(sent) ? (byte) 1 : (byte) 2;
        }
        return blockable == 1;
    }

    /** An owner's statement: the scan of what is sent, read from the one cache when the prefilter ruled it out. */
    @Override
    public ScanResult scan() {
        ScanResult r = read;
        if (r == null) {
            r = !sentScan.nothingOfInterest() || sent == null || sent.isEmpty() ? sentScan : TextAnalysis.of(sent).scan();
            read = r;
        }
        return r;
    }

    @Override
    public boolean discardsAll() {
        return SqlScanner.discardsAll(sent);
    }

    /** This text read in full (a text the prefilter ruled out, whose end must be seen). */
    StatementPlan read() {
        ScanResult r = scan();
        return r == sentScan ? this : new StatementPlan(original, sent, r, r, shape, form);
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
        return scan.nothingOfInterest();
    }

    /** emulate decides the calls: the bind values must be kept for it. */
    public boolean keepsBinds() {
        return shape != null;
    }
}
