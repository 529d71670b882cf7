package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.internal.holder.Holders;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.OpaqueDataSource;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.it.demo.BorrowsScenario;
import org.apache.commons.dbcp2.BasicDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 32: where emulate's lock holder goes under the DataSource wrapper with nothing configured but the
 * mode. It learns the pool's endpoint and credentials from the pool's own public API (DBCP2, pgjdbc's
 * PGSimpleDataSource, HikariCP) and connects on its own; where nothing can be learned it keeps one
 * connection of the pool, taken before the application's first borrow, and a holder that cannot get one
 * fails the statement within the pool's own timeout with a message that names the fix. A wrapper that is
 * dropped is collected, with its holder.
 */
@ExtendWith(TestBedExtension.class)
class DataSourcePlacementTest {
    private static final String HOLDER = "lockhygiene lock holder";
    private final TestBed bed = TestBed.shared();

    private static Properties emulate() {
        Properties p = new Properties();
        p.setProperty("lockhygiene.mode", "emulate");
        return p;
    }

    private HikariDataSource hikari(Route route, int size, long connectionTimeoutMillis) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bed.url(route));
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(connectionTimeoutMillis);
        return new HikariDataSource(config);
    }

    /** Takes {@code key} through {@code ds} and says which session holds it: the holder's own, by name. */
    private List<String> whoHoldsAfterLocking(DataSource ds, long key) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")"));
            List<String> names = bed.admin().applicationNamesHolding(key);
            assertTrue(bool(s, "SELECT pg_advisory_unlock(" + key + ")"));
            return names;
        }
    }

    @Test
    void dbcp2AndPgSimpleDataSourceSendTheHolderToTheServerWithoutConfiguration() throws Exception {
        long key = 932_101;
        for (Route route : new Route[] {Route.DIRECT, Route.TRANSACTION_POOL}) {
            try (BasicDataSource dbcp = new BasicDataSource()) {
                dbcp.setUrl(bed.url(route));
                dbcp.setUsername(bed.endpoints().user());
                dbcp.setPassword(bed.endpoints().password());
                dbcp.setMaxTotal(2);
                assertEquals(List.of(HOLDER), whoHoldsAfterLocking(new LockHygieneDataSource(dbcp, emulate()), key),
                        "DBCP2 over " + route + ": the holder's own session holds the lock, not a pooled one");
            }
            PGSimpleDataSource simple = new PGSimpleDataSource();
            simple.setURL(bed.url(route));
            simple.setUser(bed.endpoints().user());
            simple.setPassword(bed.endpoints().password());
            assertEquals(List.of(HOLDER), whoHoldsAfterLocking(new LockHygieneDataSource(simple, emulate()), key + 1),
                    "PGSimpleDataSource over " + route);
            key += 2;
        }
        // control: a holder that shares the pool holds through one of the pool's connections
        Properties pooler = emulate();
        pooler.setProperty("lockhygiene.holderUrl", "pooler");
        try (HikariDataSource pool = hikari(Route.DIRECT, 2, 30_000)) {
            List<String> names = whoHoldsAfterLocking(new LockHygieneDataSource(pool, pooler), key);
            assertEquals(1, names.size());
            assertFalse(names.get(0).startsWith(HOLDER), names.toString());
        }
    }

    /**
     * Nothing can be learned (and scram refuses a connection without a password): the holder keeps one
     * connection of the pool, borrowed before the application's first, so the pool-emptying workload still
     * runs through without an error. connectsTo gives it its own connections again.
     */
    @Test
    void whenNothingCanBeLearnedTheHolderTakesItsConnectionFirstAndTheWorkersRunThrough() throws Exception {
        long key = 932_111;
        try (HikariDataSource pool = hikari(Route.DIRECT, 4, 30_000)) {
            LockHygieneDataSource ds = new LockHygieneDataSource(OpaqueDataSource.of(pool::getConnection), emulate());
            BorrowsScenario.Result r = BorrowsScenario.run(BorrowsScenario.over(ds, PoolExhaustionTest.JOB), key,
                    PoolExhaustionTest.THREADS, PoolExhaustionTest.TRIES, 120);
            System.out.println("[datasource placement] opaque DataSource (holder keeps a pool connection): " + r);
            assertTrue(r.finished(), r.toString());
            assertEquals(PoolExhaustionTest.THREADS, r.threadsDone(), r.toString());
            assertEquals(0, r.errors(), r.toString());
            assertEquals(0, r.overlapping(), r.toString());
            assertEquals(0, r.failedUnlocks(), r.toString());
            List<String> names = whoHoldsAfterLocking(ds, key);
            assertEquals(1, names.size());
            assertFalse(names.get(0).startsWith(HOLDER), "a pooled connection holds it: " + names);
        }
        try (HikariDataSource pool = hikari(Route.TRANSACTION_POOL, 4, 30_000)) {
            LockHygieneDataSource ds = new LockHygieneDataSource(OpaqueDataSource.of(pool::getConnection), emulate())
                    .connectsTo(bed.url(Route.TRANSACTION_POOL), bed.endpoints().user(), bed.endpoints().password());
            assertEquals(List.of(HOLDER), whoHoldsAfterLocking(ds, key + 1), "connectsTo: the holder connects on its own");
        }
    }

    /**
     * The bound: a holder that shares the pool loses its connection (its backend is terminated while it holds
     * a lock), and by the time it asks for another the application's threads hold every one, one of them
     * waiting for the holder. The statement fails within the pool's connection timeout (2 s here), with
     * SQLState 08001 and the fix; nothing waits forever, and once the threads give their connections back the
     * holder works again.
     */
    @Test
    void aHolderThatCannotBorrowFailsTheStatementWithinThePoolsTimeout() throws Exception {
        long key = 932_121;
        try (HikariDataSource pool = hikari(Route.DIRECT, 2, 2_000)) {
            LockHygieneDataSource ds = new LockHygieneDataSource(OpaqueDataSource.of(pool::getConnection), emulate());
            try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                assertTrue(bool(s, "SELECT pg_try_advisory_lock(" + key + ")")); // kept by this thread
            }
            List<Integer> holder = bed.admin().holdersOf(key);
            assertEquals(1, holder.size(), "the holder's borrowed connection holds it");
            Connection a = ds.getConnection(); // the pool's other connection
            CountDownLatch bWaits = new CountDownLatch(1);
            AtomicReference<Connection> bGot = new AtomicReference<>();
            Thread b = new Thread(() -> {
                bWaits.countDown();
                try {
                    bGot.set(ds.getConnection()); // waits: the pool is full
                } catch (SQLException e) {
                    // the pool's own timeout: b then holds nothing, which the assertions below allow
                }
            }, "waits-for-the-pool");
            b.start();
            assertTrue(bWaits.await(10, TimeUnit.SECONDS));
            // b is inside the pool's wait: a borrower ahead of the holder's next one
            Eventually.until("b waits in HikariCP's queue", Duration.ofSeconds(10),
                    () -> pool.getHikariPoolMXBean().getThreadsAwaitingConnection() > 0);
            try (Connection admin = bed.connect(Route.DIRECT); Statement s = admin.createStatement()) {
                s.execute("SELECT pg_terminate_backend(" + holder.get(0) + ")");
            }
            List<String> states = new ArrayList<>();
            SQLException cannotBorrow = null;
            try (Statement s = a.createStatement()) {
                for (int i = 0; i < 4 && cannotBorrow == null; i++) {
                    try {
                        s.executeQuery("SELECT pg_try_advisory_lock(" + (key + 1) + ")").close();
                        states.add("ok");
                    } catch (SQLException e) {
                        states.add(e.getSQLState());
                        if ("08001".equals(e.getSQLState())) {
                            cannotBorrow = e;
                        }
                    }
                }
            }
            b.join(10_000);
            assertFalse(b.isAlive(), "b got its connection, or the pool's timeout");
            System.out.println("[datasource placement] statements after the shared holder's loss: " + states);
            assertTrue(cannotBorrow != null, "the holder could not borrow and said so: " + states);
            assertTrue(cannotBorrow.getMessage().contains("lockhygiene.holderUrl"), cannotBorrow.getMessage());
            if (bGot.get() != null) {
                bGot.get().close();
            }
            a.close();
            assertEquals(1, whoHoldsAfterLocking(ds, key + 2).size(), "with connections back, the holder works again");
        }
    }

    /**
     * Nothing of ours keeps a wrapper: one wrapped, used and dropped is collected, and its holder lets its
     * connection go; 100 such wrappers of one database leave one holder.
     */
    @Test
    void aDroppedWrapperIsCollectedAndLetsItsHolderGo() throws Exception {
        long key = 932_131;
        io.lockhygiene.it.bed.Holders.reset();
        try (HikariDataSource pool = hikari(Route.DIRECT, 2, 30_000)) {
            WeakReference<LockHygieneDataSource> ref = useAndDrop(pool, key);
            awaitCollected(ref);
            assertNull(ref.get(), "the wrapper was collected");
            Eventually.until("its holder's connection is closed", Duration.ofSeconds(10), () -> {
                System.gc();
                return bed.admin().sessionsNamed(HOLDER) == 0;
            });

            List<WeakReference<LockHygieneDataSource>> refs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                refs.add(useAndDrop(pool, key + 1));
            }
            assertEquals(1, Holders.count(), "one holder for the one database");
            for (WeakReference<LockHygieneDataSource> r : refs) {
                awaitCollected(r);
                assertNull(r.get());
            }
        }
        // the borrowing holder of an opaque pool goes with its wrapper too, and gives its connection back
        try (HikariDataSource pool = hikari(Route.DIRECT, 2, 2_000)) {
            WeakReference<LockHygieneDataSource> ref = useAndDrop(OpaqueDataSource.of(pool::getConnection), key + 2);
            awaitCollected(ref);
            assertNull(ref.get());
            Eventually.until("the holder's borrow is returned", Duration.ofSeconds(10), () -> {
                System.gc();
                return pool.getHikariPoolMXBean().getActiveConnections() == 0;
            });
        }
    }

    private WeakReference<LockHygieneDataSource> useAndDrop(DataSource pool, long key) throws Exception {
        LockHygieneDataSource ds = new LockHygieneDataSource(pool, emulate());
        assertEquals(1, whoHoldsAfterLocking(ds, key).size());
        return new WeakReference<>(ds);
    }

    private static void awaitCollected(WeakReference<?> ref) {
        Eventually.until("the wrapper is collected", Duration.ofSeconds(20), () -> {
            System.gc();
            return ref.get() == null;
        });
    }
}
