package io.lockhygiene.internal.sql;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class SqlRewriterTest {

    private static String rewrite(String sql) {
        return SqlRewriter.toTransactionScoped(sql, SqlScanner.scan(sql));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "SELECT pg_advisory_lock(1)                     | SELECT pg_advisory_xact_lock(1) AS pg_advisory_lock",
            "SELECT pg_try_advisory_lock(1, 2)              | SELECT pg_try_advisory_xact_lock(1, 2) AS pg_try_advisory_lock",
            "SELECT pg_try_advisory_lock(1) AS got          | SELECT pg_try_advisory_xact_lock(1) AS got",
            "SELECT pg_try_advisory_lock(1) got             | SELECT pg_try_advisory_xact_lock(1) got",
            "SELECT pg_advisory_lock_shared(1), 2           | SELECT pg_advisory_xact_lock_shared(1) AS pg_advisory_lock_shared, 2",
            "SELECT 1, PG_CATALOG.PG_ADVISORY_UNLOCK(1)     | SELECT 1, PG_CATALOG.pg_try_advisory_xact_lock(1) AS pg_advisory_unlock",
            "SELECT pg_advisory_unlock_shared(1) FROM t     | SELECT pg_try_advisory_xact_lock_shared(1) AS pg_advisory_unlock_shared FROM t",
            "SELECT pg_advisory_unlock_all()                | SELECT pg_stat_clear_snapshot() AS pg_advisory_unlock_all",
            "SELECT \"pg_advisory_lock\"(1)                 | SELECT pg_advisory_xact_lock(1) AS pg_advisory_lock",
            "SELECT * FROM j WHERE pg_try_advisory_lock(id) | SELECT * FROM j WHERE pg_try_advisory_xact_lock(id)",
            "SELECT pg_try_advisory_lock(1) = true          | SELECT pg_try_advisory_xact_lock(1) = true",
            "SELECT f(pg_advisory_lock(1))                  | SELECT f(pg_advisory_xact_lock(1))",
            "SELECT pg_advisory_unlock(pg_advisory_lock(1)::text::bigint) | SELECT pg_try_advisory_xact_lock(pg_advisory_xact_lock(1)::text::bigint) AS pg_advisory_unlock",
            "SELECT pg_advisory_xact_lock(1)                | SELECT pg_advisory_xact_lock(1)",
    })
    void splicesNamesAndKeepsLabels(String sql, String expected) {
        assertEquals(expected, rewrite(sql));
    }

    @Test
    void keepsEverythingElseByteForByte() {
        String sql = "/* job */ SELECT  pg_try_advisory_lock ( 7742 ,hashtext('report-daily') ) ;\n-- end";
        assertEquals("/* job */ SELECT  pg_try_advisory_xact_lock ( 7742 ,hashtext('report-daily') ) AS pg_try_advisory_lock ;\n-- end",
                rewrite(sql));
    }

    @Test
    void textWithoutSessionCallsIsReturnedAsIs() {
        String sql = "SELECT 'pg_advisory_lock(1)'";
        assertSame(sql, rewrite(sql));
    }
}
