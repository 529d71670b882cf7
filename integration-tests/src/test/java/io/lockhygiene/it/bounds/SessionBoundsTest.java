package io.lockhygiene.it.bounds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Issue 43: the bounds a session sets on its waits (lock_timeout, statement_timeout, however set) end an emulated
 * wait as they end PostgreSQL's, with PostgreSQL's SQLState and words, and leave the transaction as PostgreSQL
 * leaves it. Another session holds the key, directly on the server; the application's connection sets a bound,
 * then waits. Direct PostgreSQL with plain pgjdbc is the reference for every case.
 */
@ExtendWith(TestBedExtension.class)
class SessionBoundsTest {
    private final TestBed bed = TestBed.shared();

    /** The SETs these tests send through the poolers in autocommit stay on pooled servers: put them back. */
    @org.junit.jupiter.api.AfterEach
    void resetPooledServers() throws Exception {
        bed.admin().resetTransactionPoolServers(Route.TRANSACTION_POOL);
        bed.admin().resetTransactionPoolServers(Route.PREPARED_TRANSACTION_POOL);
    }

    /** What one case did: the SQLState (null: granted), the message, how long the lock call took, and after. */
    record Outcome(String state, String message, long millis, String after) {
        @Override
        public String toString() {
            return state + " after " + millis + " ms (" + message + "); then " + after;
        }
    }

    /** One case of the issue's table: statements before the lock call, the call, and what runs after it. */
    enum Case {
        SET_LOCK_TIMEOUT(false, 0, "SELECT pg_advisory_lock(%d)", "SET lock_timeout = '300ms'"),
        SET_LOCAL_LOCK_TIMEOUT(true, 0, "SELECT pg_advisory_xact_lock(%d)", "SET LOCAL lock_timeout = '300ms'"),
        SET_STATEMENT_TIMEOUT(false, 0, "SELECT pg_advisory_lock(%d)", "SET statement_timeout = '300ms'"),
        SET_CONFIG_LOCK_TIMEOUT(false, 0, "SELECT pg_advisory_lock(%d)",
                "SELECT set_config('lock_timeout', '300ms', false)"),
        SET_CONFIG_LOCAL_IN_TRANSACTION(true, 0, "SELECT pg_advisory_lock_shared(%d)",
                "SELECT set_config('statement_timeout', '300ms', true)"),
        BOTH_THE_NEARER_WINS(false, 0, "SELECT pg_advisory_lock(%d)", "SET lock_timeout = '2s'",
                "SET statement_timeout = '300ms'"),
        QUERY_TIMEOUT(false, 1, "SELECT pg_advisory_lock(%d)"),
        RESET_THEN_TRY(false, 0, "SELECT pg_try_advisory_lock(%d)", "SET lock_timeout = '300ms'",
                "RESET lock_timeout"),
        RESET_ALL_THEN_TRY(false, 0, "SELECT pg_try_advisory_lock(%d)", "SET statement_timeout = '300ms'",
                "RESET ALL");

        final boolean inTransaction;
        final int queryTimeoutSeconds;
        final String call;
        final String[] setup;

        Case(boolean inTransaction, int queryTimeoutSeconds, String call, String... setup) {
            this.inTransaction = inTransaction;
            this.queryTimeoutSeconds = queryTimeoutSeconds;
            this.call = call;
            this.setup = setup;
        }
    }

    private Outcome run(Supplier<Connection> connect, Case c, long key) throws Exception {
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + key + ")");
            try (Connection app = connect.get(); Statement s = app.createStatement()) {
                app.setAutoCommit(!c.inTransaction);
                for (String sql : c.setup) {
                    s.execute(sql);
                }
                s.setQueryTimeout(c.queryTimeoutSeconds == 0 ? 30 : c.queryTimeoutSeconds); // nothing waits forever
                long t0 = System.nanoTime();
                String state = null;
                String message = null;
                try (java.sql.ResultSet rs = s.executeQuery(String.format(c.call, key))) {
                    rs.next();
                    message = rs.getString(1);
                } catch (SQLException e) {
                    state = e.getSQLState();
                    message = e.getMessage();
                }
                long millis = (System.nanoTime() - t0) / 1_000_000;
                String after;
                try {
                    s.execute("SELECT 1");
                    after = "ok";
                } catch (SQLException e) {
                    after = e.getSQLState();
                }
                if (c.inTransaction) {
                    app.rollback();
                }
                if ("t".equals(message) || "true".equals(message)) {
                    s.execute("SELECT pg_advisory_unlock(" + key + ")");
                }
                // the session's own settings back to the role's, so a pooled server keeps none of this case's
                app.setAutoCommit(true);
                s.execute("RESET ALL");
                return new Outcome(state, message, millis, after);
            } finally {
                o.execute("SELECT pg_advisory_unlock_all()");
            }
        }
    }

    private Supplier<Connection> plain(Route route) {
        return () -> {
            try {
                return bed.connect(route);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    private Supplier<Connection> emulate(Route route, String... more) {
        return () -> {
            try {
                List<String> params = new ArrayList<>(List.of("lockhygiene.mode=emulate"));
                params.addAll(List.of(more));
                return bed.connectLockHygiene(route, params.toArray(new String[0]));
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /** The reference and ours agree: SQLState, PostgreSQL's words, when the wait ended, the transaction after. */
    private static void assertAsPostgres(Case c, Outcome reference, Outcome ours) {
        String where = c + ": PostgreSQL " + reference + "; emulate " + ours;
        assertEquals(reference.state(), ours.state(), where);
        if (reference.state() != null) {
            assertTrue(ours.message().contains(wordsOf(reference.message())), where);
        } else {
            assertEquals(reference.message(), ours.message(), where);
        }
        assertEquals(reference.after(), ours.after(), where);
        // the wait ends when PostgreSQL's does: a tolerance of 250 ms either way (a round trip to read the
        // session's bounds, scheduling on two cores), and never before the bound
        assertTrue(Math.abs(ours.millis() - reference.millis()) < 250, where);
    }

    /** The server's sentence without pgjdbc's "ERROR: " and any detail lines. */
    private static String wordsOf(String pgjdbcMessage) {
        String m = pgjdbcMessage.startsWith("ERROR: ") ? pgjdbcMessage.substring(7) : pgjdbcMessage;
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> casesThroughBothPoolers() {
        return java.util.stream.Stream.of(Route.TRANSACTION_POOL, Route.PREPARED_TRANSACTION_POOL)
                .flatMap(route -> java.util.Arrays.stream(Case.values())
                        .map(c -> org.junit.jupiter.params.provider.Arguments.of(route, c)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @org.junit.jupiter.params.provider.MethodSource("casesThroughBothPoolers")
    void throughEitherPgBouncerAsOnPostgres(Route route, Case c) throws Exception {
        long key = 943_000 + (route == Route.TRANSACTION_POOL ? 0 : 100) + c.ordinal();
        Outcome reference = run(plain(Route.DIRECT), c, key);
        Outcome ours = run(emulate(route), c, key);
        assertAsPostgres(c, reference, ours);
        assertEquals(List.of(), bed.admin().holdersOf(key), "nothing left held");
    }

    /** The reference's own bounds are what the table says: the cases measure what they name. */
    @Test
    void theReferenceEndsEachBoundedWaitAsTheIssueSays() throws Exception {
        Outcome lock = run(plain(Route.DIRECT), Case.SET_LOCK_TIMEOUT, 943_201);
        assertEquals("55P03", lock.state(), lock.toString());
        assertTrue(lock.millis() >= 290 && lock.millis() < 2_000, lock.toString());
        Outcome local = run(plain(Route.DIRECT), Case.SET_LOCAL_LOCK_TIMEOUT, 943_202);
        assertEquals("55P03", local.state(), local.toString());
        assertEquals("25P02", local.after(), "the transaction is aborted: " + local);
        Outcome statement = run(plain(Route.DIRECT), Case.SET_STATEMENT_TIMEOUT, 943_203);
        assertEquals("57014", statement.state(), statement.toString());
        assertTrue(statement.message().contains("statement timeout"), statement.toString());
        Outcome reset = run(plain(Route.DIRECT), Case.RESET_THEN_TRY, 943_204);
        assertEquals(null, reset.state(), reset.toString());
        assertEquals("f", reset.message(), reset.toString());
    }

    /**
     * A bound the client never sets: a role default (ALTER ROLE ... SET), on a session that starts after it. The
     * bed's direct route with {@code lockhygiene.poolMode=transaction} makes every session a new backend, so the
     * default is there for certain (behind a pooler it is there on servers that started after the ALTER).
     */
    @Test
    void aRoleDefaultBoundsTheWaitToo() throws Exception {
        String user = bed.endpoints().user();
        try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
            a.execute("ALTER ROLE \"" + user + "\" IN DATABASE " + admin.getCatalog() + " SET lock_timeout = '300ms'");
            try {
                Case c = Case.QUERY_TIMEOUT; // no SET of its own: a 30 s query timeout, far beyond the default
                Outcome reference = run(plain(Route.DIRECT), c, 943_301);
                assertEquals("55P03", reference.state(), "the role's default bounds PostgreSQL's wait: " + reference);
                Outcome ours = run(emulate(Route.DIRECT, "lockhygiene.poolMode=transaction"), c, 943_302);
                assertAsPostgres(c, reference, ours);
            } finally {
                a.execute("ALTER ROLE \"" + user + "\" IN DATABASE " + admin.getCatalog() + " RESET lock_timeout");
            }
        }
    }

    /** The startup options (-c lock_timeout=...) the client's URL gives: read from the server, like any other. */
    @Test
    void theStartupOptionsBoundTheWaitToo() throws Exception {
        Case c = Case.QUERY_TIMEOUT;
        Outcome reference = run(() -> {
            try {
                return java.sql.DriverManager.getConnection(bed.url(Route.DIRECT) + sep(bed.url(Route.DIRECT))
                        + "options=-c%20lock_timeout%3D300ms", bed.credentials());
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }, c, 943_311);
        assertEquals("55P03", reference.state(), reference.toString());
        Outcome ours = run(emulate(Route.DIRECT, "lockhygiene.poolMode=transaction", "options=-c%20lock_timeout%3D300ms"),
                c, 943_312);
        assertAsPostgres(c, reference, ours);
    }

    /**
     * statement_timeout bounds the whole statement: one that waits for its lock and then runs on the server gets
     * only the rest. The other session lets go 300 ms after the wait shows in pg_locks; the statement sleeps 500 ms
     * after its lock, under a 600 ms statement_timeout: PostgreSQL cancels it at about 600 ms (57014), and its
     * session lock stays held, as a session lock does when its statement fails.
     */
    @Test
    void aStatementThatWaitsThenRunsGetsTheRestOfItsStatementTimeout() throws Exception {
        String reference = waitsThenRuns(plain(Route.DIRECT), 943_501);
        assertTrue(reference.startsWith("57014"), reference);
        String ours = waitsThenRuns(emulate(Route.TRANSACTION_POOL), 943_502);
        assertEquals(reference.substring(0, reference.indexOf('@')), ours.substring(0, ours.indexOf('@')),
                "PostgreSQL " + reference + "; emulate " + ours);
        long refMillis = Long.parseLong(reference.substring(reference.indexOf('@') + 1));
        long ourMillis = Long.parseLong(ours.substring(ours.indexOf('@') + 1));
        assertTrue(Math.abs(ourMillis - refMillis) < 250, "PostgreSQL " + reference + "; emulate " + ours);
    }

    /** "state words | unlock true|false @millis" of the waiting, then running, statement. */
    private String waitsThenRuns(Supplier<Connection> connect, long key) throws Exception {
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement();
             Connection app = connect.get(); Statement s = app.createStatement()) {
            o.execute("SELECT pg_advisory_lock(" + key + ")");
            s.execute("SET statement_timeout = '600ms'");
            Thread releaser = new Thread(() -> {
                try {
                    Eventually.until("the wait shows in pg_locks", java.time.Duration.ofSeconds(10),
                            () -> !bed.admin().waitersFor(key).isEmpty());
                    Thread.sleep(300); // the other session keeps the key 300 ms into the wait: the scenario
                    o.execute("SELECT pg_advisory_unlock(" + key + ")");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            releaser.start();
            long t0 = System.nanoTime();
            String got;
            try {
                s.execute("SELECT pg_advisory_lock(" + key + "), pg_sleep(0.5)");
                got = "ok";
            } catch (SQLException e) {
                got = e.getSQLState() + " " + wordsOf(e.getMessage());
            }
            long millis = (System.nanoTime() - t0) / 1_000_000;
            releaser.join(10_000);
            s.execute("RESET statement_timeout");
            boolean unlocked;
            try (java.sql.ResultSet rs = s.executeQuery("SELECT pg_advisory_unlock(" + key + ")")) {
                rs.next();
                unlocked = rs.getBoolean(1);
            }
            s.execute("SELECT pg_advisory_unlock_all()");
            return got + " | unlock " + unlocked + " @" + millis;
        }
    }

    private static String sep(String url) {
        return url.contains("?") ? "&" : "?";
    }
}
