package io.lockhygiene.internal.policy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;

import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import org.junit.jupiter.api.Test;

/** The two ways a front end sends an owner's fenced text: spliced into the one text, or cut into pieces. */
class TextFencesTest {
    private static final String FENCE = "SELECT fence";

    private static String spliced(String sql, boolean inTransaction) {
        ScanResult scan = SqlScanner.scan(sql);
        return TextFences.spliced(sql, scan, TextFences.points(scan, inTransaction, false), FENCE);
    }

    private static List<String> pieces(String sql, boolean inTransaction) {
        ScanResult scan = SqlScanner.scan(sql);
        return TextFences.pieces(sql, scan, TextFences.points(scan, inTransaction, false));
    }

    @Test
    void aFenceGoesBeforeEachEndThatKeepsWorkAndAfterAnImplicitTransactionAtTheEnd() {
        assertEquals("BEGIN; INSERT INTO t VALUES (1); SELECT fence;\nCOMMIT; SELECT 1\n;\nSELECT fence",
                spliced("BEGIN; INSERT INTO t VALUES (1); COMMIT; SELECT 1", false));
        assertEquals("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);\nSELECT fence",
                spliced("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);", false));
        assertEquals("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) -- two;\n;\nSELECT fence",
                spliced("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) -- two;", false));
        assertEquals("INSERT INTO t VALUES (1); SELECT fence;\nCOMMIT AND CHAIN; INSERT INTO t VALUES (2)",
                spliced("INSERT INTO t VALUES (1); COMMIT AND CHAIN; INSERT INTO t VALUES (2)", true));
        assertEquals("BEGIN; INSERT INTO t VALUES (1); ROLLBACK", spliced("BEGIN; INSERT INTO t VALUES (1); ROLLBACK", false));
    }

    @Test
    void eachFencesResultIsOnePastTheStatementsBeforeItAndTheFencesBeforeIt() {
        assertArrayEquals(new long[] {2, 5}, TextFences.resultIndices(new int[] {2, 4}));
        assertArrayEquals(new long[] {0, 2}, TextFences.resultIndices(new int[] {0, 1}));
    }

    @Test
    void piecesAreCutAroundEachPointAndBeforeTheAutocommitStatementsAtTheEnd() {
        assertEquals(Arrays.asList("BEGIN; INSERT INTO t VALUES (1); ", "COMMIT;", " SELECT 1; SELECT 2"),
                pieces("BEGIN; INSERT INTO t VALUES (1); COMMIT; SELECT 1; SELECT 2", false));
        assertEquals(Arrays.asList("INSERT INTO t VALUES (1); ", "COMMIT;", " INSERT INTO t VALUES (2)"),
                pieces("INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2)", true));
        assertEquals(Arrays.asList("BEGIN; INSERT INTO t VALUES (1); ROLLBACK;", " INSERT INTO t VALUES (2)"),
                pieces("BEGIN; INSERT INTO t VALUES (1); ROLLBACK; INSERT INTO t VALUES (2)", false));
        assertEquals(Arrays.asList("PREPARE TRANSACTION 'x';", " SELECT 1"),
                pieces("PREPARE TRANSACTION 'x'; SELECT 1", true));
        assertEquals(Arrays.asList("COMMIT;"), pieces("COMMIT;  ", true));
    }
}
