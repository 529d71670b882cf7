package io.lockhygiene.internal.holder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The session's bounds as SHOW prints them, and which bound ends a wait first. */
class SessionBoundsTest {
    @ParameterizedTest(name = "{0} -> {1} ms")
    @CsvSource({"0, 0", "300ms, 300", "1s, 1000", "90s, 90000", "5min, 300000", "2h, 7200000", "1d, 86400000",
            "250, 250", "' 15s ', 15000"})
    void readsWhatShowPrints(String shown, long millis) throws SQLException {
        assertEquals(millis, SessionBounds.millis("lock_timeout", shown));
    }

    @Test
    void somethingElseIsAClearError() {
        SQLException e = assertThrows(SQLException.class, () -> SessionBounds.millis("lock_timeout", "soon"));
        assertTrue(e.getMessage().contains("lock_timeout = 'soon'"), e.getMessage());
    }

    private static SessionBounds.Source counting(AtomicInteger reads, String lock, String statement) {
        return () -> {
            reads.incrementAndGet();
            return SessionBounds.of(lock, statement);
        };
    }

    @Test
    void theSessionIsAskedOnlyWhenAWaitBeginsAndOncePerStatement() throws SQLException {
        AtomicInteger reads = new AtomicInteger();
        Limits limits = new Limits(0, 0, counting(reads, "300ms", "0"));
        limits.beginAcquisition();
        assertEquals(5, limits.remainingNanos(5), "no bound known before a wait");
        assertEquals(0, reads.get(), "an uncontended lock never asks");
        limits.beginWait();
        limits.beginWait();
        assertEquals(1, reads.get(), "asked once");
        assertTrue(limits.remainingNanos(Long.MAX_VALUE) <= TimeUnit.MILLISECONDS.toNanos(300));
    }

    @Test
    void theSessionsLockTimeoutEndsTheWaitWithPostgresWords() throws Exception {
        Limits limits = new Limits(0, 0, counting(new AtomicInteger(), "1ms", "0"));
        limits.beginAcquisition();
        limits.beginWait();
        Thread.sleep(5);
        SQLException e = assertThrows(SQLException.class, () -> limits.remainingNanos(Long.MAX_VALUE));
        assertEquals("55P03", e.getSQLState());
        assertEquals("canceling statement due to lock timeout", e.getMessage());
    }

    @Test
    void theNearerBoundWins() throws Exception {
        Limits limits = new Limits(60_000, 0, counting(new AtomicInteger(), "2s", "1ms"));
        limits.beginAcquisition();
        limits.beginWait();
        Thread.sleep(5);
        SQLException e = assertThrows(SQLException.class, () -> limits.remainingNanos(Long.MAX_VALUE));
        assertEquals("57014", e.getSQLState());
        assertEquals("canceling statement due to statement timeout", e.getMessage());
        assertFalse(limits.ourLockTimeoutFirst(), "the session's 2 s lock_timeout is nearer than lockhygiene's 60 s");
    }

    @Test
    void lockhygienesOwnBoundStaysAnExtraOneAndSaysSo() throws Exception {
        Limits limits = new Limits(1, 0, counting(new AtomicInteger(), "10s", "0"));
        limits.beginAcquisition();
        limits.beginWait();
        assertTrue(limits.ourLockTimeoutFirst());
        Thread.sleep(5);
        SQLException e = assertThrows(SQLException.class, () -> limits.remainingNanos(Long.MAX_VALUE));
        assertEquals("55P03", e.getSQLState());
        assertTrue(e.getMessage().contains("lockhygiene.lockTimeout=1ms"), e.getMessage());
    }

    @Test
    void lockTimeoutCountsPerAcquisitionStatementTimeoutPerStatement() throws Exception {
        Limits limits = new Limits(0, 0, counting(new AtomicInteger(), "200ms", "10s"));
        limits.beginAcquisition();
        limits.beginWait();
        Thread.sleep(120);
        limits.beginAcquisition(); // the statement's next call
        assertTrue(limits.lockTimeoutLeftMillis() > 150, "a new acquisition has its whole lock_timeout");
        assertTrue(limits.statementTimeoutLeftMillis() < 9_900, "the statement's clock runs on");
    }

    @Test
    void aFailedReadIsTheStatementsError() {
        Limits limits = new Limits(0, 0, () -> {
            throw new SQLException("current transaction is aborted, commands ignored until end of transaction block",
                    "25P02");
        });
        SQLException e = assertThrows(SQLException.class, limits::beginWait);
        assertEquals("25P02", e.getSQLState());
    }
}
