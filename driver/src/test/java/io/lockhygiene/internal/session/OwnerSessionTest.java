package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.settings.Settings;

/**
 * The per-connection core's decisions, the same for every front end, without a server: what a plan asks before
 * anything is sent, and when the leak check rides in a transaction end or runs at a return.
 */
class OwnerSessionTest {
    private static final String LOCK = "SELECT pg_advisory_lock(42)";
    private static final ScanResult SCAN = SqlScanner.scan(LOCK);
    private static final Situation POOLED_AUTOCOMMIT = new Situation(Situation.TransactionStatus.IDLE, true, true);
    private static final Situation POOLED_OPEN = new Situation(Situation.TransactionStatus.OPEN, false, true);
    private static final Situation POOLED_FAILED = new Situation(Situation.TransactionStatus.FAILED, false, true);

    private static OwnerSession session(Settings.Builder settings) {
        return new OwnerSession(settings.build(), "lh-test", (io.lockhygiene.internal.holder.Holder) null, null);
    }

    @Test
    void strictRejectsBeforeAnythingIsSent() {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.STRICT));
        SQLException e = assertThrows(SQLException.class,
                () -> s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_AUTOCOMMIT));
        assertTrue(e.getMessage().contains("pg_advisory_lock"), e.getMessage());
        assertTrue(s.calls().isEmpty(), "a rejected call is not recorded: it never ran");
    }

    @Test
    void detectRecordsTheSessionLevelCallsThatAreSent() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT));
        Plan p = s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_OPEN);
        assertEquals(Plan.Action.RECORD, p.action());
        assertTrue(s.calls().isEmpty());
        s.beforeSend(p, LOCK, SCAN, POOLED_OPEN, null);
        assertFalse(s.calls().isEmpty(), "recorded for the leak check at the transaction's end");
        assertEquals("(checked because this transaction called session-level advisory functions)",
                s.checkAtTransactionEnd(true));
    }

    @Test
    void nothingIsRecordedInAFailedTransaction() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheckSample(0));
        Plan p = s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_FAILED);
        s.beforeSend(p, LOCK, SCAN, POOLED_FAILED, null);
        assertTrue(s.calls().isEmpty(), "the server runs nothing in a failed transaction (25P02)");
        assertNull(s.checkAtTransactionEnd(true));
    }

    @Test
    void rewriteSendsTransactionScopedCalls() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.REWRITE));
        Plan p = s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_OPEN);
        assertEquals(Plan.Action.REWRITE, p.action());
        String sent = s.rewritten(LOCK, SCAN, true);
        assertTrue(sent.contains("pg_advisory_xact_lock(42)"), sent);
        ScanResult sentScan = SqlScanner.scan(sent);
        s.beforeSend(p, LOCK, sentScan, POOLED_OPEN, null);
        assertTrue(s.calls().isEmpty(), "what is sent holds no session-level call to check for");
    }

    @Test
    void emulatesRefusalIsWordedOnce() {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.EMULATE));
        SQLException e = s.refuse("a reason of the test", LOCK);
        assertEquals("0A000", e.getSQLState());
        assertTrue(e.getMessage().contains("a reason of the test"), e.getMessage());
    }

    @Test
    void withoutEmulationTheOwnerStepIsAsItIs() {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT));
        assertFalse(s.emulates());
        assertFalse(s.ownerHolds());
        assertEquals(LockPolicy.OwnerStep.AS_IS, s.ownerStep(LockPolicy.OwnerText.of("COMMIT", SqlScanner.scan("COMMIT")), true));
        Situation where = s.situation(Situation.TransactionStatus.OPEN, false, true);
        assertFalse(where.emulating());
    }

    @Test
    void theLeakCheckAtATransactionEnd() {
        assertNull(session(Settings.builder().leakCheckSample(0)).checkAtTransactionEnd(true),
                "nothing recorded, no sample: not due");
        assertEquals("(found by a sampled check: lockhygiene.leakCheckSample=1.0)",
                session(Settings.builder().leakCheckSample(1)).checkAtTransactionEnd(true));
        assertNull(session(Settings.builder().leakCheckSample(1)).checkAtTransactionEnd(false),
                "the sample is for ends under transaction pooling only");
        assertEquals("(checked at every transaction end: lockhygiene.leakCheck=always)",
                session(Settings.builder().leakCheck(Settings.LeakCheck.ALWAYS).leakCheckSample(0))
                        .checkAtTransactionEnd(true));
        OwnerSession off = session(Settings.builder().mode(Settings.Mode.OFF).leakCheck(Settings.LeakCheck.ALWAYS));
        off.sampleNextEnd();
        assertNull(off.checkAtTransactionEnd(true), "off checks nothing");
    }

    /** The autocommit sample: its turns, and the COMMIT it marks (checked once, at the next end). */
    @Test
    void anAutocommitStatementTheSampleTookHasItsCommitChecked() {
        OwnerSession never = session(Settings.builder().leakCheckSample(0));
        assertFalse(never.autocommitSampleTurn(), "sample 0: no turn");
        OwnerSession every = session(Settings.builder().leakCheckSample(1).leakCheck(Settings.LeakCheck.TRACKED));
        assertTrue(every.autocommitSampleTurn(), "sample 1: every statement's turn");
        every.sampleNextEnd();
        assertEquals("(found by a sampled check: lockhygiene.leakCheckSample=1.0)", every.checkAtTransactionEnd(true),
                "the wrapping's COMMIT");
        OwnerSession sampled = session(Settings.builder().leakCheckSample(0.000001));
        sampled.sampleNextEnd();
        assertEquals("(found by a sampled check: lockhygiene.leakCheckSample=1.0E-6)", sampled.checkAtTransactionEnd(true));
        assertNull(sampled.checkAtTransactionEnd(true), "once: the next end is not marked");
    }

    @Test
    void theCheckAtAReturnAndWhatItFound() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT));
        assertFalse(s.checkDueAtReturn(), "a connection that called nothing is returned without a round trip");
        Situation direct = new Situation(Situation.TransactionStatus.IDLE, true, false);
        s.beforeSend(s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, direct), LOCK, SCAN, direct, null);
        assertTrue(s.checkDueAtReturn());
        s.checkedAtReturn(List.<HeldLock>of(), "when the test returned it", null);
        assertTrue(s.calls().isEmpty(), "a check clears the calls it looked for");
        assertTrue(session(Settings.builder().leakCheck(Settings.LeakCheck.ALWAYS)).checkDueAtReturn());
    }

    private static StatementStep.Kind step(OwnerSession s, String sql, Situation where, boolean sampled)
            throws SQLException {
        return StatementStep.decide(s, sql, SqlScanner.scan(sql), where, sampled).kind();
    }

    /**
     * What a statement without calls needs of a front end that sends a text as one statement (R2DBC's, a third's):
     * the core decides, the front end only sends.
     */
    @Test
    void aTextWithoutCallsInATransactionWithRecordedCallsUnderTransactionPooling() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheckSample(0));
        assertEquals(StatementStep.Kind.ENDS_BY_TEXT, step(s, "COMMIT", POOLED_OPEN, false),
                "an end alone is sent as the API's end, which decides the check itself");
        assertEquals(StatementStep.Kind.ENDS_UNCHECKED, step(s, "UPDATE t SET a = 1; COMMIT", POOLED_OPEN, false),
                "nothing recorded: no check due, the text as it is (nothing to say when it ended)");
        s.beforeSend(s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_OPEN), LOCK, SCAN, POOLED_OPEN, null);
        StatementStep checked = StatementStep.decide(s, "UPDATE t SET a = 1; COMMIT",
                SqlScanner.scan("UPDATE t SET a = 1; COMMIT"), POOLED_OPEN, false);
        assertEquals(StatementStep.Kind.CHECKED_TEXT, checked.kind());
        assertEquals("(checked because this transaction called session-level advisory functions)", checked.checkWhy());
        assertEquals(StatementStep.Kind.ENDS_UNCHECKED, step(s, "COMMIT; SELECT 1", POOLED_OPEN, false),
                "an end in the middle of the text: said once it ended unchecked");
        assertEquals(StatementStep.Kind.AS_IS, step(s, "SELECT 1", POOLED_OPEN, false));
        Situation directOpen = new Situation(Situation.TransactionStatus.OPEN, false, false);
        assertEquals(StatementStep.Kind.AS_IS, step(s, "COMMIT", directOpen, false),
                "a session of its own: the check waits for the return");
        assertEquals(StatementStep.Kind.AS_IS, step(s, null, POOLED_OPEN, false));
    }

    @Test
    void anAutocommitStatementTheSampleTookOrEveryEndCheckedRunsWrapped() throws SQLException {
        OwnerSession sampling = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheckSample(1)
                .leakCheck(Settings.LeakCheck.TRACKED));
        assertEquals(StatementStep.Kind.WRAPPED, step(sampling, "UPDATE t SET a = 1", POOLED_AUTOCOMMIT, true));
        assertEquals("(found by a sampled check: lockhygiene.leakCheckSample=1.0)", sampling.checkAtTransactionEnd(true),
                "the wrapping's COMMIT carries the sampled check");
        assertEquals(StatementStep.Kind.AS_IS, step(sampling, "VACUUM t", POOLED_AUTOCOMMIT, true),
                "PostgreSQL refuses VACUUM in a transaction block: the turn passes");
        assertEquals(StatementStep.Kind.AS_IS, step(sampling, "UPDATE t SET a = 1", POOLED_AUTOCOMMIT, false));
        OwnerSession always = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheck(Settings.LeakCheck.ALWAYS));
        assertEquals(StatementStep.Kind.WRAPPED, step(always, "UPDATE t SET a = 1", POOLED_AUTOCOMMIT, false));
    }

    @Test
    void aTextWithCallsThatEndsItsTransactionCarriesTheCheckAfterItsEnd() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheckSample(0));
        String text = "SELECT pg_advisory_lock(42); COMMIT";
        ScanResult scan = SqlScanner.scan(text);
        s.beforeSend(s.plan(text, scan, null, LockPolicy.Form.TEXT, false, POOLED_OPEN), text, scan, POOLED_OPEN, null);
        assertEquals("(checked because this transaction called session-level advisory functions)",
                StatementStep.checkAfterTextEnd(s, scan, POOLED_OPEN));
        assertNull(StatementStep.checkAfterTextEnd(s, scan, new Situation(Situation.TransactionStatus.OPEN, false, false)),
                "a session of its own");
        assertNull(StatementStep.checkAfterTextEnd(s, SCAN, POOLED_OPEN), "one statement: no end in it");
        String own = "BEGIN; SELECT pg_advisory_lock(42); COMMIT";
        assertEquals("(checked because this transaction called session-level advisory functions)",
                StatementStep.checkAfterTextEnd(s, SqlScanner.scan(own), POOLED_AUTOCOMMIT), "a transaction the text opens itself");
        assertNull(StatementStep.checkAfterTextEnd(s, SqlScanner.scan("SELECT pg_advisory_lock(42); SELECT 1"), POOLED_AUTOCOMMIT));
    }

    @Test
    void aStatementThePrefilterPassedIsLookedAtWhileAnEndOfItsMayCarryTheCheck() throws SQLException {
        OwnerSession s = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheckSample(0));
        assertFalse(StatementStep.looksAtUnflagged(s, "COMMIT", true, true), "nothing recorded: nothing to check at the end");
        s.beforeSend(s.plan(LOCK, SCAN, null, LockPolicy.Form.TEXT, false, POOLED_OPEN), LOCK, SCAN, POOLED_OPEN, null);
        assertTrue(StatementStep.looksAtUnflagged(s, "COMMIT", true, true));
        assertTrue(StatementStep.looksAtUnflagged(s, "UPDATE t SET a = 1; COMMIT", true, true));
        assertFalse(StatementStep.looksAtUnflagged(s, "UPDATE t SET a = 1", true, true), "cannot end the transaction");
        assertFalse(StatementStep.looksAtUnflagged(s, "COMMIT", true, false), "a session of its own: the check waits for the return");
        assertFalse(StatementStep.looksAtUnflagged(s, null, true, true));
        OwnerSession always = session(Settings.builder().mode(Settings.Mode.DETECT).leakCheck(Settings.LeakCheck.ALWAYS));
        assertTrue(StatementStep.looksAtUnflagged(always, "UPDATE t SET a = 1", false, true), "its own transaction, checked");
        assertFalse(StatementStep.looksAtUnflagged(always, "UPDATE t SET a = 1", true, true));
        assertTrue(StatementStep.looksAtUnflagged(always, "COMMIT", true, true));
        assertFalse(StatementStep.looksAtUnflagged(always, "UPDATE t SET a = 1", false, false));
        assertFalse(StatementStep.looksAtUnflagged(session(Settings.builder().mode(Settings.Mode.OFF)
                .leakCheck(Settings.LeakCheck.ALWAYS)), "COMMIT", true, true), "off");
    }
}
