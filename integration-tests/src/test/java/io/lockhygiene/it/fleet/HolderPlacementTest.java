package io.lockhygiene.it.fleet;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Where the process's lock holder connects (lockhygiene.holderUrl): by default (auto) the server's own
 * address, so it takes none of the transaction pooler's servers; an explicit URL is checked at the first
 * connection (the same database of the same cluster, not a transaction pooler) and refused with a message
 * that says which; through the application's pooler, a wait for a server is said once.
 */
@ExtendWith(TestBedExtension.class)
class HolderPlacementTest {
    private static final String HOLDER = "lockhygiene lock holder";
    private final TestBed bed = TestBed.shared();

    /**
     * The application_name of each backend whose name starts with the holder's: exactly the holder's when it
     * connected directly, with " - host:port" added when PgBouncer connected it (application_name_add_host).
     */
    private java.util.Map<Integer, String> holderBackends() throws SQLException {
        java.util.Map<Integer, String> out = new java.util.HashMap<>();
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pid, application_name FROM pg_stat_activity WHERE application_name"
                     + " LIKE '" + HOLDER + "%'")) {
            while (rs.next()) {
                out.put(rs.getInt(1), rs.getString(2));
            }
        }
        return out;
    }

    @Test
    void autoPlacesTheHolderOnTheServerItselfNotOnThePoolersServers() throws Exception {
        long k = 993_001;
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
             Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"));
            List<Integer> holders = bed.admin().holdersOf(k);
            assertEquals(1, holders.size());
            assertEquals(HOLDER, holderBackends().get(holders.get(0)),
                    "the lock is on the holder's backend, connected directly, not one of the pooler's servers");
            try (Connection d = bed.connect(Route.DIRECT); Statement a = d.createStatement();
                 ResultSet rs = a.executeQuery("SELECT state, backend_xmin IS NULL FROM pg_stat_activity WHERE pid = "
                         + holders.get(0))) {
                rs.next();
                assertEquals("idle", rs.getString(1), "a session of its own: no transaction held open");
                assertTrue(rs.getBoolean(2), "and no snapshot");
            }
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"));
        }
    }

    /** Its lock lives on a server of that PgBouncer: stopping PgBouncer takes it away (and it is said). */
    @Test
    void aSessionModePgBouncerEntryIsAccepted() throws Exception {
        long k = 993_011;
        try (EventRecorder events = EventRecorder.all();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                     "lockhygiene.holderUrl=" + bed.sessionHolderUrl()); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"));
            assertEquals(1, bed.admin().holdersOf(k).size());
            bed.stopPgBouncer(Route.TRANSACTION_POOL);
            try {
                assertEquals(List.of(), bed.admin().awaitReleased(k, 10_000), "the lock was on one of PgBouncer's servers");
            } finally {
                bed.startPgBouncer(Route.TRANSACTION_POOL);
            }
            // the watchdog looks once a second
            Eventually.until("the loss said", Duration.ofSeconds(10), () -> !events.of(EventType.LOCK_LOST).isEmpty());
            assertEquals(1, events.of(EventType.LOCK_LOST).size(), "and the loss is said");
        }
    }

    @Test
    void aHolderUrlOnAnotherClusterIsRefusedAtConnect() {
        String other = bed.secondClusterUrl();
        SQLException e = assertThrows(SQLException.class, () -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate", "lockhygiene.holderUrl=" + other));
        assertEquals("HY024", e.getSQLState());
        assertTrue(e.getMessage().contains("reaches another database than the application"), e.getMessage());
        assertFalse(e.getMessage().contains(bed.endpoints().password()), "no password in the message");
    }

    @Test
    void aHolderUrlThatIsATransactionPoolerIsRefusedAtConnect() {
        SQLException e = assertThrows(SQLException.class, () -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate", "lockhygiene.holderUrl=" + bed.url(Route.TRANSACTION_POOL)));
        assertEquals("HY024", e.getSQLState());
        assertTrue(e.getMessage().contains("is a transaction pooler"), e.getMessage());
    }

    @Test
    void anUnreachableHolderUrlIsRefusedAtConnectWithTheReason() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        SQLException e = assertThrows(SQLException.class, () -> bed.connectLockHygiene(Route.TRANSACTION_POOL,
                "lockhygiene.mode=emulate", "lockhygiene.holderUrl=jdbc:postgresql://127.0.0.1:" + closed
                        + "/lockhygiene?password=secret-in-url"));
        assertEquals("08001", e.getSQLState());
        assertTrue(e.getMessage().contains("cannot connect to lockhygiene.holderUrl"), e.getMessage());
        assertFalse(e.getMessage().contains("secret-in-url"), "the URL's password is not in the message");
    }

    /**
     * Through the application's own pooler (holderUrl=pooler), a holder that has to wait for one of the
     * pool's servers longer than a few seconds says so once, with the arithmetic and the fix.
     */
    @Test
    void aHolderThroughThePoolerThatWaitsForAServerSaysSoOnce() throws Exception {
        long k = 993_021;
        List<Connection> busy = new ArrayList<>();
        try (EventRecorder events = EventRecorder.all();
             Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate",
                     "lockhygiene.holderUrl=pooler", "lockhygiene.poolMode=transaction"); Statement s = c.createStatement()) {
            for (int i = 0; i < 3; i++) { // every server of the pool taken by an open transaction
                Connection b = bed.connect(Route.TRANSACTION_POOL);
                b.setAutoCommit(false);
                try (Statement bs = b.createStatement()) {
                    bs.execute("SELECT 1");
                }
                busy.add(b);
            }
            CountDownLatch released = new CountDownLatch(1);
            Thread freeOne = new Thread(() -> {
                try {
                    Thread.sleep(6_000); // longer than the bound the holder reports after
                    busy.get(0).rollback();
                    released.countDown();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            freeOne.start();
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + k + ")"), "it gets its server in the end");
            assertTrue(released.await(10, java.util.concurrent.TimeUnit.SECONDS));
            assertEquals(1, events.of(EventType.HOLDER_STARVED).size(), events.types().toString());
            assertTrue(events.of(EventType.HOLDER_STARVED).get(0).message().contains("lockhygiene.holderUrl"));
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + k + ")"));
        } finally {
            for (Connection b : busy) {
                b.close();
            }
        }
    }
}
