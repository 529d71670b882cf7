package io.lockhygiene.it.semantics;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The differential tester's grammar (see {@link DifferentialTest}): the keys a program may use and how
 * statements write them, and the next step of a program, chosen from a model of its transactions kept true to
 * what the reference answered.
 */
public final class ProgramGrammar {
    /** One step: which connection, how it runs (query, prepared, callable, callable-out, API calls), what, with which binds. */
    public record Step(int connection, String kind, String sql, Object[] params) {
        @Override
        public String toString() {
            return "c" + connection + " " + kind + (sql == null ? "" : " " + sql)
                    + (params == null || params.length == 0 ? "" : " " + Arrays.toString(params));
        }
    }

    /** A key of the program: its name, its numeric identity in pg_locks, and how statements may write it. */
    public record Key(String name, boolean pair, long classid, long objid, List<Render> renders, String probeArgs) {
    }

    /** One way to write a key's arguments, with its bind values. */
    public record Render(String args, Object[] params) {
    }

    /** The program's view of transactions, built from the reference's answers. */
    public static final class Model {
        final boolean[] inTransaction = new boolean[2];
        final boolean[] apiTransaction = new boolean[2];
        final int[] savepoints = new int[2];
        /** Steps so far. */
        int steps;

        void endTransaction(int c) {
            inTransaction[c] = false;
            apiTransaction[c] = false;
            savepoints[c] = 0;
        }
    }

    /** Asks the reference's server whether a blocking acquire by connection c would wait. */
    @FunctionalInterface
    public interface WouldWait {
        boolean test(Key key, int c, boolean shared);
    }

    /** The keys of a program from base B: ints, a negative one, a pair, and four expression keys. */
    public static List<Key> keys(Connection c, long b) throws SQLException {
        long[] h = new long[4];
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT hashtext('job-" + b + "'), hashtext('report-" + b + "'),"
                     + " hashtextextended('job-" + b + "', 0), ('x' || left(md5('job-" + b + "'), 15))::bit(60)::bigint")) {
            rs.next();
            for (int i = 0; i < 4; i++) {
                h[i] = rs.getLong(i + 1);
            }
        }
        int a = (int) (b % 100_000);
        List<Key> keys = new ArrayList<>();
        keys.add(bigint("k1", b, List.of(lit(b), bind("?", b), bind("?::bigint", b), bind("CAST(? AS bigint)", b),
                lit(b + "::bigint"))));
        keys.add(bigint("k2", b + 1, List.of(lit(b + 1), bind("?", b + 1), bind("?::int8", b + 1))));
        keys.add(bigint("neg", -(b + 2), List.of(lit(-(b + 2)), bind("?", -(b + 2)))));
        keys.add(new Key("pair", true, a & 0xFFFFFFFFL, 7, List.of(lit(a + ", 7"), new Render("?, ?", new Object[] {a, 7}),
                new Render("?::int, ?::int", new Object[] {a, 7}), new Render(a + ", ?", new Object[] {7})), a + ", 7"));
        keys.add(bigint("hashtext", h[0], List.of(lit("hashtext('job-" + b + "')"),
                new Render("hashtext(?)", new Object[] {"job-" + b}))));
        keys.add(new Key("class+hash", true, 7742, h[1] & 0xFFFFFFFFL, List.of(lit("7742, hashtext('report-" + b + "')"),
                new Render("7742, hashtext(?)", new Object[] {"report-" + b}),
                new Render("?, hashtext(?)", new Object[] {7742, "report-" + b})), "7742, hashtext('report-" + b + "')"));
        keys.add(bigint("hashtextextended", h[2], List.of(lit("hashtextextended('job-" + b + "', 0)"),
                new Render("hashtextextended(?, 0)", new Object[] {"job-" + b}))));
        keys.add(bigint("md5", h[3], List.of(lit("('x' || left(md5('job-" + b + "'), 15))::bit(60)::bigint"),
                new Render("('x' || left(md5(?), 15))::bit(60)::bigint", new Object[] {"job-" + b}))));
        return keys;
    }

    static Key bigint(String name, long value, List<Render> renders) {
        return new Key(name, false, value >>> 32, value & 0xFFFFFFFFL, renders, renders.get(0).args());
    }

    static Render lit(Object text) {
        return new Render(String.valueOf(text), new Object[0]);
    }

    private static Render bind(String text, long value) {
        return new Render(text, new Object[] {value});
    }

    private static final String[] FUNCTIONS = {"pg_advisory_lock", "pg_try_advisory_lock", "pg_advisory_lock_shared",
            "pg_try_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_xact_lock",
            "pg_try_advisory_xact_lock", "pg_advisory_xact_lock_shared", "pg_try_advisory_xact_lock_shared"};

    private static final String[] BLOCKING = {"pg_advisory_lock", "pg_advisory_xact_lock", "pg_advisory_lock_shared",
            "pg_advisory_xact_lock_shared"};

    /**
     * A statement for a text of several: a try of a key written with literals (transaction-level or session-level,
     * by the model's step count), or SELECT 1 when no key is written so.
     */
    private static String literalStatement(List<Key> keys, Model m) {
        for (Key k : keys) {
            for (Render how : k.renders()) {
                if (how.params().length == 0 && m.steps % 3 != 0) {
                    return "SELECT " + (m.steps % 3 == 1 ? "pg_try_advisory_xact_lock" : "pg_try_advisory_lock") + "("
                            + how.args() + ") AS got";
                }
            }
        }
        return "SELECT 1 AS one";
    }

    private static boolean blocking(String f) {
        return !f.contains("try") && !f.contains("unlock");
    }

    private static String tryForm(String f) {
        return f.replace("pg_advisory", "pg_try_advisory");
    }

    /** Asks the reference's session whether connection c's waits are bounded now (its lock_timeout or statement_timeout). */
    @FunctionalInterface
    public interface Bounded {
        boolean test(int c);
    }

    /**
     * The session's own bounds (issue 43), set only where a transaction pins the session to its server (SET LOCAL,
     * set_config's is_local), so that a program means the same through a transaction pooler as directly: a
     * session-level SET in autocommit binds whichever server the pooler gave, for client and emulation alike.
     * RESET inside a transaction puts back the role's default, which the programs never change.
     */
    private static final String[] BOUNDS = {"SET LOCAL lock_timeout = '60ms'", "SET LOCAL lock_timeout = '120ms'",
            "SET LOCAL statement_timeout = '90ms'", "SELECT set_config('lock_timeout', '80ms', true)",
            "RESET lock_timeout", "RESET ALL"};

    /**
     * The next step, chosen from the model and, for blocking calls, from what the reference's server holds: a
     * blocking call that would wait is asked as a try instead, unless the session bounds its wait (then it waits,
     * and the bound ends it).
     */
    public static Step next(Random r, Model m, int connections, List<Key> keys, WouldWait wouldWait, Bounded bounded) {
        return next(r, m, connections, keys, wouldWait, bounded, true);
    }

    /** @param rowKeys calls may read their keys from rows (a front end that cannot follow those leaves them out) */
    public static Step next(Random r, Model m, int connections, List<Key> keys, WouldWait wouldWait, Bounded bounded,
                            boolean rowKeys) {
        if (m.steps == 0 && connections == 2) {
            // two-connection programs start with the second connection holding a key, so that the first
            // meets it: waits, tries refused, and waits its own bounds end
            Key held = keys.get(r.nextInt(keys.size()));
            return new Step(1, "query", "SELECT pg_advisory_lock(" + held.probeArgs() + ")", null);
        }
        int c = connections == 1 ? 0 : r.nextInt(2);
        int roll = r.nextInt(100);
        boolean newForms = r instanceof ProgramRandom && ((ProgramRandom) r).chains;
        if (roll < 12) {
            if (!m.inTransaction[c]) {
                if (newForms && m.steps % 6 == 1) {
                    // a text that is a transaction of its own, in autocommit (decided from the model, not drawn)
                    return new Step(c, "query", "BEGIN; " + literalStatement(keys, m) + "; COMMIT", null);
                }
                return r.nextBoolean() ? new Step(c, "text", "BEGIN", null) : new Step(c, "begin-api", null, null);
            }
            if (m.apiTransaction[c]) {
                return new Step(c, r.nextBoolean() ? "commit-api" : "rollback-api", null, null);
            }
            String end = r.nextBoolean() ? "COMMIT" : "ROLLBACK";
            if (newForms && m.steps % 6 == 4) {
                // a text whose last statement ends the transaction
                return new Step(c, "query", literalStatement(keys, m) + "; " + end, null);
            }
            // an end at every seventh step chains the next transaction (decided from the model, not drawn), except in
            // the programs of seeds kept from before chains were written (see programRandom)
            if (newForms && m.steps % 6 == 5) {
                return new Step(c, "prepared", end, new Object[0]); // an end sent as a prepared statement
            }
            return new Step(c, "text", newForms && m.steps % 7 == 3 ? end + " AND CHAIN" : end, null);
        }
        if (roll < 24 && m.inTransaction[c]) {
            int sp = m.savepoints[c];
            switch (r.nextInt(4)) {
                case 0:
                    return new Step(c, "text", "SAVEPOINT s" + (sp + 1), null);
                case 1:
                    return new Step(c, "text", "ROLLBACK TO SAVEPOINT s" + Math.max(1, sp), null); // may be mistaken
                case 2:
                    return new Step(c, "text", "RELEASE SAVEPOINT s" + Math.max(1, sp), null);
                default:
                    return new Step(c, "text", "SELECT 1/0", null);
            }
        }
        if (roll < 27) {
            return new Step(c, "text", "SELECT pg_advisory_unlock_all()", null);
        }
        if (roll < 40 && m.inTransaction[c]) {
            return new Step(c, "text", BOUNDS[r.nextInt(BOUNDS.length)], null);
        }
        if (roll < 29) {
            // the session that holds the locks ends: on PostgreSQL every session of the program; under emulate
            // its lock holder's (every owner of a process shares it); then each connection is opened again
            return new Step(0, "sessions-end", null, null);
        }
        Key key = keys.get(r.nextInt(keys.size()));
        String f = FUNCTIONS[r.nextInt(FUNCTIONS.length)];
        if (connections == 2 && m.inTransaction[c] && r.nextBoolean()) {
            // now and then a transaction meets a key the other connection holds: it bounds its waits first (a
            // step of its own), then asks for that key and waits until its bound ends the wait
            Key held = null;
            for (Key k : keys) {
                if (wouldWait.test(k, c, false)) {
                    held = k;
                    break;
                }
            }
            if (held != null) {
                if (!bounded.test(c)) {
                    return new Step(c, "text", BOUNDS[r.nextInt(4)], null); // one that bounds (not a RESET)
                }
                key = held;
                f = BLOCKING[r.nextInt(BLOCKING.length)];
            }
        }
        if (blocking(f) && wouldWait.test(key, c, f.contains("shared")) && !bounded.test(c)) {
            f = tryForm(f); // PostgreSQL would wait without a bound: the program asks instead
        }
        Render how = key.renders().get(r.nextInt(key.renders().size()));
        int shape = r.nextInt(100);
        if (shape < 6) { // Kill Bill's isFree: try, and unlock at once when it was free
            Key k = keys.get(0);
            Render kr = k.renders().get(r.nextInt(k.renders().size()));
            Object[] params = concat(kr.params(), kr.params());
            return step(c, "SELECT CASE WHEN pg_try_advisory_lock(" + kr.args() + ") THEN pg_advisory_unlock(" + kr.args()
                    + ") ELSE FALSE END", params);
        }
        if (shape < 12) { // two calls, never blocking
            Key k2 = keys.get(r.nextInt(keys.size()));
            Render how2 = k2.renders().get(r.nextInt(k2.renders().size()));
            String f1 = blocking(f) ? tryForm(f) : f;
            String f2 = FUNCTIONS[r.nextInt(FUNCTIONS.length)];
            f2 = blocking(f2) ? tryForm(f2) : f2;
            return step(c, "SELECT " + f1 + "(" + how.args() + "), " + f2 + "(" + how2.args() + ") AS second",
                    concat(how.params(), how2.params()));
        }
        if (shape < 18 && rowKeys && (key.name().equals("k1") || key.name().equals("k2"))) { // keys read from rows
            return step(c, "SELECT " + f + "(id) FROM lh_diff_keys WHERE id = " + (key.objid() | (key.classid() << 32)),
                    new Object[0]);
        }
        String call = f + "(" + how.args() + ")";
        switch (r.nextInt(13)) {
            case 9:
                return step(c, "SELECT NOT " + call, how.params()); // a void call: PostgreSQL's type error first
            case 10:
                return step(c, "select * from " + call + " as t(got)", how.params());
            case 0:
                return step(c, "SELECT " + call + " AS got", how.params());
            case 1:
                return step(c, "SELECT pg_catalog." + call, how.params());
            case 2:
                return step(c, "SELECT cast(" + call + " as text)", how.params());
            case 3:
                return step(c, "SELECT 1 FROM " + call, how.params());
            case 4:
                return step(c, "select * from " + call + " as result", how.params());
            case 5:
                return new Step(c, "callable", "{call " + call + "}", how.params());
            case 6:
                return new Step(c, f.contains("try") || f.contains("unlock") ? "callable-out-bool" : "callable-out",
                        "{? = call " + call + "}", how.params());
            case 7:
                return how.params().length == 0 ? new Step(c, "query", "SELECT 1 AS one; SELECT " + call, null)
                        : step(c, "SELECT " + call, how.params());
            case 8:
                return step(c, "SELECT " + call + ";", how.params());
            default:
                return step(c, "SELECT " + call, how.params());
        }
    }

    private static Step step(int c, String sql, Object[] params) {
        return params.length == 0 ? new Step(c, "query", sql, null) : new Step(c, "prepared", sql, params);
    }

    private static Object[] concat(Object[] a, Object[] b) {
        Object[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** Keeps the model true to what the reference answered. */
    public static void learn(Model m, Step s, String outcome) {
        m.steps++;
        int c = s.connection();
        switch (s.kind()) {
            case "sessions-end":
                m.endTransaction(0);
                m.endTransaction(1);
                return;
            case "begin-api":
                m.inTransaction[c] = true;
                m.apiTransaction[c] = true;
                return;
            case "commit-api":
            case "rollback-api":
                m.endTransaction(c);
                return;
            default:
                break;
        }
        String sql = s.sql();
        if ("BEGIN".equals(sql) && !outcome.startsWith("ERROR")) {
            m.inTransaction[c] = true;
        } else if (("COMMIT".equals(sql) || "ROLLBACK".equals(sql)) && !m.apiTransaction[c]) {
            m.endTransaction(c);
        } else if (sql.startsWith("BEGIN; ") && sql.endsWith("; COMMIT")) {
            if (outcome.contains("ERROR")) {
                m.inTransaction[c] = true; // its BEGIN ran, the error aborted the rest: a failed transaction stays
            }
        } else if ((sql.endsWith("; COMMIT") || sql.endsWith("; ROLLBACK")) && !m.apiTransaction[c]) {
            if (!outcome.contains("ERROR")) {
                m.endTransaction(c); // an error before the end leaves the transaction failed
            }
        } else if (sql.endsWith(" AND CHAIN") && !outcome.startsWith("ERROR")) {
            m.savepoints[c] = 0; // ended, and the next one open at once
            m.inTransaction[c] = true;
        } else if (sql.startsWith("SAVEPOINT") && !outcome.startsWith("ERROR")) {
            m.savepoints[c]++;
        } else if (sql.startsWith("RELEASE") && !outcome.startsWith("ERROR")) {
            m.savepoints[c] = Math.max(0, m.savepoints[c] - 1);
        }
    }

    /**
     * The random source a program of {@code seed} is generated from. The seeds kept from before the grammar wrote
     * COMMIT AND CHAIN and ROLLBACK AND CHAIN keep their programs as they were (each was chosen for what its program
     * does); every other seed's program has them.
     */
    public static Random programRandom(long seed) {
        return new ProgramRandom(seed, !BEFORE_CHAINS.contains(seed));
    }

    private static final java.util.Set<Long> BEFORE_CHAINS = java.util.Set.of(737084L, 55031L, 55036L, 55053L,
            31080L, 31224L, 52400L);

    /** A program's random source, and whether its transaction ends may chain. */
    private static final class ProgramRandom extends Random {
        private static final long serialVersionUID = 1L;
        final boolean chains;

        ProgramRandom(long seed, boolean chains) {
            super(seed);
            this.chains = chains;
        }
    }

    public static int connectionsOf(long seed) {
        return new Random(seed ^ 0x5DEECE66DL).nextInt(3) == 0 ? 2 : 1;
    }

    /** Three or four keys of the catalogue, chosen by the seed (k1 always: Kill Bill's shape uses it). */
    public static List<Key> keysOf(long seed, List<Key> all) {
        Random r = new Random(seed * 31 + 7);
        List<Key> chosen = new ArrayList<>();
        chosen.add(all.get(0));
        List<Key> rest = new ArrayList<>(all.subList(1, all.size()));
        java.util.Collections.shuffle(rest, r);
        chosen.addAll(rest.subList(0, 2 + r.nextInt(2)));
        return chosen;
    }

    /**
     * A step's outcome as the trace shows it: one that a bound ended (55P03, 57014) also says whether the bound
     * ended it, within a second of {@code startNanos}, where the programs' bounds are 60 to 120 ms and an unbounded
     * wait runs to the client's own timeout (a wait without a bound is what this tells apart, not a speed).
     */
    public static String boundedOutcome(String outcome, long startNanos) {
        if (!outcome.startsWith("ERROR 55P03") && !outcome.startsWith("ERROR 57014")) {
            return outcome;
        }
        long millis = (System.nanoTime() - startNanos) / 1_000_000;
        return outcome + (millis < 1_000 ? " (in time)" : " (after " + millis + " ms)");
    }

    /** The table the programs' row-read keys come from (k1 and k2 as bigints). */
    public static void prepareKeysTable(Connection direct, List<Key> keys) throws SQLException {
        try (Statement s = direct.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_diff_keys (id bigint)");
            s.execute("DELETE FROM lh_diff_keys");
            for (Key k : keys) {
                if (!k.pair()) {
                    s.execute("INSERT INTO lh_diff_keys VALUES (" + (k.objid() | (k.classid() << 32)) + ")");
                }
            }
        }
    }

    /** True when backend {@code otherPid} holds {@code key} in a mode a request ({@code shared} or not) would wait for. */
    public static boolean heldByOther(Statement observer, Key key, int otherPid, boolean shared) {
        String sql = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = "
                + key.classid() + " AND objid = " + key.objid() + " AND objsubid = " + (key.pair() ? 2 : 1)
                + " AND pid = " + otherPid + (shared ? " AND mode = 'ExclusiveLock'" : "");
        try (ResultSet rs = observer.executeQuery(sql)) {
            rs.next();
            return rs.getInt(1) > 0;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every key, exclusive and shared, as another session sees it: free (1) or taken (0). */
    public static String probe(Statement observer, List<Key> keys) throws SQLException {
        StringBuilder b = new StringBuilder();
        for (Key key : keys) {
            for (String mode : new String[] {"", "_shared"}) {
                try (ResultSet rs = observer.executeQuery("SELECT pg_try_advisory_lock" + mode + "(" + key.probeArgs() + ")")) {
                    rs.next();
                    boolean got = rs.getBoolean(1);
                    b.append(got ? '1' : '0');
                    if (got) {
                        observer.execute("SELECT pg_advisory_unlock" + mode + "(" + key.probeArgs() + ")");
                    }
                }
            }
            b.append(' ');
        }
        return b.toString().trim();
    }

    private ProgramGrammar() {
    }
}
