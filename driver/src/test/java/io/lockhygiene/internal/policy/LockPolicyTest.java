package io.lockhygiene.internal.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.lockhygiene.internal.policy.LockPolicy.Situation.TransactionStatus;
import io.lockhygiene.internal.policy.LockPolicy.Situation.Venue;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.shape.ShapeParser;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings.LeakCheck;
import io.lockhygiene.settings.Settings.Mode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one decision table the guard carries out: every input of {@link Situation}, read as the server
 * reports it, and the statement's shape under emulate, to the whole plan (what runs, wrapped or not).
 */
class LockPolicyTest {

    /** The shape the guard reads for a text with calls under emulate (the policy ignores it otherwise). */
    private static LockShape shapeOf(String sql, ScanResult scan) {
        return scan.calls().isEmpty() ? null : ShapeParser.parse(sql);
    }

    @ParameterizedTest(name = "{0} | {1} pooling={2} autocommit={3} venue={4} busy={5} {6} -> {7}")
    @CsvSource(delimiter = '|', value = {
            // statement                                         | status | txPool | autoCommit | venue     | owner busy | mode    | plan
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | true  | UNDECIDED | false | DETECT  | RECORD wrapped",
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | false | UNDECIDED | false | DETECT  | RECORD",
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | false | UNDECIDED | false | REWRITE | REWRITE",
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | true  | UNDECIDED | false | REWRITE | RECORD wrapped",
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | true  | UNDECIDED | false | STRICT  | REJECT",
            "SELECT pg_try_advisory_lock_shared(1)               | OPEN   | true  | false | UNDECIDED | false | STRICT  | REJECT",
            "SELECT pg_advisory_unlock(1)                        | OPEN   | true  | false | UNDECIDED | false | STRICT  | RECORD",
            "SELECT pg_advisory_unlock(1)                        | IDLE   | true  | true  | UNDECIDED | false | STRICT  | RECORD wrapped",
            "SELECT pg_advisory_lock(1)                          | IDLE   | true  | true  | UNDECIDED | false | OFF     | PASS",
            // session pooling or direct: legitimate, recorded for the check at return
            "SELECT pg_advisory_lock(1)                          | IDLE   | false | true  | UNDECIDED | false | STRICT  | RECORD",
            "SELECT pg_advisory_lock(1)                          | OPEN   | false | false | UNDECIDED | false | REWRITE | RECORD",
            "SELECT pg_advisory_xact_lock(1)                     | OPEN   | true  | false | UNDECIDED | false | STRICT  | PASS",
            "SELECT 'pg_advisory_lock(1)'                        | IDLE   | true  | true  | UNDECIDED | false | STRICT  | PASS",
            // emulate: every shape the table can follow is decided there, in and out of transactions
            "SELECT pg_try_advisory_lock(1)                      | IDLE   | true  | true  | UNDECIDED | false | EMULATE | EMULATE",
            "SELECT pg_try_advisory_lock(77)                     | OPEN   | true  | true  | UNDECIDED | false | EMULATE | EMULATE",
            "SELECT pg_advisory_lock(7742, hashtext('job'))      | OPEN   | true  | false | TABLE     | true  | EMULATE | EMULATE",
            "SELECT CASE WHEN pg_try_advisory_lock(5) THEN pg_advisory_unlock(5) ELSE false END | IDLE | true | true | UNDECIDED | false | EMULATE | EMULATE",
            "SELECT pg_try_advisory_lock(id) FROM jobs WHERE id = 1 | IDLE | true | true | UNDECIDED | false | EMULATE | EMULATE",
            "SELECT 1 AS one; SELECT pg_advisory_unlock(7)        | IDLE   | true  | true  | UNDECIDED | false | EMULATE | SPLIT wrapped",
            "SELECT 1 AS one; SELECT pg_advisory_unlock(7)        | OPEN   | true  | true  | TABLE     | false | EMULATE | SPLIT",
            "BEGIN; SELECT pg_advisory_xact_lock(7); COMMIT      | IDLE   | true  | true  | UNDECIDED | false | EMULATE | SPLIT",
            "SELECT pg_advisory_lock(?)                          | IDLE   | true  | true  | UNDECIDED | false | EMULATE | PASS",
            // shapes it cannot follow: transaction-level ones run on their own server while the owner holds nothing
            "SELECT * FROM jobs WHERE pg_try_advisory_xact_lock(id) LIMIT 1 | OPEN | true | false | UNDECIDED | false | EMULATE | ON_SERVER",
            "SELECT * FROM jobs WHERE pg_try_advisory_xact_lock(id) LIMIT 1 | OPEN | true | false | UNDECIDED | true  | EMULATE | REFUSE",
            "SELECT * FROM jobs WHERE pg_try_advisory_lock(id) LIMIT 1      | IDLE | true | true  | UNDECIDED | false | EMULATE | REFUSE",
            "UPDATE jobs SET locked = pg_try_advisory_lock(id)              | IDLE | true | true  | UNDECIDED | false | EMULATE | REFUSE",
            // once a transaction runs its calls on its own server, its later calls follow (session ones are refused)
            "SELECT pg_try_advisory_xact_lock(5)                 | OPEN   | true  | false | APPLICATION | false | EMULATE | ON_SERVER",
            "SELECT pg_try_advisory_lock(5)                      | OPEN   | true  | false | APPLICATION | false | EMULATE | REFUSE",
            "SELECT pg_advisory_lock(1)                          | IDLE   | false | true  | UNDECIDED | false | EMULATE | RECORD",
            // BEGIN sent as text: autocommit is still on, but the server says a transaction is open
            "SELECT pg_try_advisory_lock(77)                     | OPEN   | true  | true  | UNDECIDED | false | DETECT  | RECORD",
            "SELECT pg_try_advisory_lock(77)                     | OPEN   | true  | true  | UNDECIDED | false | REWRITE | REWRITE",
            // a failed transaction: PostgreSQL answers 25P02; nothing of ours is added
            "SELECT pg_try_advisory_lock(77)                     | FAILED | true  | true  | UNDECIDED | false | DETECT  | PASS",
            "SELECT pg_try_advisory_lock(77)                     | FAILED | true  | false | TABLE     | true  | EMULATE | PASS",
            "SELECT pg_try_advisory_lock(77)                     | FAILED | true  | false | UNDECIDED | false | STRICT  | PASS",
            // texts with their own transaction control are never wrapped in ours
            "BEGIN; SELECT pg_advisory_lock(1); COMMIT           | IDLE   | true  | true  | UNDECIDED | false | DETECT  | RECORD",
            "BEGIN; SELECT pg_advisory_lock(1); COMMIT           | IDLE   | true  | true  | UNDECIDED | false | REWRITE | REWRITE",
            "SELECT pg_advisory_lock(1); COMMIT                  | IDLE   | true  | true  | UNDECIDED | false | REWRITE | RECORD",
            "COMMIT AND CHAIN; SELECT pg_advisory_lock(1)        | OPEN   | true  | true  | UNDECIDED | false | REWRITE | REWRITE",
    })
    void table(String sql, TransactionStatus status, boolean txPool, boolean autoCommit, Venue venue, boolean busy,
               Mode mode, String expected) {
        ScanResult scan = SqlScanner.scan(sql);
        Situation where = new Situation(status, autoCommit, txPool, mode == Mode.EMULATE, venue, busy);
        Plan plan = LockPolicy.plan(scan, shapeOf(sql, scan), LockPolicy.Form.TEXT, false, where, mode, LeakCheck.TRACKED);
        assertEquals(expected, plan.action() + (plan.wrapped() ? " wrapped" : ""));
        if (plan.action() == Plan.Action.REFUSE) {
            assertNotNull(plan.refusal());
        }
    }

    @ParameterizedTest(name = "leakCheck={0} -> {1}")
    @CsvSource({"TRACKED, RECORD wrapped", "ALWAYS, RECORD wrapped", "NEVER, RECORD"})
    void autocommitLockCallsAreWrappedUnlessChecksAreOff(LeakCheck leakCheck, String expected) {
        Situation where = new Situation(TransactionStatus.IDLE, true, true);
        Plan plan = LockPolicy.plan(SqlScanner.scan("SELECT pg_advisory_lock(1)"), null, LockPolicy.Form.TEXT, false,
                where, Mode.DETECT, leakCheck);
        assertEquals(expected, plan.action() + (plan.wrapped() ? " wrapped" : ""));
    }

    @ParameterizedTest(name = "leakCheck={0}, autocommit={1} -> {2}")
    @CsvSource({"ALWAYS, true, PASS wrapped", "ALWAYS, false, PASS", "TRACKED, true, PASS"})
    void statementsWithoutCallsAreWrappedOnlyWhenEveryEndIsChecked(LeakCheck leakCheck, boolean autoCommit, String expected) {
        Situation where = new Situation(TransactionStatus.IDLE, autoCommit, true);
        Plan plan = LockPolicy.plan(SqlScanner.scan("SELECT 1"), null, LockPolicy.Form.TEXT, false, where, Mode.DETECT,
                leakCheck);
        assertEquals(expected, plan.action() + (plan.wrapped() ? " wrapped" : ""));
    }

    @ParameterizedTest(name = "check at {0}, leakCheck={1}, tracked={2}, transaction pooling={3} -> {4}")
    @CsvSource({
            "TRANSACTION_END, TRACKED, true,  true,  true",
            "TRANSACTION_END, TRACKED, false, true,  false",
            "TRANSACTION_END, ALWAYS,  false, true,  true",
            "TRANSACTION_END, NEVER,   true,  true,  false",
            "TRANSACTION_END, ALWAYS,  true,  false, false",
            "RETURN,          TRACKED, true,  false, true",
            "RETURN,          TRACKED, false, false, false",
            "RETURN,          ALWAYS,  false, false, true",
            "RETURN,          NEVER,   true,  false, false",
            "RETURN,          ALWAYS,  true,  true,  false"})
    void theCheckAtTheEnd(LockPolicy.CheckPoint at, LeakCheck leakCheck, boolean tracked, boolean pooling,
                          boolean due) {
        assertEquals(due, LockPolicy.checkDue(at, leakCheck, tracked, pooling));
    }

    @ParameterizedTest(name = "{0} as {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
            "SELECT pg_advisory_lock(1)                 | TEXT     | SUPPORTED",
            "SELECT pg_advisory_lock(?)                 | TEXT     | UNBOUND",
            "SELECT pg_advisory_lock(?)                 | PREPARED | SUPPORTED",
            "{call pg_advisory_lock(?)}                 | CALLABLE | SUPPORTED",
            "{call pg_advisory_lock(?)}                 | PREPARED | UNSUPPORTED",
            "SELECT pg_advisory_lock(?)                 | CALLABLE | UNSUPPORTED",
            "SELECT 1; SELECT pg_advisory_lock(1)       | TEXT     | SEVERAL",
            "UPDATE t SET x = pg_try_advisory_lock(1)   | TEXT     | UNSUPPORTED",
    })
    void shapesAreReadAsTheGuardReadsThem(String sql, LockPolicy.Form form, LockPolicy.Shape expected) {
        assertEquals(expected, LockPolicy.shapeOf(ShapeParser.parse(sql), form));
        assertEquals(LockPolicy.Shape.NONE, LockPolicy.shapeOf(null, form));
    }

    @ParameterizedTest(name = "{0} as {1} -> {2}")
    @CsvSource(delimiter = '|', value = {
            "SELECT 1; SELECT pg_advisory_unlock(7)   | TEXT     | SPLIT wrapped",
            "SELECT 1; SELECT pg_advisory_unlock(7)   | PREPARED | REFUSE",
            "SELECT pg_advisory_lock(?)               | PREPARED | EMULATE",
            "SELECT pg_advisory_lock(?)               | TEXT     | PASS",
            "{call pg_advisory_lock(?)}               | CALLABLE | EMULATE",
    })
    void theFormDecidesUnderEmulate(String sql, LockPolicy.Form form, String expected) {
        ScanResult scan = SqlScanner.scan(sql);
        Situation where = new Situation(TransactionStatus.IDLE, true, true, true, Venue.UNDECIDED, false);
        Plan plan = LockPolicy.plan(scan, ShapeParser.parse(sql), form, false, where, Mode.EMULATE, LeakCheck.TRACKED);
        assertEquals(expected, plan.action() + (plan.wrapped() ? " wrapped" : ""));
        if (plan.action() == Plan.Action.REFUSE) {
            assertEquals("several statements in one prepared statement", plan.refusal());
        }
    }

    @ParameterizedTest(name = "batch of {0}, {1}, pooling={2} -> {3}")
    @CsvSource(delimiter = '|', value = {
            "SELECT pg_advisory_lock(1)        | DETECT  | true  | RECORD wrapped",
            "SELECT pg_advisory_lock(1)        | DETECT  | false | RECORD",
            "SELECT pg_advisory_lock(1)        | EMULATE | true  | REFUSE",
            "SELECT pg_advisory_lock(1)        | EMULATE | false | RECORD",
            "SELECT pg_advisory_xact_lock(1)   | EMULATE | true  | ON_SERVER",
            "INSERT INTO t VALUES (1)          | EMULATE | true  | PASS",
    })
    void batchTexts(String sql, Mode mode, boolean pooling, String expected) {
        ScanResult scan = SqlScanner.scan(sql);
        Situation where = new Situation(TransactionStatus.IDLE, true, pooling, mode == Mode.EMULATE, Venue.UNDECIDED,
                false);
        io.lockhygiene.settings.Settings settings = io.lockhygiene.settings.Settings.builder().mode(mode).build();
        Plan plan = LockPolicy.inBatch(scan, scan.calls().isEmpty() ? null : ShapeParser.parse(sql), where, settings);
        assertEquals(expected, plan.action() + (plan.wrapped() ? " wrapped" : ""));
    }

    /**
     * The one rule for an owner's statement without advisory calls, which every front end asks: its own commit is
     * fenced, DISCARD ALL lets go, a COMMIT or ROLLBACK as text (alone, at a text's end, or a text's own BEGIN ...
     * COMMIT in autocommit) goes as the API's end with the fence.
     */
    @ParameterizedTest(name = "owner step of {0}, in transaction={1}, holds={2} -> {3}")
    @CsvSource(delimiter = '|', value = {
            "INSERT INTO t VALUES (1)                      | false | true  | FENCED",
            "INSERT INTO t VALUES (1)                      | false | false | AS_IS",
            "INSERT INTO t VALUES (1)                      | true  | true  | AS_IS",
            "select 1;                                     | false | true  | FENCED",
            "VACUUM t                                      | false | true  | AS_IS",
            "CREATE INDEX CONCURRENTLY i ON t (a)          | false | true  | AS_IS",
            "DISCARD ALL                                   | false | true  | LETS_GO_AFTER",
            "discard all;                                  | false | false | AS_IS",
            "COMMIT                                        | true  | true  | ENDS_TRANSACTION",
            "commit work;                                  | true  | false | ENDS_TRANSACTION",
            "ROLLBACK                                      | true  | true  | ENDS_TRANSACTION",
            "END                                           | true  | true  | ENDS_TRANSACTION",
            "COMMIT                                        | false | true  | AS_IS",
            "INSERT INTO t VALUES (1); COMMIT              | true  | true  | ENDS_TRANSACTION",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT       | false | true  | ENDS_TRANSACTION",
            "INSERT INTO t VALUES (1); COMMIT              | false | true  | FENCES_IN_TEXT",
            "INSERT INTO t VALUES (1); COMMIT              | false | false | AS_IS",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) | false | true | FENCED",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) | true | true | AS_IS",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2) | false | false | AS_IS",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT; SELECT 1 | false | true | FENCES_IN_TEXT",
            "BEGIN; INSERT INTO t VALUES (1); ROLLBACK; SELECT 1 | false | true | FENCES_IN_TEXT",
            "BEGIN; INSERT INTO t VALUES (1); ROLLBACK; BEGIN | false | true | AS_IS",
            "PREPARE TRANSACTION 'x'; SELECT 1             | true  | true  | FENCES_IN_TEXT",
            "COMMIT AND CHAIN                              | true  | true  | ENDS_TRANSACTION",
            "rollback and chain                            | true  | false | ENDS_TRANSACTION",
            "COMMIT AND CHAIN                              | false | true  | AS_IS",
            "COMMIT; INSERT INTO t VALUES (1)              | true  | true  | FENCES_IN_TEXT",
            "COMMIT; INSERT INTO t VALUES (1)              | true  | false | AS_IS",
            "SAVEPOINT a                                   | true  | true  | AS_IS",
            "/* COMMIT */ SELECT 'COMMIT'                  | true  | true  | AS_IS",
    })
    void anOwnersStatementWithoutCalls(String sql, boolean inTransaction, boolean holds, LockPolicy.OwnerStep expected) {
        assertEquals(expected, LockPolicy.ownerStep(LockPolicy.OwnerText.of(sql, SqlScanner.scan(sql)), inTransaction,
                holds));
    }

    /**
     * Where an owner's text keeps work, so its fence goes there: before each COMMIT, END, COMMIT AND CHAIN or PREPARE
     * TRANSACTION, and at the end of a text that ends in an implicit transaction; never before a failed transaction's
     * own end (its rollback).
     */
    @ParameterizedTest(name = "fence points of {0}, in transaction={1}, failed={2} -> {3}")
    @CsvSource(delimiter = '|', value = {
            "INSERT INTO t VALUES (1)                                   | false | false | ''",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)         | false | false | 2",
            "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)         | true  | false | ''",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT                    | false | false | 2",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT; SELECT 1          | false | false | 2 4",
            "BEGIN; INSERT INTO t VALUES (1); COMMIT; SELECT 1          | true  | false | 2 4",
            "BEGIN; INSERT INTO t VALUES (1); ROLLBACK; SELECT 1        | false | false | 4",
            "BEGIN; INSERT INTO t VALUES (1); ABORT                     | false | false | ''",
            "INSERT INTO t VALUES (1); COMMIT AND CHAIN; SELECT 1       | true  | false | 1",
            "INSERT INTO t VALUES (1); END; BEGIN; SELECT 1; COMMIT     | true  | false | 1 4",
            "PREPARE TRANSACTION 'x'; SELECT 1                          | true  | false | 0 2",
            "COMMIT; BEGIN; INSERT INTO t VALUES (1); COMMIT            | true  | true  | 3",
            "ROLLBACK TO SAVEPOINT a; INSERT INTO t VALUES (1); COMMIT  | true  | true  | 2",
            "COMMIT PREPARED 'x'; SELECT 1                              | false | false | 2",
    })
    void whereAnOwnersTextKeepsWork(String sql, boolean inTransaction, boolean failed, String expected) {
        int[] points = TextFences.points(SqlScanner.scan(sql), inTransaction, failed);
        assertEquals(expected, java.util.Arrays.stream(points).mapToObj(Integer::toString)
                .collect(java.util.stream.Collectors.joining(" ")));
    }

    @ParameterizedTest(name = "batch fenced: in transaction={0}, holds={1}, transaction control={2} -> {3}")
    @CsvSource({"false, true, false, true", "true, true, false, false", "false, false, false, false",
            "false, true, true, false"})
    void anOwnersAutocommitBatchIsFenced(boolean inTransaction, boolean holds, boolean control, boolean expected) {
        assertEquals(expected, LockPolicy.fencesBatch(inTransaction, holds, control));
    }

    /** A statement PostgreSQL refuses in a transaction block is never wrapped in one of ours; nothing else changes. */
    @org.junit.jupiter.api.Test
    void aStatementRefusedInATransactionBlockRunsAsItIs() {
        assertEquals(Plan.PASS, LockPolicy.asItIsWhereRefused(Plan.PASS_WRAPPED, true));
        assertEquals(Plan.RECORD, LockPolicy.asItIsWhereRefused(Plan.RECORD_WRAPPED, true));
        assertEquals(Plan.SPLIT_WRAPPED, LockPolicy.asItIsWhereRefused(Plan.SPLIT_WRAPPED, true),
                "several statements are one implicit transaction on PostgreSQL already");
        assertEquals(Plan.PASS_WRAPPED, LockPolicy.asItIsWhereRefused(Plan.PASS_WRAPPED, false));
        assertEquals(Plan.EMULATE, LockPolicy.asItIsWhereRefused(Plan.EMULATE, true));
    }
}
