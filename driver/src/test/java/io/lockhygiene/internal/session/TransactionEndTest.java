package io.lockhygiene.internal.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;

import io.lockhygiene.internal.leak.PgLocks;
import org.junit.jupiter.api.Test;

/** A transaction end without emulation: what rides along and what is sent (the fenced ends run in the ITs). */
class TransactionEndTest {
    @Test
    void anEndWithNothingDueIsTheDriversOwn() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(null, "COMMIT", true, false);
        assertTrue(end.plain());
        assertFalse(end.fenced());
        assertEquals("COMMIT", end.text(null));
    }

    @Test
    void aCheckedEndListsAndReleasesInItsOwnRoundTrip() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(null, "ROLLBACK", false, true);
        assertFalse(end.plain());
        assertTrue(end.checked());
        assertEquals(PgLocks.atTransactionEnd("ROLLBACK"), end.text(null));
        assertEquals("ROLLBACK", end.command());
    }

    @Test
    void anUnfencedEndsFailureIsItsOwn() throws SQLException {
        TransactionEnd end = TransactionEnd.decide(null, "COMMIT", true, true);
        assertNull(end.lossOf(null, new SQLException("could not serialize access", "40001")),
                "the application's commit would have thrown it: it is not the loss");
    }
}
