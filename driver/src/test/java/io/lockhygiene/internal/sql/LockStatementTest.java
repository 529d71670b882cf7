package io.lockhygiene.internal.sql;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

class LockStatementTest {
    private static LockStatement parse(String sql) {
        return LockStatement.parse(sql, SqlScanner.scan(sql));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT pg_try_advisory_lock(?)",
        "select pg_advisory_lock(42);",
        "  SELECT pg_catalog.pg_advisory_unlock(-9223372036854775808)  ",
        "SELECT pg_advisory_xact_lock(1, 2), pg_advisory_lock_shared(?)",
        "SELECT pg_advisory_unlock_all()",
        "SELECT pg_try_advisory_lock(?) AS got",
        "SELECT pg_try_advisory_lock(?) \"Got It\"",
        "SELECT pg_advisory_lock(7::bigint)",
        "SELECT \"pg_advisory_lock\"(7)"})
    void lockStatements(String sql) {
        assertNotNull(parse(sql), sql);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT pg_advisory_lock(id) FROM jobs",
        "SELECT pg_advisory_lock(hashtext('x'))",
        "SELECT pg_advisory_lock(1) FROM jobs",
        "SELECT pg_advisory_lock(1), now()",
        "SELECT now(), pg_advisory_lock(1)",
        "SELECT pg_advisory_lock(1),",
        "SELECT pg_advisory_lock(1) -- note",
        "SELECT pg_advisory_lock(3000000000, 1)",
        "SELECT pg_advisory_lock(1, 2::bigint)",
        "SELECT pg_advisory_lock(1); SELECT 1",
        "WITH x AS (SELECT 1) SELECT pg_advisory_lock(1)",
        "SELECT pg_advisory_lock(1) WHERE false",
        "SELECT pg_advisory_lock(1.5)",
        "SELECT pg_advisory_lock((1))",
        "SELECT pg_advisory_lock(1"})
    void notLockStatements(String sql) {
        assertNull(parse(sql), sql);
    }

    @org.junit.jupiter.api.Test
    void labelsAndArguments() {
        LockStatement s = parse("SELECT pg_try_advisory_lock(?, 5) AS Got, pg_advisory_unlock(?) \"X\"\"y\", pg_advisory_unlock_all()");
        assertEquals(3, s.items().size());
        assertEquals("got", s.items().get(0).label());
        assertEquals(1, s.items().get(0).arguments().get(0).parameter());
        assertEquals(5, s.items().get(0).arguments().get(1).literal());
        assertEquals("X\"y", s.items().get(1).label());
        assertEquals(2, s.items().get(1).arguments().get(0).parameter());
        assertEquals("pg_advisory_unlock_all", s.items().get(2).label());
        assertEquals(0, s.items().get(2).arguments().size());
    }
}
