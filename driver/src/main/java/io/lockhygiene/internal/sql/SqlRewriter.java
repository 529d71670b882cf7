package io.lockhygiene.internal.sql;

import io.lockhygiene.internal.sql.SqlScanner.ScanResult;

/**
 * Turns session-level advisory calls into their transaction-scoped forms by splicing function names at
 * the positions the scanner found; every other character of the text stays as it was.
 * <ul>
 *   <li>{@code pg_advisory_lock[_shared]}, {@code pg_try_advisory_lock[_shared]}: the {@code _xact_} form;</li>
 *   <li>{@code pg_advisory_unlock[_shared]}: {@code pg_try_advisory_xact_lock[_shared]}, which returns
 *       true for a lock this transaction holds and changes nothing (the lock goes at transaction end);</li>
 *   <li>{@code pg_advisory_unlock_all()}: {@code pg_stat_clear_snapshot()}, a void built-in with no effect
 *       on locks.</li>
 * </ul>
 * A call that is a whole select-list item without an alias gets {@code AS <original name>} so the
 * result column keeps the label the application reads.
 */
public final class SqlRewriter {

    private SqlRewriter() {
    }

    /** The rewritten text, or {@code sql} itself when there is no session-level call. */
    public static String toTransactionScoped(String sql, ScanResult scan) {
        return toTransactionScoped(sql, scan, null);
    }

    /**
     * The same, for the calls that run inside a transaction only ({@code inTransaction[i]} for
     * {@code scan.calls().get(i)}; null means all): a call the text's own COMMIT left in autocommit keeps
     * its session form, since an xact lock would end with its statement.
     */
    public static String toTransactionScoped(String sql, ScanResult scan, boolean[] inTransaction) {
        if (!scan.hasSessionLevelCall()) {
            return sql;
        }
        // Edits as (start, end, text); an alias insertion of an outer call lands after the edits of calls
        // nested in its arguments, so apply them in position order.
        java.util.List<Edit> edits = new java.util.ArrayList<>();
        for (int i = 0; i < scan.calls().size(); i++) {
            AdvisoryCall call = scan.calls().get(i);
            AdvisoryFunction f = call.function();
            if (!f.isSessionLevel() || (inTransaction != null && !inTransaction[i])) {
                continue;
            }
            edits.add(new Edit(call.nameStart(), call.nameEnd(), f.rewriteTo()));
            if (call.aliasable() && call.closeParen() >= 0) {
                edits.add(new Edit(call.closeParen() + 1, call.closeParen() + 1, " AS " + f.sqlName()));
            }
        }
        edits.sort((a, b) -> Integer.compare(a.start, b.start));
        StringBuilder out = new StringBuilder(sql.length() + 32 * edits.size());
        int copied = 0;
        for (Edit e : edits) {
            out.append(sql, copied, e.start).append(e.text);
            copied = e.end;
        }
        return out.append(sql, copied, sql.length()).toString();
    }

    /** Replace text[start, end) with text. */
    private static final class Edit {
        final int start;
        final int end;
        final String text;

        Edit(int start, int end, String text) {
            this.start = start;
            this.end = end;
            this.text = text;
        }
    }
}
