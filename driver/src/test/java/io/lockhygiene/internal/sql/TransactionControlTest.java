package io.lockhygiene.internal.sql;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.stream.Collectors;

import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The scanner's view of BEGIN / COMMIT / ROLLBACK [TO] / SAVEPOINT written as text. */
class TransactionControlTest {

    private static String kinds(String sql) {
        return SqlScanner.scan(sql).transactionControls().stream().map(t -> t.kind().name())
                .collect(Collectors.joining(","));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "BEGIN                                             | BEGIN",
            "begin transaction isolation level serializable    | BEGIN",
            "START TRANSACTION READ ONLY                        | BEGIN",
            "COMMIT                                            | END",
            "commit work                                       | END",
            "END                                               | END",
            "ROLLBACK                                          | END",
            "abort                                             | END",
            "COMMIT AND CHAIN                                  | END_AND_CHAIN",
            "ROLLBACK TRANSACTION AND CHAIN                    | END_AND_CHAIN",
            "COMMIT AND NO CHAIN                               | END",
            "ROLLBACK TO SAVEPOINT s1                          | ROLLBACK_TO",
            "rollback work to s1                               | ROLLBACK_TO",
            "SAVEPOINT s1                                      | SAVEPOINT",
            "RELEASE SAVEPOINT s1                              | RELEASE",
            "PREPARE TRANSACTION 'x'                           | END",
            "COMMIT PREPARED 'x'                               | ~~",
            "SELECT 'COMMIT'                                   | ~~",
            "SELECT begin FROM t                               | ~~",
            "BEGIN; SELECT pg_advisory_lock(1); COMMIT;        | BEGIN,END",
            "/* c */ ROLLBACK                                  | END",
    })
    void classifies(String sql, String expected) {
        assertEquals(expected == null ? "" : expected, kinds(sql));
    }

    @Test
    void commentsAndCodeBodiesAreNotTransactionControl() {
        assertEquals("", kinds("-- COMMIT\nSELECT 1"));
        assertEquals("", kinds("DO $$BEGIN PERFORM 1; COMMIT; END$$"));
        assertEquals("", kinds("CREATE PROCEDURE p() LANGUAGE plpgsql AS $b$ BEGIN COMMIT; END $b$"));
    }

    @Test
    void aFinalEndIsTheLastStatementOnly() {
        assertNotNull(SqlScanner.scan("BEGIN; SELECT 1; COMMIT").finalTransactionEnd());
        assertNotNull(SqlScanner.scan("ROLLBACK;  ").finalTransactionEnd());
        assertNull(SqlScanner.scan("COMMIT; SELECT 1").finalTransactionEnd());
        assertNull(SqlScanner.scan("COMMIT AND CHAIN").finalTransactionEnd());
        assertNull(SqlScanner.scan("ROLLBACK TO s").finalTransactionEnd());
        TransactionControl end = SqlScanner.scan("BEGIN; INSERT INTO t VALUES (1); ROLLBACK").finalTransactionEnd();
        assertEquals(2, end.statementIndex());
        assertEquals("ROLLBACK", "BEGIN; INSERT INTO t VALUES (1); ROLLBACK".substring(end.start(), end.end()));
    }

    @Test
    void callsFollowTheTextsOwnTransactions() {
        ScanResult scan = SqlScanner.scan(
                "SELECT pg_advisory_lock(1); BEGIN; SELECT pg_advisory_lock(2); COMMIT; SELECT pg_advisory_lock(3)");
        assertArrayEquals(new boolean[] {false, true, false}, scan.callsInTransaction(false));
        assertArrayEquals(new boolean[] {true, true, false}, scan.callsInTransaction(true));
        String rewritten = SqlRewriter.toTransactionScoped(
                "SELECT pg_advisory_lock(1); BEGIN; SELECT pg_advisory_lock(2); COMMIT; SELECT pg_advisory_lock(3)",
                scan, scan.callsInTransaction(false));
        assertEquals("SELECT pg_advisory_lock(1); BEGIN; SELECT pg_advisory_xact_lock(2) AS pg_advisory_lock; COMMIT;"
                + " SELECT pg_advisory_lock(3)", rewritten);
    }

    private static String savepointOf(String sql) {
        TransactionControl tc = SqlScanner.scan(sql).transactionControls().get(0);
        return tc.savepointName(sql);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "SAVEPOINT s1                          | s1",
            "savepoint S1;                         | s1",
            "SAVEPOINT \"S1\"                       | S1",
            "SAVEPOINT \"a\"\"b\"                     | a\"b",
            "SAVEPOINT \"b\"                        | b",
            "SAVEPOINT \"a b\" -- why            | a b",
            "ROLLBACK TO SAVEPOINT \"x;y\"          | x;y",
            "rollback work to s2                   | s2",
            "RELEASE SAVEPOINT /* c */ s3 ;        | s3",
            "release \"Ünï\"                        | Ünï",
    })
    void savepointNamesAreReadAsPostgreSqlNamesThem(String sql, String name) {
        assertEquals(name, savepointOf(sql));
    }

    @Test
    void aQuotedNameWithADoubledQuoteIsNotItsTail() {
        assertNotEquals(savepointOf("SAVEPOINT b"), savepointOf("SAVEPOINT \"a\"\"b\""));
        assertEquals(savepointOf("SAVEPOINT b"), savepointOf("SAVEPOINT \"b\""));
        assertEquals(savepointOf("SAVEPOINT b"), savepointOf("SAVEPOINT B"));
        assertNotEquals(savepointOf("SAVEPOINT b"), savepointOf("SAVEPOINT \"B\""));
        assertEquals("", savepointOf("SAVEPOINT"));
    }

    /** R2DBC's look at a text's first word, before it reads the text: an end's word, whole, after white space. */
    @Test
    void aTextThatMayStartWithAnEnd() {
        for (String sql : new String[] {"COMMIT", "  end;", "rollback", "ABORT", "Commit and chain", "end\n"}) {
            org.junit.jupiter.api.Assertions.assertTrue(TransactionControl.mayStartWithEnd(sql), sql);
        }
        for (String sql : new String[] {"committed", "SELECT 1; COMMIT", "ending", "", "begin", "abortion"}) {
            org.junit.jupiter.api.Assertions.assertFalse(TransactionControl.mayStartWithEnd(sql), sql);
        }
    }

    /** One end and nothing else, chained or not; PREPARE TRANSACTION and longer texts are not. */
    @Test
    void aSoleEnd() {
        for (String sql : new String[] {"COMMIT", "end;", "ROLLBACK AND CHAIN", "abort"}) {
            org.junit.jupiter.api.Assertions.assertTrue(TransactionControl.isSoleEnd(SqlScanner.scan(sql), sql), sql);
        }
        for (String sql : new String[] {"PREPARE TRANSACTION 'x'", "SELECT 1; COMMIT", "SELECT 1", "BEGIN"}) {
            org.junit.jupiter.api.Assertions.assertFalse(TransactionControl.isSoleEnd(SqlScanner.scan(sql), sql), sql);
        }
    }
}
