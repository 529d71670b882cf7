package io.lockhygiene.it.semantics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.internal.sql.SqlScanner;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * PostgreSQL's own regression file for advisory locks, statement by statement, against direct
 * PostgreSQL with plain pgjdbc (the reference) and through the transaction-mode PgBouncer with
 * {@code emulate}: every statement's rows, warnings and errors must be equal. Run with transactions as
 * text (as the file has them) and through the JDBC API. Every statement has a query timeout: the first
 * version waited for itself forever at "holding both session and xact locks ..., session first".
 */
@ExtendWith(TestBedExtension.class)
class AdvisoryRegressionFileTest {
    private static final int STATEMENT_TIMEOUT_SECONDS = 10;
    private final TestBed bed = TestBed.shared();

    /** How the file's BEGIN / COMMIT / ROLLBACK are sent. */
    enum Style { TEXT, JDBC_API }

    static List<String> statements() throws IOException {
        String file;
        try (InputStream in = AdvisoryRegressionFileTest.class.getResourceAsStream("/postgres-regress/advisory_lock.sql")) {
            file = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        // psql's \gset stores the database oid in :datoid; SQL computes the same value in place. The file's
        // pg_locks queries list every advisory lock of the database; a lock holder's sessions also hold their
        // seal (one two-int lock each, classid Seals.CLASSID, what fenced commits check): not the file's locks,
        // so those queries pass it over, in the reference run as in ours (where there is none to pass over).
        file = file.replace("SELECT oid AS datoid FROM pg_database WHERE datname = current_database() \\gset\n", "")
                .replace(":datoid", "(SELECT oid FROM pg_database WHERE datname = current_database())")
                .replace("FROM pg_locks WHERE locktype = 'advisory'", "FROM pg_locks WHERE locktype = 'advisory'"
                        + " AND NOT (objsubid = 2 AND classid = " + io.lockhygiene.internal.sql.Seals.CLASSID + ")");
        List<String> statements = new ArrayList<>();
        int from = 0;
        for (int semicolon : SqlScanner.scan(file).semicolons()) {
            String sql = file.substring(from, semicolon).strip();
            from = semicolon + 1;
            if (!sql.lines().allMatch(l -> l.isBlank() || l.strip().startsWith("--"))) {
                statements.add(sql.lines().filter(l -> !l.strip().startsWith("--")).reduce((a, b) -> a + "\n" + b)
                        .orElse("").strip());
            }
        }
        return statements;
    }

    static List<String> run(Connection c, Style style) throws Exception {
        List<String> outcomes = new ArrayList<>();
        try (Statement s = c.createStatement()) {
            s.setQueryTimeout(STATEMENT_TIMEOUT_SECONDS);
            for (String sql : statements()) {
                outcomes.add(sql.replaceAll("\\s+", " ") + " => " + outcome(c, s, sql, style));
            }
        }
        return outcomes;
    }

    private static String outcome(Connection c, Statement s, String sql, Style style) {
        try {
            if (style == Style.JDBC_API) {
                switch (sql) {
                    case "BEGIN":
                        c.setAutoCommit(false);
                        return "ok";
                    case "COMMIT":
                        c.commit();
                        c.setAutoCommit(true);
                        return "ok";
                    case "ROLLBACK":
                        c.rollback();
                        c.setAutoCommit(true);
                        return "ok";
                    default:
                        break;
                }
            }
            StringBuilder out = new StringBuilder();
            if (s.execute(sql)) {
                try (ResultSet rs = s.getResultSet()) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        out.append('(');
                        for (int i = 1; i <= n; i++) {
                            out.append(i > 1 ? "," : "").append(rs.getString(i));
                        }
                        out.append(')');
                    }
                }
            } else {
                out.append(style == Style.TEXT ? "ok" : "count " + s.getUpdateCount());
            }
            for (SQLWarning w = s.getWarnings(); w != null; w = w.getNextWarning()) {
                out.append(" WARNING ").append(w.getMessage());
            }
            s.clearWarnings();
            return out.toString();
        } catch (SQLException e) {
            return "ERROR " + e.getSQLState() + " " + e.getMessage();
        }
    }

    /**
     * Each style of running the file, through the system's PgBouncer and through one of 1.21 or later, with
     * the holder's one main session (the default); and through the system's with its keys spread over three.
     */
    static Stream<Arguments> stylesAndPoolers() {
        return Stream.concat(Stream.of(Route.TRANSACTION_POOL, Route.PREPARED_TRANSACTION_POOL)
                .flatMap(route -> Stream.of(Style.values()).map(style -> Arguments.of(style, route, 1))),
                Stream.of(Style.values()).map(style -> Arguments.of(style, Route.TRANSACTION_POOL, 3)));
    }

    @ParameterizedTest(name = "{0} through {1}, {2} holder session(s)")
    @MethodSource("stylesAndPoolers")
    void emulateThroughTheTransactionPoolerAnswersAsPostgreSqlDoes(Style style, Route pooler, int holderSessions)
            throws Exception {
        List<String> reference;
        try (Connection direct = bed.connect(Route.DIRECT)) {
            reference = run(direct, style);
        }
        List<String> ours;
        io.lockhygiene.it.bed.Holders.reset(); // a holder made with this run's holderSessions
        try (Connection c = bed.connectLockHygiene(pooler, "lockhygiene.mode=emulate",
                "lockhygiene.holderSessions=" + holderSessions)) {
            ours = run(c, style);
        } finally {
            io.lockhygiene.it.bed.Holders.reset();
        }
        for (int i = 0; i < reference.size(); i++) {
            assertEquals(reference.get(i), ours.get(i), "statement " + (i + 1) + " of advisory_lock.sql (" + style + ")");
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "nothing left held");
    }
}
