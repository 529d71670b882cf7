package io.lockhygiene.jdbc;

import java.util.Collections;
import java.util.List;

import io.lockhygiene.policy.Decision;
import io.lockhygiene.sql.ScanResult;

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
    /** emulate: the scan of a statement prepared on the lock holder; null otherwise. */
    final ScanResult emulated;

    StatementPlan(String original, String sent, List<Flagged> flagged, ScanResult scan, Decision decision) {
        this.original = original;
        this.sent = sent;
        this.flagged = flagged;
        this.scan = scan;
        this.decision = decision;
        this.emulated = decision == Decision.EMULATE ? scan : null;
    }

    static StatementPlan unflagged(String sql) {
        return new StatementPlan(sql, sql, Collections.emptyList(), null, Decision.PASS);
    }
}
