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

    /**
     * A fresh seal value (never 0, which stands for "none"), anywhere in the lock table: for a server whose lock
     * table's layout could not be confirmed ({@link #placesSeals}).
     */
    public static int fresh() {
        return ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
    }

    /**
     * A fresh seal value whose lock, in database {@code databaseOid}, lives in the first partition of
     * PostgreSQL's lock table. Why it matters: a backend that exits releases its session locks partition by
     * partition, from the first to the sixteenth ({@code LockReleaseAll}), each partition under its own
     * lightweight lock, and a waiter granted a key in partition 5 may run (take a snapshot, commit) before the
     * exiting backend reaches partition 9. A seal in partition 9 would then still answer "alive" to a fence
     * after another client holds the key: the fence would let a commit through that PostgreSQL's own session
     * could not have made. A seal in the first partition goes before every key (a key in that partition goes
     * under the same lightweight lock, which a fence's try must take too), so any fence run after another
     * client was granted a key finds the seal free. About sixteen candidates are hashed for one seal.
     */
    public static int freshInFirstPartition(int databaseOid) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (true) {
            int candidate = random.nextInt(1, Integer.MAX_VALUE);
            if (lockPartition(databaseOid, CLASSID, candidate) == 0) {
                return candidate;
            }
        }
    }

    /**
     * The partition (0 to 15) of PostgreSQL's lock table that holds advisory lock {@code (key1, key2)} (the
     * two-int form) in database {@code databaseOid}: {@code LockTagHashCode % NUM_LOCK_PARTITIONS} over the
     * 16 bytes of its {@code LOCKTAG} (field1 the database, field2 and field3 the keys, field4 2 for the
     * two-int form, type {@code LOCKTAG_ADVISORY} = 10, lock method {@code USER_LOCKMETHOD} = 2), as laid out
     * on a little-endian server (PostgreSQL 13 to 18 all number the lock tag types alike).
     */
    public static int lockPartition(int databaseOid, int key1, int key2) {
        int fourth = 2 | (10 << 16) | (2 << 24);
        return hashWords(16, databaseOid, key1, key2, fourth) & 15;
    }

    /**
     * PostgreSQL's {@code hash_bytes} (Bob Jenkins' lookup3, as PostgreSQL runs it on a little-endian server)
     * of {@code bytes}: what {@code hashtext} returns for a text of those bytes in a deterministic collation,
     * which is how a server confirms that this is its hash ({@link #PLACEMENT_PROBE}).
     */
    public static int hashBytes(byte[] bytes) {
        int n = bytes.length;
        int[] words = new int[(n + 3) / 4];
        for (int i = 0; i < n; i++) {
            words[i / 4] |= (bytes[i] & 0xff) << (8 * (i % 4));
        }
        return hashWords(n, words);
    }

    /** hash_bytes over {@code length} bytes given as little-endian words (the last one zero-padded). */
    private static int hashWords(int length, int... words) {
        int a = 0x9e3779b9 + length + 3923095;
        int b = a;
        int c = a;
        int left = length;
        int w = 0;
        while (left >= 12) {
            a += words[w];
            b += words[w + 1];
            c += words[w + 2];
            // mix
            a -= c; a ^= Integer.rotateLeft(c, 4); c += b;
            b -= a; b ^= Integer.rotateLeft(a, 6); a += c;
            c -= b; c ^= Integer.rotateLeft(b, 8); b += a;
            a -= c; a ^= Integer.rotateLeft(c, 16); c += b;
            b -= a; b ^= Integer.rotateLeft(a, 19); a += c;
            c -= b; c ^= Integer.rotateLeft(b, 4); b += a;
            w += 3;
            left -= 12;
        }
        // the last 0 to 11 bytes: into a, then b, then c from its second byte on (its lowest byte is the length's)
        if (left > 0) {
            a += words[w];
        }
        if (left > 4) {
            b += words[w + 1];
        }
        if (left > 8) {
            c += words[w + 2] << 8;
        }
        // final
        c ^= b; c -= Integer.rotateLeft(b, 14);
        a ^= c; a -= Integer.rotateLeft(c, 11);
        b ^= a; b -= Integer.rotateLeft(a, 25);
        c ^= b; c -= Integer.rotateLeft(b, 16);
        a ^= c; a -= Integer.rotateLeft(c, 4);
        b ^= a; b -= Integer.rotateLeft(a, 14);
        c ^= b; c -= Integer.rotateLeft(b, 24);
        return c;
    }

    /** The text whose {@code hashtext} a server is asked for, to confirm {@link #hashBytes} is its hash. */
    public static final String PLACEMENT_PROBE = "LockHygiene seal";

    /** What {@link #hashBytes} gives for {@link #PLACEMENT_PROBE}. */
    private static final int PROBE_HASH =
            hashBytes(PLACEMENT_PROBE.getBytes(java.nio.charset.StandardCharsets.US_ASCII));

    /**
     * Two more columns of a holder session's opening {@code SELECT}: the database's OID (a lock tag's first
     * field) and the server's {@code hashtext} of {@link #PLACEMENT_PROBE}, as text.
     */
    public static final String PLACEMENT_COLUMNS = "(SELECT d.oid FROM pg_catalog.pg_database d"
            + " WHERE d.datname = pg_catalog.current_database())::text, pg_catalog.hashtext('" + PLACEMENT_PROBE
            + "' COLLATE pg_catalog.\"C\")::text";

    /**
     * True when a server that answered {@code probeHash} to {@link #PLACEMENT_COLUMNS} hashes as
     * {@link #hashBytes} does (a little-endian server with PostgreSQL's hash): its seals can be placed.
     */
    public static boolean placesSeals(String probeHash) {
        try {
            return probeHash != null && Integer.parseInt(probeHash) == PROBE_HASH;
        } catch (NumberFormatException e) {
            return false;
        }
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
