package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.List;

import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.settings.Settings;
import org.junit.jupiter.api.Test;

/**
 * A transaction end without emulation: what rides along, what is sent, and what the connection keeps after it went
 * through or failed (the fenced ends run in the ITs, through every front end).
 */
class TransactionEndTest {
    private static final String LOCK = "SELECT pg_advisory_lock(42)";
    private static final Situation OPEN = new Situation(Situation.TransactionStatus.OPEN, false, true);

    private static OwnerSession session() {
        return new OwnerSession(Settings.builder().mode(Settings.Mode.DETECT).build(), "lh-test",
                (io.lockhygiene.internal.holder.Holder) null, null);
    }

    /** A session that sent one session-level call in its open transaction (recorded for the leak check). */
    private static OwnerSession withARecordedCall() throws SQLException {
        OwnerSession s = session();
        Plan p = s.plan(LOCK, SqlScanner.scan(LOCK), null, LockPolicy.Form.TEXT, false, OPEN);
        s.beforeSend(p, LOCK, SqlScanner.scan(LOCK), OPEN, null);
        assertFalse(s.calls().isEmpty());
        return s;
    }

    @Test
    void anEndWithNothingDueIsTheDriversOwn() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(session(), "COMMIT", true, null);
        assertTrue(end.plain());
        assertFalse(end.fenced());
        assertEquals("COMMIT", end.text());
    }

    @Test
    void aCheckedEndListsAndReleasesInItsOwnRoundTrip() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(session(), "ROLLBACK", false, "(checked)");
        assertFalse(end.plain());
        assertTrue(end.checked());
        assertEquals(PgLocks.atTransactionEnd("ROLLBACK"), end.text());
        assertEquals("ROLLBACK", end.command());
    }

    @Test
    void anUnfencedEndsFailureIsItsOwn() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(session(), "COMMIT", true, "(checked)");
        assertNull(end.lossOf(new SQLException("could not serialize access", "40001")),
                "the application's commit would have thrown it: it is not the loss");
        assertNull(end.failed(new SQLException("could not serialize access", "40001"), true));
    }

    @Test
    void aCheckedEndThatWentThroughReportsAndForgetsTheTransactionsCalls() throws SQLException {
        OwnerSession s = withARecordedCall();
        TransactionEnd end = TransactionEnd.decide(s, "COMMIT", true, s.checkAtTransactionEnd(true));
        assertTrue(end.checked());
        end.succeeded(List.of(), true, null);
        assertTrue(s.calls().isEmpty(), "checked: the next transaction starts with nothing recorded");
    }

    @Test
    void aFailedCheckedEndForgetsTheCallsToo() throws SQLException {
        OwnerSession s = withARecordedCall();
        TransactionEnd end = TransactionEnd.decide(s, "COMMIT", true, s.checkAtTransactionEnd(true));
        assertNull(end.failed(new SQLException("deferred constraint", "23505"), false));
        assertTrue(s.calls().isEmpty(), "the transaction is over either way");
    }

    @Test
    void aPlainEndWithASessionOfItsOwnKeepsTheCallsForTheReturn() throws SQLException {
        OwnerSession s = withARecordedCall();
        TransactionEnd end = TransactionEnd.decide(s, "COMMIT", true, null);
        assertTrue(end.plain());
        end.succeeded(null, false, null);
        assertFalse(s.calls().isEmpty(), "no pooler: its session lock is still on its session, checked at the return");
        assertNull(end.failed(new SQLException("serialization", "40001"), false));
        assertFalse(s.calls().isEmpty());
        end.succeeded(null, true, null);
        assertTrue(s.calls().isEmpty(), "under transaction pooling the server is no longer the connection's");
    }
}
