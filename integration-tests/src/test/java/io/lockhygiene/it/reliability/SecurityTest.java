package io.lockhygiene.it.reliability;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * No password, in any form of URL or Properties, in a log line, exception message, event or toString();
 * logSql=none keeps SQL text out of every output.
 */
@ExtendWith(TestBedExtension.class)
class SecurityTest {
    private final TestBed bed = TestBed.shared();

    /** Runs the body with stdout and stderr captured (slf4j-simple writes to System.err). */
    private static String captured(ThrowingRunnable body) throws Exception {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8);
        System.setOut(capture);
        System.setErr(capture);
        try {
            body.run();
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static String describe(LockHygieneEvent e) {
        return e.type() + "|" + e.key() + "|" + e.sql() + "|" + e.message() + "|" + e.function() + "|" + e.connectionId();
    }

    @Test
    void passwordsNeverAppear() throws Exception {
        String password = bed.endpoints().password();
        StringBuilder everything = new StringBuilder();
        try (EventRecorder events = EventRecorder.all()) {
            everything.append(captured(() -> {
                String inUrl = bed.lockHygieneUrl(Route.TRANSACTION_POOL) + "&user=" + bed.endpoints().user() + "&password=" + password;
                try (Connection c = DriverManager.getConnection(inUrl); Statement s = c.createStatement()) {
                    everything.append(c).append(s);
                    s.execute("SELECT pg_advisory_lock(996400)"); // leak report at statement end
                }
                Properties bad = bed.credentials();
                bad.setProperty("lockhygiene.mode", "loud");
                SQLException e1 = assertThrows(SQLException.class, () -> DriverManager.getConnection(inUrl + "&lockhygiene.mdoe=x"));
                SQLException e2 = assertThrows(SQLException.class, () -> DriverManager.getConnection(bed.lockHygieneUrl(Route.DIRECT), bad));
                SQLException e3 = assertThrows(SQLException.class, () -> DriverManager.getConnection(
                        "jdbc:lockhygiene:postgresql://127.0.0.1:1/x?connectTimeout=2&password=" + password));
                try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=strict");
                     Statement s = c.createStatement()) {
                    SQLException e4 = assertThrows(SQLException.class, () -> s.execute("SELECT pg_advisory_lock(996401)"));
                    everything.append(e4).append(e4.getMessage());
                }
                PGSimpleDataSource simple = new PGSimpleDataSource();
                simple.setURL(bed.url(Route.DIRECT));
                simple.setUser(bed.endpoints().user());
                simple.setPassword(password);
                LockHygieneDataSource ds = new LockHygieneDataSource(simple);
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    everything.append(ds).append(c).append(s);
                    s.execute("SELECT pg_advisory_lock(996402)"); // reported at return
                }
                everything.append(e1.getMessage()).append(e2.getMessage()).append(e3.getMessage());
            }));
            for (LockHygieneEvent e : events.events()) {
                everything.append(describe(e));
            }
            assertTrue(everything.toString().contains("996400"), "the leak was reported: " + everything);
        }
        assertFalse(everything.toString().contains(password), everything.toString());
    }

    @Test
    void logSqlNoneKeepsSqlOutOfEveryOutput() throws Exception {
        String marker = "SECRET_SQL_MARKER";
        StringBuilder everything = new StringBuilder();
        try (EventRecorder events = EventRecorder.all()) {
            everything.append(captured(() -> {
                try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.logSql=none");
                     Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_lock(996410) /* " + marker + " */");
                }
                try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.logSql=none",
                        "lockhygiene.mode=strict"); Statement s = c.createStatement()) {
                    SQLException e = assertThrows(SQLException.class,
                            () -> s.execute("SELECT pg_advisory_lock(996411) /* " + marker + " */"));
                    everything.append(e.getMessage());
                }
                try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.logSql=none",
                        "lockhygiene.mode=rewrite"); Statement s = c.createStatement()) {
                    c.setAutoCommit(false);
                    s.execute("SELECT pg_advisory_lock(996412) /* " + marker + " */");
                    c.commit();
                }
            }));
            for (LockHygieneEvent e : events.events()) {
                everything.append(describe(e));
            }
            assertTrue(everything.toString().contains("996410") || everything.toString().contains("LEAK_RELEASED"),
                    "something was reported: " + everything);
        }
        assertFalse(everything.toString().contains(marker), everything.toString());
    }
}
