package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The texts of several statements whose commits emulate fences (the owner holds an emulated lock): what the
 * application sees of them is what plain pgjdbc on PostgreSQL shows, step by step (each result in order, the
 * error's SQLState, the warnings, whether a transaction is open after it, and what the table holds), though
 * LockHygiene runs them in a transaction of its own (several statements in autocommit) or in pieces cut at their
 * commits (a COMMIT before the text's end). The reference runs the same steps directly on PostgreSQL with a real
 * session lock.
 */
@ExtendWith(TestBedExtension.class)
class OwnersTextsTest {
    private final TestBed bed = TestBed.shared();

    /** Each step: a text, or "autocommit off"/"autocommit on"/"commit()". */
    private static final String[] STEPS = {
            "INSERT INTO {t} VALUES (1); INSERT INTO {t} VALUES (2)",
            "INSERT INTO {t} VALUES (1)",
            "BEGIN; INSERT INTO {t} VALUES (3); COMMIT; SELECT 1",
            "INSERT INTO {t} VALUES (4); COMMIT; SELECT 2",
            "BEGIN; INSERT INTO {t} VALUES (5); ROLLBACK; INSERT INTO {t} VALUES (6)",
            "SELECT 1; SELECT 2",
            "UPDATE {t} SET v = v WHERE v < 0; SELECT count(*) FROM {t}",
            "INSERT INTO {t} VALUES (9); SELECT 1/0; INSERT INTO {t} VALUES (10)",
            "BEGIN; INSERT INTO {t} VALUES (11); COMMIT; SELECT 1/0",
            "BEGIN; INSERT INTO {t} VALUES (12); COMMIT; BEGIN; INSERT INTO {t} VALUES (13); COMMIT",
            "autocommit off",
            "INSERT INTO {t} VALUES (14); COMMIT; INSERT INTO {t} VALUES (15)",
            "INSERT INTO {t} VALUES (16); COMMIT AND CHAIN; INSERT INTO {t} VALUES (17)",
            "commit()",
            "INSERT INTO {t} VALUES (18); SELECT 1/0",
            "COMMIT; INSERT INTO {t} VALUES (19); COMMIT; SELECT 3",
            "autocommit on",
            "INSERT INTO {t} VALUES (20); INSERT INTO {t} VALUES (20)",
    };

    @Test
    void anOwnersFencedTextsShowWhatPlainPgjdbcShowsOnPostgres() throws Exception {
        List<String> reference;
        try (Connection c = bed.connect(Route.DIRECT)) {
            reference = run(c, "owners_texts_direct", 1_993_001);
        }
        List<String> ours;
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")) {
            ours = run(c, "owners_texts_ours", 1_993_002);
        }
        for (int i = 0; i < Math.max(reference.size(), ours.size()); i++) {
            String want = i < reference.size() ? reference.get(i) : "(nothing)";
            String got = i < ours.size() ? ours.get(i) : "(nothing)";
            assertEquals(want, got, "step " + i + " differs from PostgreSQL's; all steps:\n" + String.join("\n", ours));
        }
        System.out.println("[owners texts] " + ours.size() + " steps as on PostgreSQL");
    }

    private List<String> run(Connection c, String table, long key) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + table);
            s.execute("CREATE TABLE " + table + " (v int UNIQUE)");
            s.execute("SELECT pg_advisory_lock(" + key + ")");
        }
        List<String> out = new ArrayList<>();
        for (String step : STEPS) {
            String sql = step.replace("{t}", table);
            StringBuilder seen = new StringBuilder(step).append(" -> ");
            try (Statement s = c.createStatement()) {
                if (step.equals("autocommit off") || step.equals("autocommit on")) {
                    c.setAutoCommit(step.endsWith("on"));
                } else if (step.equals("commit()")) {
                    c.commit();
                } else {
                    results(s, sql, seen);
                }
                warnings(s.getWarnings(), seen);
            } catch (SQLException e) {
                seen.append("error ").append(e.getSQLState());
                if (!c.getAutoCommit()) {
                    c.rollback(); // as an application would; the next step starts clean
                    seen.append(", rolled back");
                }
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT coalesce(string_agg(v::text, ',' ORDER BY v), '') FROM " + table)) {
                rs.next();
                seen.append(" | table ").append(rs.getString(1));
            }
            out.add(seen.toString());
        }
        try (Statement s = c.createStatement()) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            s.execute("SELECT pg_advisory_unlock(" + key + ")");
            s.execute("DROP TABLE " + table);
        }
        return out;
    }

    private static void results(Statement s, String sql, StringBuilder seen) throws SQLException {
        boolean rows = s.execute(sql);
        while (true) {
            if (rows) {
                try (ResultSet rs = s.getResultSet()) {
                    seen.append("rows[");
                    while (rs.next()) {
                        seen.append(rs.getString(1)).append(' ');
                    }
                    seen.append("] ");
                }
            } else {
                int count = s.getUpdateCount();
                if (count == -1) {
                    return;
                }
                seen.append("count ").append(count).append(' ');
            }
            rows = s.getMoreResults();
        }
    }

    private static void warnings(SQLWarning w, StringBuilder seen) {
        for (; w != null; w = w.getNextWarning()) {
            seen.append("warning ").append(w.getSQLState()).append(' ');
        }
    }
}
