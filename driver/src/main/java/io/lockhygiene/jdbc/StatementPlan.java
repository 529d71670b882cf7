package io.lockhygiene.jdbc;

import java.util.Collections;
import java.util.List;

/** Decided once per text (at prepare time, or per Statement.execute): what is sent, and what each execution must record. */
final class StatementPlan {
    final String original;
    final String sent;
    /** Empty when executions need no work (no session-level call left in the text that is sent). */
    final List<Flagged> flagged;
    /** emulate: the scan of a statement prepared on the lock holder; null otherwise. */
    final io.lockhygiene.sql.ScanResult emulated;

    StatementPlan(String original, String sent, List<Flagged> flagged) {
        this(original, sent, flagged, null);
    }

    StatementPlan(String original, String sent, List<Flagged> flagged, io.lockhygiene.sql.ScanResult emulated) {
        this.original = original;
        this.sent = sent;
        this.flagged = flagged;
        this.emulated = emulated;
    }

    static StatementPlan unflagged(String sql) {
        return new StatementPlan(sql, sql, Collections.emptyList());
    }
}
