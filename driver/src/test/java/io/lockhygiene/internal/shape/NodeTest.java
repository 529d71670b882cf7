package io.lockhygiene.internal.shape;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Select-list expressions as the shape parser builds them: their type (what the answer's column is), the
 * column name PostgreSQL derives, and whether the lock table can tell their value itself.
 */
class NodeTest {

    private static Node item(String sql) {
        LockShape s = ShapeParser.parse(sql);
        if (!s.isSupported()) {
            throw new AssertionError(sql + ": " + s.unsupported());
        }
        return s.items().get(0).expr();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "SELECT pg_try_advisory_lock(1)                            | BOOL    | pg_try_advisory_lock | true",
            "SELECT pg_advisory_lock(1)                                | VOID    | pg_advisory_lock     | true",
            "SELECT pg_advisory_unlock_all()                           | VOID    | pg_advisory_unlock_all | true",
            "SELECT pg_catalog.pg_advisory_unlock(1)                   | BOOL    | pg_advisory_unlock   | true",
            "SELECT NOT pg_try_advisory_lock(1)                        | BOOL    | ?column?             | true",
            "SELECT pg_try_advisory_lock(1) AND pg_try_advisory_lock(2) | BOOL   | ?column?             | true",
            "SELECT CASE WHEN pg_try_advisory_lock(1) THEN pg_advisory_unlock(1) END | BOOL | case     | true",
            "SELECT CASE WHEN pg_try_advisory_lock(1) THEN true ELSE pg_advisory_unlock(1) END | BOOL | pg_advisory_unlock | true",
            "SELECT CASE WHEN pg_try_advisory_lock(1) THEN 1 ELSE 2 END | OTHER  | case                 | false",
            "SELECT pg_try_advisory_lock(1)::text                      | OTHER   | pg_try_advisory_lock | false",
            "SELECT pg_advisory_lock(1)::text                          | OTHER   | pg_advisory_lock     | false",
            "SELECT cast(pg_try_advisory_lock(1) as boolean)           | OTHER   | pg_try_advisory_lock | false",
    })
    void typesNamesAndWhatTheTableCanTell(String sql, Node.Type type, String column, boolean decidable) {
        Node n = item(sql);
        assertEquals(type, n.type(), sql);
        assertEquals(column, n.columnName(), sql);
        assertEquals(decidable, Node.decidable(n), sql);
    }
}
