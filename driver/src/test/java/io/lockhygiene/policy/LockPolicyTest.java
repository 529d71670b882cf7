package io.lockhygiene.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lockhygiene.settings.Settings.Mode;
import io.lockhygiene.sql.SqlScanner;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LockPolicyTest {

    @ParameterizedTest(name = "{0} pooling={1} autocommit={2} {3} -> {4}")
    @CsvSource({
            // statement                           , txPool, autoCommit, mode   , decision
            "SELECT pg_advisory_lock(1)            , true  , true , DETECT , WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)            , true  , false, DETECT , PASS",
            "SELECT pg_advisory_lock(1)            , true  , false, REWRITE, REWRITE",
            "SELECT pg_advisory_lock(1)            , true  , true , REWRITE, WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)            , true  , true , STRICT , REJECT",
            "SELECT pg_try_advisory_lock_shared(1) , true  , false, STRICT , REJECT",
            "SELECT pg_advisory_unlock(1)          , true  , false, STRICT , PASS",
            "SELECT pg_advisory_unlock(1)          , true  , true , STRICT , WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)            , true  , true , OFF    , PASS",
            "SELECT pg_advisory_lock(1)            , false, true , STRICT , PASS",
            "SELECT pg_advisory_lock(1)            , false, false, REWRITE, PASS",
            "SELECT pg_advisory_xact_lock(1)       , true  , false, STRICT , PASS",
            "SELECT 'pg_advisory_lock(1)'          , true  , true , STRICT , PASS",
            "SELECT pg_try_advisory_lock(1)        , true  , true , EMULATE, EMULATE",
            "SELECT pg_advisory_unlock_all()       , true  , false, EMULATE, EMULATE",
            "SELECT pg_try_advisory_lock(id) FROM jobs WHERE state = 1 LIMIT 1, true, true, EMULATE, EMULATE",
            "SELECT pg_try_advisory_lock(id) FROM jobs FOR UPDATE, true, true, EMULATE, WRAP_IN_TRANSACTION",
            "INSERT INTO log SELECT pg_advisory_lock(1), true  , false, EMULATE, PASS",
            "SELECT pg_advisory_lock(1)            , false, true , EMULATE, PASS",
    })
    void table(String sql, boolean txPool, boolean autoCommit, Mode mode, Decision expected) {
        assertEquals(expected, LockPolicy.decide(SqlScanner.scan(sql), txPool, autoCommit, mode));
    }
}
