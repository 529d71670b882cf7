package io.lockhygiene.jdbc;

import java.util.Collections;
import java.util.List;

/** Decided once at prepare time: the text pgjdbc prepares and what each execution must record. */
final class PreparedPlan {
    final String original;
    final String sent;
    /** Empty when executions need no work (no session-level call left in the text that is sent). */
    final List<Flagged> flagged;

    PreparedPlan(String original, String sent, List<Flagged> flagged) {
        this.original = original;
        this.sent = sent;
        this.flagged = flagged;
    }

    static PreparedPlan unflagged(String sql) {
        return new PreparedPlan(sql, sql, Collections.emptyList());
    }
}
