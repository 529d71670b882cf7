package io.lockhygiene.internal.sql;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A holder session's seal: an advisory lock of its own, {@code (CLASSID, random)} in the two-int key space,
 * that the session takes when it starts holding anything and keeps while it lives. A try of the seal from
 * any other session fails exactly while the holder's session is alive (a pid can be reused; a seal cannot:
 * it is random per session and taken only by it). A fenced commit of an owner asks, in the commit's round
 * trip, for the seals of the sessions its locks live on: {@link #fence}.
 */
public final class Seals {
    /** The classid of every seal ({@code 0x4C480001}): shown in pg_locks as the holder sessions' own lock. */
    public static final int CLASSID = 0x4C480001;
    /** What a fence's error says (PostgreSQL's words for an unknown setting name it). */
    public static final String LOST_MARK = "lockhygiene.lock_lost";
    /** The column a fence's row is named by, so that its result is told from the application's. */
    public static final String FENCE_COLUMN = "lockhygiene_fence";

    private Seals() {
    }

    /** A fresh seal value (never 0, which stands for "none"). */
    public static int fresh() {
        return ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
    }

    /** The call that takes seal {@code s} for the session that sends it. */
    public static String take(int s) {
        return "pg_catalog.pg_try_advisory_lock(" + CLASSID + ", " + s + ")";
    }

    /**
     * One statement that fails the transaction it runs in (SQLState 42704, naming {@link #LOST_MARK}) when any
     * of {@code seals} can be taken, that is when a holder session that held them is gone; otherwise it
     * returns one NULL in column {@link #FENCE_COLUMN}. A taken seal is transaction-level: it goes with the
     * rollback the failure causes.
     */
    public static String fence(int[] seals) {
        StringBuilder b = new StringBuilder(96 + 64 * seals.length).append("SELECT CASE WHEN ");
        for (int i = 0; i < seals.length; i++) {
            b.append(i == 0 ? "" : " OR ").append("pg_catalog.pg_try_advisory_xact_lock(").append(CLASSID).append(", ")
                    .append(seals[i]).append(')');
        }
        return b.append(" THEN pg_catalog.current_setting('").append(LOST_MARK).append("') END AS ").append(FENCE_COLUMN)
                .toString();
    }

    /**
     * One connection's fence statement, made again only when the seals it must check change (they stay the
     * same while the holder's sessions live). One per connection, used by its thread only.
     */
    public static final class LastFence {
        private int[] seals;
        private String text;

        /** {@link #fence}{@code (seals)}, from the last call when the seals are the same. */
        public String of(int[] seals) {
            if (!java.util.Arrays.equals(seals, this.seals)) {
                text = fence(seals);
                this.seals = seals;
            }
            return text;
        }
    }

    /** True when {@code e} is a fence's failure (a holder session is gone), not the application's own error. */
    public static boolean isFenceFailure(java.sql.SQLException e) {
        for (java.sql.SQLException x = e; x != null; x = x.getNextException()) {
            if ("42704".equals(x.getSQLState()) && x.getMessage() != null && x.getMessage().contains(LOST_MARK)) {
                return true;
            }
        }
        return false;
    }
}
