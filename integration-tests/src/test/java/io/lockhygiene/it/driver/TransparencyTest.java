package io.lockhygiene.it.driver;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.StringReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.Executors;

import io.lockhygiene.LockHygieneDriver;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.copy.CopyManager;
import org.postgresql.largeobject.LargeObject;
import org.postgresql.largeobject.LargeObjectManager;

/** Everything that is not about advisory locks behaves exactly as pgjdbc. */
@ExtendWith(TestBedExtension.class)
class TransparencyTest {
    private final TestBed bed = TestBed.shared();

    private Connection lh() throws SQLException {
        return bed.connectLockHygiene(Route.DIRECT);
    }

    @Test
    void identitiesAndUnwrap() throws Exception {
        try (Connection c = lh(); Statement s = c.createStatement()) {
            assertSame(c, s.getConnection());
            assertSame(c, c.getMetaData().getConnection());
            try (ResultSet rs = s.executeQuery("SELECT 1")) {
                assertSame(s, rs.getStatement());
                assertSame(rs, s.getResultSet());
            }
            PreparedStatement ps = c.prepareStatement("SELECT ?::int");
            ps.setInt(1, 5);
            try (ResultSet rs = ps.executeQuery()) {
                assertSame(ps, rs.getStatement());
                assertSame(c, ps.getConnection());
            }
            assertTrue(c.isWrapperFor(PGConnection.class));
            assertNotNull(c.unwrap(PGConnection.class).getBackendPID());
            assertTrue(s.isWrapperFor(org.postgresql.PGStatement.class));
            assertFalse(c.toString().contains(bed.endpoints().password()));
            assertEquals("PostgreSQL", c.getMetaData().getDatabaseProductName());
        }
    }

    @Test
    void batchesGeneratedKeysSavepointsCopyAndLargeObjects() throws Exception {
        try (Connection c = lh(); Statement s = c.createStatement()) {
            s.execute("CREATE TEMP TABLE t (id serial PRIMARY KEY, v text)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO t (v) VALUES (?)", Statement.RETURN_GENERATED_KEYS)) {
                ps.setString(1, "a");
                ps.addBatch();
                ps.setString(1, "b");
                ps.addBatch();
                assertArrayEquals(new int[] {1, 1}, ps.executeBatch());
                ps.setString(1, "c");
                ps.executeUpdate();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    assertTrue(keys.next());
                    assertEquals(3, keys.getInt(1));
                    assertSame(ps, keys.getStatement());
                }
            }
            CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
            assertEquals(2, copy.copyIn("COPY t (v) FROM STDIN", new StringReader("d\ne\n")));
            c.setAutoCommit(false);
            s.execute("INSERT INTO t (v) VALUES ('kept')");
            Savepoint sp = c.setSavepoint();
            s.execute("INSERT INTO t (v) VALUES ('rolled back')");
            c.rollback(sp);
            LargeObjectManager lom = c.unwrap(PGConnection.class).getLargeObjectAPI();
            long oid = lom.createLO();
            try (LargeObject lo = lom.open(oid, LargeObjectManager.WRITE)) {
                lo.write(new byte[] {1, 2, 3});
            }
            c.commit();
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM t")) {
                rs.next();
                assertEquals(6, rs.getInt(1));
            }
            c.setAutoCommit(true);
        }
    }

    @Test
    void listenNotifyNetworkTimeoutAndAbort() throws Exception {
        try (Connection c = lh(); Statement s = c.createStatement()) {
            s.execute("LISTEN lh_channel");
            s.execute("NOTIFY lh_channel, 'hello'");
            PGNotification[] n = c.unwrap(PGConnection.class).getNotifications(5_000);
            assertEquals("hello", n[0].getParameter());
            c.setNetworkTimeout(Executors.newSingleThreadExecutor(), 10_000);
            assertEquals(10_000, c.getNetworkTimeout());
            c.abort(Runnable::run);
            assertTrue(c.isClosed());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", ";"})
    void emptyAndWhitespaceSqlBehaveAsPgjdbc(String sql) throws Exception {
        assertEquals(outcome(bed.connect(Route.DIRECT), sql), outcome(lh(), sql));
    }

    @Test
    void nullSqlBehavesAsPgjdbc() throws Exception {
        assertEquals(outcome(bed.connect(Route.DIRECT), null), outcome(lh(), null));
    }

    private static String outcome(Connection c, String sql) {
        try (c; Statement s = c.createStatement()) {
            return "returned " + s.execute(sql) + " " + s.getUpdateCount();
        } catch (Exception e) {
            return e.getClass().getName() + ": " + e.getMessage();
        }
    }

    @Test
    void driverContractAndConfigurationErrors() throws Exception {
        LockHygieneDriver driver = (LockHygieneDriver) DriverManager.getDriver(bed.lockHygieneUrl(Route.DIRECT));
        assertTrue(driver.acceptsURL("jdbc:lockhygiene:postgresql://h/db"));
        assertFalse(driver.acceptsURL(bed.url(Route.DIRECT)));
        assertEquals(null, driver.connect(bed.url(Route.DIRECT), bed.credentials()), "not our URL: null, per contract");
        DriverPropertyInfo[] info = driver.getPropertyInfo(bed.lockHygieneUrl(Route.DIRECT, "lockhygiene.mode=rewrite"), new Properties());
        assertTrue(Arrays.stream(info).anyMatch(p -> p.name.equals("lockhygiene.mode") && p.value.equals("rewrite")));
        assertTrue(Arrays.stream(info).anyMatch(p -> p.name.equals("PGHOST")), "pgjdbc's own properties are there");

        Properties withPassword = bed.credentials();
        withPassword.setProperty("lockhygiene.mdoe", "rewrite");
        SQLException e = assertThrows(SQLException.class,
                () -> DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT), withPassword));
        assertTrue(e.getMessage().contains("lockhygiene.mdoe"), e.getMessage());
        assertFalse(e.getMessage().contains(bed.endpoints().password()));
        e = assertThrows(SQLException.class,
                () -> DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT, "lockhygiene.mode=loud"), bed.credentials()));
        assertTrue(e.getMessage().contains("emulate, detect, rewrite, strict, off"), e.getMessage());
    }

    /**
     * A connection that never met an advisory call is closed without a statement of ours: the return check
     * is not due, so it does not ask which pooling it is behind (that question, SELECT pg_backend_pid(), was
     * once sent at every such close). The server counts what it ran (pg_stat_statements), for a role of this
     * test's own (the shared server also serves other tests' connections, and a pool closed by an earlier
     * test may still be asking). A connection the default found direct is never asked again, not even when the
     * leak check sample takes one of its statements (that turn once asked: with the default rate 0.005 about one run
     * in 30 of this test saw one question more, the unexplained failure of earlier builds). The control: a connection of detect chosen by name that took a session lock is
     * asked about, and the count moves.
     */
    @Test
    void aConnectionThatMeetsNoAdvisoryCallIsClosedWithoutAStatementOfOurs() throws Exception {
        try (Connection admin = bed.connect(Route.DIRECT); Statement a = admin.createStatement()) {
            a.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            a.execute("DO $$BEGIN CREATE ROLE lh_transparency LOGIN PASSWORD 'transparency';"
                    + " EXCEPTION WHEN duplicate_object THEN NULL; END$$");
            Properties own = new Properties();
            own.setProperty("user", "lh_transparency");
            own.setProperty("password", "transparency");
            long first = pidQuestions(a);
            for (int i = 0; i < 3; i++) {
                try (Connection c = DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT), own);
                     Statement s = c.createStatement()) {
                    s.execute("SELECT 1");
                }
            }
            // the default (emulate) asks once per route, at its first connection, whether it is direct (then it
            // needs no lock holder); never again, and never at a close
            long asked = pidQuestions(a) - first;
            assertTrue(asked <= 1, "the default asked " + asked + " times for one route; the role's statements: "
                    + statementsOfTheRole(a));
            long before = pidQuestions(a);
            for (int i = 0; i < 3; i++) {
                try (Connection c = DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT), own);
                     Statement s = c.createStatement()) {
                    s.execute("SELECT 1");
                }
            }
            assertEquals(before, pidQuestions(a), "statements of ours at the close of untouched connections");
            // the control: detect chosen by name does not know the route (the default's answer is its own), so a
            // connection of it that met a lock call is asked about, and the count moves
            try (Connection c = DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT, "lockhygiene.mode=detect"), own);
                 Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_lock(950777)");
                s.execute("SELECT pg_advisory_unlock(950777)");
            }
            assertTrue(pidQuestions(a) > before, "control: a connection that met a lock call is asked about");
        }
    }

    /** What pg_stat_statements holds for this test's role, for a failure's message. */
    private static String statementsOfTheRole(Statement admin) throws SQLException {
        StringBuilder b = new StringBuilder();
        try (ResultSet rs = admin.executeQuery("SELECT calls, toplevel, query FROM pg_stat_statements WHERE userid ="
                + " (SELECT oid FROM pg_roles WHERE rolname = 'lh_transparency')")) {
            while (rs.next()) {
                b.append(" [").append(rs.getLong(1)).append(rs.getBoolean(2) ? "" : " nested").append("] ").append(rs.getString(3));
            }
        }
        return b.toString();
    }

    private static long pidQuestions(Statement admin) throws SQLException {
        try (ResultSet rs = admin.executeQuery("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements"
                + " WHERE query = 'SELECT pg_catalog.pg_backend_pid()'"
                + " AND userid = (SELECT oid FROM pg_roles WHERE rolname = 'lh_transparency')")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void countersAreOnJmx() throws Exception {
        javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        javax.management.ObjectName name = new javax.management.ObjectName("io.lockhygiene:type=LockHygiene");
        try (Connection c = lh(); Statement s = c.createStatement()) {
            s.execute("SELECT 1"); // the first guarded connection registers the bean (off the application's thread)
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
            while (!server.isRegistered(name) && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertTrue(server.isRegistered(name), "registered within 10 s");
            long before = (Long) server.getAttribute(name, "StatementsSeen");
            for (int i = 0; i < 5; i++) {
                s.execute("SELECT " + i);
            }
            long after = (Long) server.getAttribute(name, "StatementsSeen");
            assertTrue(after - before >= 5, "five statements more over JMX: " + before + " -> " + after);
        }
    }

    @Test
    void offModeHandsOutPgjdbcItself() throws Exception {
        try (Connection c = bed.connectLockHygiene(Route.DIRECT, "lockhygiene.mode=off")) {
            assertTrue(c instanceof PGConnection);
        }
    }

    @Test
    void theApplicationsOwnExceptionIsNeverReplaced() throws Exception {
        long k = 950_001;
        try (Connection plain = bed.connect(Route.TRANSACTION_POOL); Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL)) {
            String sql = "SELECT pg_advisory_lock(" + k + "), 1/0";
            String expected = message(plain, sql);
            assertEquals(expected, message(c, sql));
            assertEquals(0, bed.admin().holdersOf(k).size());
            assertTrue(c.getAutoCommit());
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                assertTrue(rs.next(), "the connection is usable afterwards");
            }
        }
    }

    private static String message(Connection c, String sql) {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
            return "no error";
        } catch (SQLException e) {
            return e.getSQLState() + " " + e.getMessage();
        }
    }
}
