package io.lockhygiene.internal.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Collectors;

import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SqlScannerTest {

    private static String found(String sql) {
        return SqlScanner.scan(sql).calls().stream()
                .map(c -> c.function().sqlName() + "/" + c.argCount())
                .collect(Collectors.joining(","));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "SELECT pg_advisory_lock(1)                                    | pg_advisory_lock/1",
            "select PG_ADVISORY_LOCK(1)                                    | pg_advisory_lock/1",
            "SELECT Pg_Try_Advisory_Lock(1, 2)                             | pg_try_advisory_lock/2",
            "SELECT pg_advisory_lock(7742, hashtext('report-daily'))       | pg_advisory_lock/2",
            "SELECT pg_try_advisory_lock(hashtext('a,b'))                  | pg_try_advisory_lock/1",
            "SELECT pg_catalog.pg_advisory_lock(1)                         | pg_advisory_lock/1",
            "SELECT \"pg_catalog\".\"pg_advisory_lock\"(1)                 | pg_advisory_lock/1",
            "SELECT PG_CATALOG . pg_advisory_lock (1)                      | pg_advisory_lock/1",
            "SELECT \"pg_advisory_lock\"(1)                                | pg_advisory_lock/1",
            "SELECT pg_advisory_lock /* why */ (1)                         | pg_advisory_lock/1",
            "~SELECT pg_advisory_lock -- c\n (1)~                          | pg_advisory_lock/1",
            "SELECT pg_advisory_lock($1)                                   | pg_advisory_lock/1",
            "SELECT pg_try_advisory_lock(?, ?)                             | pg_try_advisory_lock/2",
            "SELECT pg_advisory_lock_shared(1)                             | pg_advisory_lock_shared/1",
            "SELECT pg_try_advisory_lock_shared(1)                         | pg_try_advisory_lock_shared/1",
            "SELECT pg_advisory_unlock(1)                                  | pg_advisory_unlock/1",
            "SELECT pg_advisory_unlock_shared(1)                           | pg_advisory_unlock_shared/1",
            "SELECT pg_advisory_unlock_all()                               | pg_advisory_unlock_all/0",
            "SELECT pg_advisory_xact_lock(1)                               | pg_advisory_xact_lock/1",
            "WITH l AS (SELECT pg_try_advisory_lock(id) ok FROM jobs) SELECT * FROM l | pg_try_advisory_lock/1",
            "SELECT * FROM jobs WHERE pg_try_advisory_lock(jobs.id) LIMIT 1 | pg_try_advisory_lock/1",
            "SELECT x FROM (SELECT pg_advisory_lock(1) x) s                | pg_advisory_lock/1",
            "SELECT 'pg_advisory_lock(1)', pg_advisory_unlock(1)           | pg_advisory_unlock/1",
            "SELECT E'it\\'s pg_advisory_lock(1)', pg_advisory_lock(2)     | pg_advisory_lock/1",
            "SELECT $x$ pg_advisory_lock(1) $x$, pg_advisory_lock(2)       | pg_advisory_lock/1",
            "SELECT pg_advisory_unlock(pg_advisory_lock(1)::text::bigint)  | pg_advisory_unlock/1,pg_advisory_lock/1",
            "SELECT pg_advisory_lock(1); SELECT pg_advisory_unlock(1)      | pg_advisory_lock/1,pg_advisory_unlock/1",
    })
    void findsCalls(String sql, String expected) {
        assertEquals(expected, found(sql));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {
            "SELECT 'pg_advisory_lock(1)'",
            "SELECT 'it''s pg_advisory_lock(1)'",
            "SELECT E'\\' pg_advisory_lock(1) '",
            "SELECT e'\\\\', 'pg_advisory_lock(1)'",
            "SELECT $$ pg_advisory_lock(1) $$",
            "SELECT $body$ SELECT pg_advisory_lock(1); $body$",
            "DO $$ BEGIN PERFORM pg_advisory_lock(1); END $$",
            "SELECT 1 -- pg_advisory_lock(1)",
            "SELECT 1 /* pg_advisory_lock(1) */",
            "SELECT 1 /* outer /* nested */ pg_advisory_lock(1) */",
            "SELECT \"PG_ADVISORY_LOCK\"(1)",
            "SELECT my_pg_advisory_lock(1)",
            "SELECT pg_advisory_lock_count(1)",
            "SELECT myschema.pg_advisory_lock(1)",
            "SELECT \"pg_advisory_lock(1)\" FROM t",
            "SELECT pg_advisory_lock FROM t",
            "SELECT 1 AS advisory",
            "SELECT foo$pg_advisory_lock(1)",
            "SELECT 'unterminated pg_advisory_lock(1)",
            "SELECT $tag$ unterminated pg_advisory_lock(1)",
            "SELECT 1 /* unterminated pg_advisory_lock(1)",
            "SELECT U&'pg_advisory_lock(1)'",
            "SELECT B'1010', X'ff' -- pg_advisory_lock(1)",
    })
    void ignoresNonCalls(String sql) {
        assertEquals("", found(sql));
    }

    @Test
    void dollarParameterIsNotADollarQuote() {
        assertEquals("pg_advisory_lock/1", found("SELECT $1, pg_advisory_lock($2)"));
    }

    @Test
    void nullEmptyAndWhitespaceAreNothing() {
        assertSame(ScanResult.NOTHING, SqlScanner.scan(null));
        assertSame(ScanResult.NOTHING, SqlScanner.scan(""));
        assertSame(ScanResult.NOTHING, SqlScanner.scan("   \n"));
        assertFalse(SqlScanner.mightMatter(null));
        assertFalse(SqlScanner.mightMatter(""));
    }

    @Test
    void prefilterIsCaseInsensitiveAndCheap() {
        assertTrue(SqlScanner.mightMatter("select PG_ADVISORY_LOCK(1)"));
        assertTrue(SqlScanner.mightMatter("... FOR UPDATE SKIP LOCKED"));
        assertFalse(SqlScanner.mightMatter("SELECT * FROM accounts WHERE id = 1 FOR UPDATE"));
        assertFalse(SqlScanner.mightMatter("advisor"));
        assertFalse(SqlScanner.mightMatter("ADVISORY"), "every advisory function's name also says lock");
        assertTrue(SqlScanner.mightMatter("ADVISORY LOCK"));
        assertTrue(SqlScanner.mightMatter("select pg_catalog.Pg_Try_Advisory_Xact_Lock_Shared(1)"));
        assertTrue(SqlScanner.mightMatter("select pg_advisory_unlock_all()"));
        assertTrue(SqlScanner.mightMatter("sKiP lOcKeD"));
        assertFalse(SqlScanner.mightMatter("UPDATE t SET lock_version = lock_version + 1 WHERE id = ?"),
                "a text that says lock but neither advisory nor skip cannot matter");
        assertFalse(SqlScanner.mightMatter("skip"));
        assertFalse(SqlScanner.mightMatter("k"));
        assertFalse(SqlScanner.mightMatter("ock"));
        for (io.lockhygiene.internal.sql.AdvisoryFunction f : io.lockhygiene.internal.sql.AdvisoryFunction.values()) {
            assertTrue(SqlScanner.mightMatter("SELECT " + f.sqlName() + "(1)"), f.sqlName());
            assertTrue(SqlScanner.mightMatter("SELECT " + f.sqlName().toUpperCase(java.util.Locale.ROOT) + "(1)"));
        }
    }

    @Test
    void skipLockedOutsideStringsAndComments() {
        assertTrue(SqlScanner.scan("SELECT * FROM q FOR UPDATE SKIP /* c */ LOCKED").hasSkipLocked());
        assertFalse(SqlScanner.scan("SELECT 'SKIP LOCKED' -- skip locked").hasSkipLocked());
    }

    @Test
    void positionsPointAtTheName() {
        String sql = "SELECT pg_catalog.\"pg_advisory_lock\"(1, 2)";
        AdvisoryCall c = SqlScanner.scan(sql).calls().get(0);
        assertEquals("\"pg_advisory_lock\"", sql.substring(c.nameStart(), c.nameEnd()));
        assertEquals("1, 2", c.argumentText(sql));
    }

    @Test
    void sessionFlags() {
        ScanResult r = SqlScanner.scan("SELECT pg_advisory_xact_lock(1)");
        assertFalse(r.hasSessionLevelCall());
        r = SqlScanner.scan("SELECT pg_advisory_unlock(1)");
        assertTrue(r.hasSessionLevelCall());
        assertFalse(r.hasSessionAcquire());
        assertTrue(SqlScanner.scan("SELECT pg_try_advisory_lock_shared(1)").hasSessionAcquire());
    }

    @Test
    void hugeAndPathologicalInputsStayLinear() {
        String big = "SELECT '" + "x".repeat(5_000_000) + "', pg_advisory_lock(1)";
        assertEquals(List.of(AdvisoryFunction.LOCK),
                SqlScanner.scan(big).calls().stream().map(AdvisoryCall::function).collect(Collectors.toList()));
        String parens = "(".repeat(100_000) + "pg_advisory_lock(1" + ")".repeat(100_000);
        assertEquals(1, SqlScanner.scan(parens).calls().size());
        String dollars = "$a$".repeat(100_001);
        SqlScanner.scan(dollars);
        String comments = "/*".repeat(200_000);
        assertEquals(0, SqlScanner.scan(comments).calls().size());
    }

    @Test
    void writesAndStatementCounts() {
        assertFalse(SqlScanner.scan("SELECT pg_try_advisory_lock(id) FROM jobs WHERE state = 'new' LIMIT 1").hasWrites());
        assertTrue(SqlScanner.scan("WITH x AS (SELECT pg_advisory_lock(1)) UPDATE t SET a = 1").hasWrites());
        assertTrue(SqlScanner.scan("SELECT pg_advisory_lock(id) FROM jobs FOR UPDATE").hasWrites());
        assertTrue(SqlScanner.scan("INSERT INTO t SELECT pg_advisory_lock(1)").hasWrites());
        assertFalse(SqlScanner.scan("SELECT pg_advisory_lock(1) -- then update").hasWrites());
        assertEquals(1, SqlScanner.scan("SELECT pg_advisory_lock(1);").statementCount());
        assertEquals(2, SqlScanner.scan("SELECT pg_advisory_lock(1); SELECT 2").statementCount());
        assertTrue(SqlScanner.scan("SELECT pg_advisory_lock(1)").hasBlockingAcquire());
        assertFalse(SqlScanner.scan("SELECT pg_try_advisory_lock(1)").hasBlockingAcquire());
    }

    @Test
    void findsCodeBodiesOfDoBlocksAndRoutinesButNotOtherDollarQuotes() {
        String sql = "DO $$ BEGIN PERFORM pg_advisory_lock(1); END $$; SELECT $x$ not code $x$;"
                + " CREATE OR REPLACE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $fn$ BEGIN PERFORM pg_advisory_lock(2); END $fn$;"
                + " DO LANGUAGE plpgsql $d$ BEGIN END $d$";
        ScanResult r = SqlScanner.scan(sql);
        List<String> bodies = r.codeBodies().stream().map(b -> sql.substring(b[0], b[1])).collect(Collectors.toList());
        assertEquals(List.of(" BEGIN PERFORM pg_advisory_lock(1); END ", " BEGIN PERFORM pg_advisory_lock(2); END ", " BEGIN END "),
                bodies);
        assertEquals(List.of(), r.calls(), "calls inside bodies are not statement-level calls");
        assertEquals(3, r.semicolons().size());
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "DISCARD ALL               | true",
            "discard all;              | true",
            "~  Discard\n\tAll ;  -- c~ | true",
            "DISCARD /* x */ ALL       | true",
            "DISCARD ALL; SELECT 1     | false",
            "DISCARD PLANS             | false",
            "DISCARD                   | false",
            "SELECT 'DISCARD ALL'      | false",
            "DISCARDALL                | false",
            "~~                        | false",
    })
    void discardAllAloneIsRecognised(String sql, boolean expected) {
        assertEquals(expected, SqlScanner.discardsAll(sql == null ? "" : sql));
    }

    @Test
    void discardAllOfNullIsNo() {
        assertFalse(SqlScanner.discardsAll(null));
    }

    /** What no transaction of ours may go around (leakCheck=always, the sample): PostgreSQL refuses it in a block. */
    @ParameterizedTest
    @ValueSource(strings = {"VACUUM", "vacuum (analyze) t", "CREATE INDEX CONCURRENTLY i ON t (a)",
        "create unique index concurrently if not exists i on t (a)", "DROP INDEX CONCURRENTLY IF EXISTS i",
        "REINDEX TABLE CONCURRENTLY t", "REINDEX (VERBOSE) INDEX CONCURRENTLY i", "REINDEX DATABASE app",
        "REINDEX SYSTEM", "CREATE DATABASE x", "DROP DATABASE x", "CREATE TABLESPACE s LOCATION '/x'",
        "DROP TABLESPACE s", "ALTER SYSTEM SET work_mem = '8MB'", "CREATE SUBSCRIPTION s CONNECTION '' PUBLICATION p",
        "ALTER SUBSCRIPTION s REFRESH PUBLICATION", "DROP SUBSCRIPTION s", "CLUSTER", "cluster verbose;",
        "DISCARD ALL", "COMMIT PREPARED 'x'", "ROLLBACK PREPARED 'x'", "CALL run_job(1)",
        "DO $$ BEGIN PERFORM 1; COMMIT; END $$", "do $$begin rollback; end$$", "  /* c */ VACUUM t"})
    void statementsPostgresRefusesInATransactionBlock(String sql) {
        assertTrue(SqlScanner.refusesTransactionBlock(sql), sql);
    }

    @ParameterizedTest
    @ValueSource(strings = {"SELECT 1", "INSERT INTO t VALUES (1)", "CREATE INDEX i ON t (a)", "CREATE UNIQUE INDEX i ON t (a)",
        "DROP INDEX i", "REINDEX TABLE t", "CLUSTER t USING i", "CREATE TABLE t (a int)", "ALTER TABLE t ADD b int",
        "DO $$ BEGIN PERFORM pg_advisory_lock(1); END $$", "DISCARD PLANS", "COMMIT", "REFRESH MATERIALIZED VIEW CONCURRENTLY v",
        "TRUNCATE t", "", "'vacuum'"})
    void statementsThatRunInATransactionBlock(String sql) {
        assertFalse(SqlScanner.refusesTransactionBlock(sql), sql);
    }
}
