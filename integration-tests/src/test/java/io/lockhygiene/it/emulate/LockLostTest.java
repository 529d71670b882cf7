package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 12: when the lock holder's server connection is lost (here: its backend is terminated), every
 * owner that held a lock hears of it (a LOCK_LOST event, and an SQLException of class 08 on its next
 * statement): never a silent loss of exclusion. The control shows the silent loss with plain pgjdbc.
 */
@ExtendWith(TestBedExtension.class)
class LockLostTest {
    private static final long KEY = 971_001;
    private final TestBed bed = TestBed.shared();

    @AfterEach
    void cleanUp() throws SQLException {
        bed.admin().terminateHoldersOf(KEY);
    }


    private boolean anotherClientGetsTheKey() throws SQLException {
        try (Connection other = bed.connect(Route.DIRECT); Statement o = other.createStatement()) {
            boolean got = bool(o, "SELECT pg_try_advisory_lock(" + KEY + ")");
            if (got) {
                o.execute("SELECT pg_advisory_unlock(" + KEY + ")");
            }
            return got;
        }
    }

    @Test
    void controlPlainPgjdbcThroughThePoolerLosesItsLockSilently() throws Exception {
        try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + KEY + ")"));
            assertEquals(1, bed.admin().terminateHoldersOf(KEY));
            bed.admin().awaitReleased(KEY, 5_000);
            assertTrue(anotherClientGetsTheKey(), "the lock is gone");
            s.execute("SELECT 1"); // and the client that thinks it holds it hears nothing
        }
    }

    @Test
    void emulateSaysSoWithAnEventAndOnTheNextStatement() throws Exception {
        try (EventRecorder events = EventRecorder.all();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + KEY + ")"));
            assertEquals(1, bed.admin().terminateHoldersOf(KEY), "the holder's backend goes");
            // the watchdog looks once a second
            Eventually.until("the loss said", Duration.ofSeconds(10), () -> !events.of(EventType.LOCK_LOST).isEmpty());
            assertEquals(1, events.of(EventType.LOCK_LOST).size(), events.types().toString());
            assertTrue(anotherClientGetsTheKey(), "the lock is really gone");
            SQLException e = assertThrows(SQLException.class, () -> s.execute("SELECT 1"));
            assertTrue(e.getSQLState().startsWith("08"), e.getSQLState());
            assertTrue(e.getMessage().contains("lock holder"), e.getMessage());
            s.execute("SELECT 1"); // said once; the connection works on
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + KEY + ")"), "and can take the lock again");
            assertFalse(anotherClientGetsTheKey());
        }
    }

    /**
     * The network to the holder's server stops answering (no socketTimeout on the URL): the watchdog's check is
     * bounded by its own network timeout, so the loss is still said and nothing of ours hangs. The holder
     * connects through a TCP proxy named by lockhygiene.holderUrl.
     */
    @Test
    void aBlackholedHolderIsSaidLostWithinTheWatchdogsBound() throws Exception {
        String direct = bed.url(Route.DIRECT);
        int port = io.lockhygiene.it.bed.TcpProxy.portOf(direct);
        try (io.lockhygiene.it.bed.TcpProxy proxy = new io.lockhygiene.it.bed.TcpProxy(port);
             EventRecorder events = EventRecorder.all()) {
            Connection c = java.sql.DriverManager.getConnection(bed.lockHygieneUrl(Route.TRANSACTION_POOL,
                    "lockhygiene.mode=emulate", "lockhygiene.holderUrl=jdbc:postgresql://127.0.0.1:" + proxy.port()
                            + "/lockhygiene"), bed.credentials());
            Statement s = c.createStatement();
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + (KEY + 1) + ")"));
            proxy.blackhole(true);
            // 1 s interval + 5 s bound, with room
            Eventually.until("the loss said", Duration.ofSeconds(20), () -> !events.of(EventType.LOCK_LOST).isEmpty());
            assertEquals(1, events.of(EventType.LOCK_LOST).size(), events.types().toString());
            proxy.blackhole(false);
            c.abort(Runnable::run);
        }
        bed.admin().terminateHoldersOf(KEY + 1);
    }
}
