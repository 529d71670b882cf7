package io.lockhygiene.internal.policy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.lockhygiene.internal.policy.Situation.TransactionStatus;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings.LeakCheck;
import io.lockhygiene.settings.Settings.Mode;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The decision table the guard runs: every input of {@link Situation}, read as the server reports it. */
class LockPolicyTest {

    @ParameterizedTest(name = "{0} | {1} pooling={2} autocommit={3} holder={4} {5} -> {6}")
    @CsvSource(delimiter = '|', value = {
            // statement                                        | status | txPool | autoCommit | holder holds | mode    | decision
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | true  | false | DETECT  | WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | false | false | DETECT  | PASS",
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | false | false | REWRITE | REWRITE",
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | true  | false | REWRITE | WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | true  | false | STRICT  | REJECT",
            "SELECT pg_try_advisory_lock_shared(1)              | OPEN   | true  | false | false | STRICT  | REJECT",
            "SELECT pg_advisory_unlock(1)                       | OPEN   | true  | false | false | STRICT  | PASS",
            "SELECT pg_advisory_unlock(1)                       | IDLE   | true  | true  | false | STRICT  | WRAP_IN_TRANSACTION",
            "SELECT pg_advisory_lock(1)                         | IDLE   | true  | true  | false | OFF     | PASS",
            "SELECT pg_advisory_lock(1)                         | IDLE   | false | true  | false | STRICT  | PASS",
            "SELECT pg_advisory_lock(1)                         | OPEN   | false | false | false | REWRITE | PASS",
            "SELECT pg_advisory_xact_lock(1)                    | OPEN   | true  | false | false | STRICT  | PASS",
            "SELECT 'pg_advisory_lock(1)'                       | IDLE   | true  | true  | false | STRICT  | PASS",
            "SELECT pg_try_advisory_lock(1)                     | IDLE   | true  | true  | false | EMULATE | EMULATE",
            "SELECT pg_advisory_unlock_all()                    | IDLE   | true  | false | false | EMULATE | EMULATE",
            "SELECT pg_try_advisory_lock(id) FROM jobs WHERE state = 1 LIMIT 1 | IDLE | true | true | false | EMULATE | EMULATE",
            "SELECT pg_try_advisory_lock(id) FROM jobs FOR UPDATE | IDLE | true  | true  | false | EMULATE | WRAP_IN_TRANSACTION",
            "INSERT INTO log SELECT pg_advisory_lock(1)         | OPEN   | true  | false | false | EMULATE | PASS",
            "SELECT pg_advisory_lock(1)                         | IDLE   | false | true  | false | EMULATE | PASS",
            // BEGIN sent as text: autocommit is still on, but the server says a transaction is open
            "SELECT pg_try_advisory_lock(77)                    | OPEN   | true  | true  | false | DETECT  | PASS",
            "SELECT pg_try_advisory_lock(77)                    | OPEN   | true  | true  | false | REWRITE | REWRITE",
            "SELECT pg_try_advisory_lock(77)                    | OPEN   | true  | true  | false | EMULATE | PASS",
            "SELECT pg_try_advisory_lock(77)                    | OPEN   | true  | true  | true  | EMULATE | EMULATE",
            // a failed transaction: PostgreSQL answers 25P02; nothing of ours is added
            "SELECT pg_try_advisory_lock(77)                    | FAILED | true  | true  | false | DETECT  | PASS",
            "SELECT pg_try_advisory_lock(77)                    | FAILED | true  | false | true  | EMULATE | PASS",
            "SELECT pg_try_advisory_lock(77)                    | FAILED | true  | false | false | STRICT  | PASS",
            // texts with their own transaction control are never wrapped in ours
            "BEGIN; SELECT pg_advisory_lock(1); COMMIT          | IDLE   | true  | true  | false | DETECT  | PASS",
            "BEGIN; SELECT pg_advisory_lock(1); COMMIT          | IDLE   | true  | true  | false | REWRITE | REWRITE",
            "SELECT pg_advisory_lock(1); COMMIT                 | IDLE   | true  | true  | false | REWRITE | PASS",
            "COMMIT AND CHAIN; SELECT pg_advisory_lock(1)       | OPEN   | true  | true  | false | REWRITE | REWRITE",
    })
    void table(String sql, TransactionStatus status, boolean txPool, boolean autoCommit, boolean holderHolds, Mode mode,
               Decision expected) {
        Situation where = new Situation(status, autoCommit, txPool, holderHolds);
        assertEquals(expected, LockPolicy.decide(SqlScanner.scan(sql), where, mode, LeakCheck.TRACKED, true));
    }

    @ParameterizedTest(name = "leakCheck={0} -> {1}")
    @CsvSource({"TRACKED, WRAP_IN_TRANSACTION", "ALWAYS, WRAP_IN_TRANSACTION", "NEVER, PASS"})
    void autocommitWrappingFollowsTheLeakCheckSetting(LeakCheck leakCheck, Decision expected) {
        Situation where = new Situation(TransactionStatus.IDLE, true, true, false);
        assertEquals(expected, LockPolicy.decide(SqlScanner.scan("SELECT pg_advisory_lock(1)"), where, Mode.DETECT,
                leakCheck, true));
    }

    @ParameterizedTest(name = "{0} autocommit={1} control={2} leakCheck={3} -> {4}")
    @CsvSource({
            "IDLE  , true , false, ALWAYS , WRAP_IN_TRANSACTION",
            "IDLE  , true , true , ALWAYS , PASS",
            "OPEN  , true , false, ALWAYS , PASS",
            "IDLE  , false, false, ALWAYS , PASS",
            "FAILED, true , false, ALWAYS , PASS",
            "IDLE  , true , false, TRACKED, PASS",
    })
    void leakCheckAlwaysWrapsEveryAutocommitStatement(TransactionStatus status, boolean autoCommit, boolean control,
                                                      LeakCheck leakCheck, Decision expected) {
        Situation where = new Situation(status, autoCommit, true, false);
        assertEquals(expected, LockPolicy.decideUnflagged(where, control, Mode.DETECT, leakCheck));
    }
}
