package io.lockhygiene.internal.jdbc;

import java.util.Collections;
import java.util.List;

import io.lockhygiene.internal.policy.Decision;
import io.lockhygiene.internal.sql.LockStatement;
import io.lockhygiene.internal.sql.ScanResult;

/**
 * Decided once per text (at prepare time, or per Statement.execute): what is sent, the decision the
 * policy took, and what each execution must record.
 */
final class StatementPlan {
    final String original;
    final String sent;
    /** Empty when executions need no work (no session-level call left in the text that is sent). */
    final List<Flagged> flagged;
    /** The scan of the text (null for text the prefilter ruled out and nothing watches). */
    final ScanResult scan;
    final Decision decision;
    /** emulate: the scan of a statement prepared on the per-connection lock holder; null otherwise. */
    final ScanResult emulated;
    /**
     * emulate: a statement of advisory calls on known keys, decided at each execution in the process's lock
     * table (answered without being sent) or run as it is; null otherwise.
     */
    final LockStatement table;

    StatementPlan(String original, String sent, List<Flagged> flagged, ScanResult scan, Decision decision) {
        this(original, sent, flagged, scan, decision, null);
    }

    StatementPlan(String original, String sent, List<Flagged> flagged, ScanResult scan, Decision decision,
                  LockStatement table) {
        this.original = original;
        this.sent = sent;
        this.flagged = flagged;
        this.scan = scan;
        this.decision = decision;
        this.table = table;
        this.emulated = decision == Decision.EMULATE && table == null ? scan : null;
    }

    static StatementPlan unflagged(String sql) {
        return new StatementPlan(sql, sql, Collections.emptyList(), null, Decision.PASS);
    }
}
