package io.lockhygiene.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A corpus of ordinary PostgreSQL (DDL, PL/pgSQL bodies, DO blocks, tagged dollar quotes, E'' and U&''
 * strings, nested comments, a psql-style script): the scanner finds nothing in it, and every statement
 * runs through the driver in detect mode with exactly the outcome plain pgjdbc gives.
 */
@ExtendWith(TestBedExtension.class)
class CorpusTest {
    private final TestBed bed = TestBed.shared();

    static String corpus() throws IOException {
        try (InputStream in = CorpusTest.class.getResourceAsStream("/corpus/realistic.sql")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** Split at top-level semicolons, as the scanner sees them (not inside strings, comments or bodies). */
    static List<String> statements(String script) {
        ScanResult r = SqlScanner.scan(script);
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int semi : r.semicolons()) {
            String s = script.substring(start, semi).trim();
            if (!s.isEmpty()) {
                out.add(s);
            }
            start = semi + 1;
        }
        if (!script.substring(start).trim().isEmpty()) {
            out.add(script.substring(start).trim());
        }
        return out;
    }

    @Test
    void theScannerFindsNoSessionCallInTheCorpus() throws IOException {
        String script = corpus();
        List<String> statements = statements(script);
        assertEquals(34, statements.size(), "statements split at top-level semicolons");
        for (String s : statements) {
            ScanResult r = SqlScanner.scan(s);
            assertTrue(!r.hasSessionLevelCall(), "false finding in: " + s);
            assertEquals(s.contains("ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED"), r.hasSkipLocked(), s);
        }
    }

    @Test
    void everyStatementRunsThroughDetectWithPlainPgjdbcsOutcome() throws Exception {
        List<String> statements = statements(corpus());
        List<String> plain = outcomes(bed.connect(Route.DIRECT), statements);
        try (EventRecorder events = EventRecorder.all()) {
            List<String> guarded = outcomes(bed.connectLockHygiene(Route.DIRECT, "lockhygiene.mode=detect"), statements);
            for (int i = 0; i < statements.size(); i++) {
                assertEquals(plain.get(i), guarded.get(i), "statement " + i + ": " + statements.get(i));
            }
            assertEquals(0, events.of(EventType.SESSION_LOCK_CALL).size() + events.of(EventType.LEAK_RELEASED).size()
                    + events.of(EventType.REJECTED).size());
        }
        assertTrue(plain.stream().anyMatch(o -> o.startsWith("ERROR 22012")), "the division by zero fails both ways");
    }

    private static List<String> outcomes(Connection c, List<String> statements) throws SQLException {
        List<String> out = new ArrayList<>();
        try (c; Statement s = c.createStatement()) {
            for (String sql : statements) {
                try {
                    boolean rs = s.execute(sql);
                    out.add(rs ? rows(s.getResultSet()) : "count " + s.getUpdateCount());
                } catch (SQLException e) {
                    out.add("ERROR " + e.getSQLState() + " " + e.getMessage());
                }
            }
        }
        return out;
    }

    private static String rows(ResultSet rs) throws SQLException {
        StringBuilder sb = new StringBuilder();
        ResultSetMetaData md = rs.getMetaData();
        for (int i = 1; i <= md.getColumnCount(); i++) {
            sb.append(md.getColumnLabel(i)).append(':').append(md.getColumnTypeName(i)).append(' ');
        }
        while (rs.next()) {
            sb.append('|');
            for (int i = 1; i <= md.getColumnCount(); i++) {
                sb.append(rs.getString(i)).append(';');
            }
        }
        rs.close();
        return sb.toString();
    }
}
