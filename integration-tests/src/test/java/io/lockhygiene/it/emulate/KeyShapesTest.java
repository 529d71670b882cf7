package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Own-key workers through the transaction pooler (3 servers), for each key shape real code sends: each
 * worker takes its own key, runs five short statements and unlocks, ten times. Every shape is decided in the
 * process's one lock table, so no shape pins a server per held lock or waits for itself: every job done,
 * no error, no failed unlock, nothing left held. The first version did 0 of 80 jobs with the seed article's
 * own shape and with row keys (each fell back to a per-connection holder that pinned a server).
 */
@ExtendWith(TestBedExtension.class)
class KeyShapesTest {
    private static final int TIMEOUT_SECONDS = 60;
    private final TestBed bed = TestBed.shared();

    /** How a shape writes one worker's lock and unlock, and binds its key. */
    record Shape(String name, String lock, String unlock, boolean inTransaction, Binder binder) {
        @Override
        public String toString() {
            return name;
        }
    }

    @FunctionalInterface
    interface Binder {
        void bind(PreparedStatement ps, long key) throws SQLException;
    }

    static final List<Shape> SHAPES = List.of(
            new Shape("integer bind", "SELECT pg_advisory_lock(?)", "SELECT pg_advisory_unlock(?)", false,
                    (ps, k) -> ps.setLong(1, k)),
            new Shape("cast bind", "SELECT pg_advisory_lock(?::bigint)", "SELECT pg_advisory_unlock(?::bigint)", false,
                    (ps, k) -> ps.setLong(1, k)),
            new Shape("class id and hashtext literal (the seed's own)", "SELECT pg_advisory_lock(7742, hashtext('job-%d'))",
                    "SELECT pg_advisory_unlock(7742, hashtext('job-%d'))", false, (ps, k) -> { }),
            new Shape("hashtext bind, try", "SELECT pg_try_advisory_lock(hashtext(?))",
                    "SELECT pg_advisory_unlock(hashtext(?))", false, (ps, k) -> ps.setString(1, "job-" + k)),
            new Shape("key read from a row", "SELECT pg_try_advisory_lock(id) FROM lh_shape_jobs WHERE id = ?",
                    "SELECT pg_advisory_unlock(id) FROM lh_shape_jobs WHERE id = ?", false, (ps, k) -> ps.setLong(1, k)),
            new Shape("xact lock in FROM inside a transaction", "SELECT 1 FROM pg_advisory_xact_lock(hashtext(?))", null, true,
                    (ps, k) -> ps.setString(1, "job-" + k)));

    static Stream<Arguments> shapesAndSizes() {
        List<Arguments> out = new ArrayList<>();
        for (Shape s : SHAPES) {
            for (int workers : new int[] {8, 32, 64}) {
                out.add(Arguments.of(s, workers));
            }
        }
        return out.stream();
    }

    @BeforeAll
    static void jobs() throws SQLException {
        try (Connection c = TestBed.shared().connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_shape_jobs (id bigint PRIMARY KEY)");
            s.execute("INSERT INTO lh_shape_jobs SELECT g FROM generate_series(982000, 989999) g ON CONFLICT DO NOTHING");
        }
    }

    /** What the workers did. */
    record Outcome(int jobsDone, int errors, int failedUnlocks, int locksLeft, long millis, String firstError) {
    }

    private Outcome ownKeyWorkers(Shape shape, int workers, long base, Source source) throws Exception {
        AtomicInteger done = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        List<String> errorTexts = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            long key = base + w;
            Thread t = new Thread(() -> {
                try (Connection c = source.open(); Statement s = c.createStatement();
                     PreparedStatement lock = c.prepareStatement(String.format(shape.lock(), key));
                     PreparedStatement unlock = shape.unlock() == null ? null
                             : c.prepareStatement(String.format(shape.unlock(), key))) {
                    s.setQueryTimeout(TIMEOUT_SECONDS);
                    lock.setQueryTimeout(TIMEOUT_SECONDS);
                    start.await();
                    ran.incrementAndGet();
                    for (int i = 0; i < 10; i++) {
                        if (shape.inTransaction()) {
                            c.setAutoCommit(false);
                        }
                        shape.binder().bind(lock, key);
                        try (ResultSet rs = lock.executeQuery()) {
                            rs.next();
                            if (shape.lock().contains("try") && !rs.getBoolean(1)) {
                                throw new SQLException("own key refused");
                            }
                        }
                        for (int j = 0; j < 5; j++) {
                            s.execute("SELECT " + j);
                        }
                        if (shape.inTransaction()) {
                            c.commit();
                            c.setAutoCommit(true);
                        } else {
                            shape.binder().bind(unlock, key);
                            try (ResultSet rs = unlock.executeQuery()) {
                                rs.next();
                                if (!rs.getBoolean(1)) {
                                    failedUnlocks.incrementAndGet();
                                }
                            }
                        }
                        done.incrementAndGet();
                    }
                } catch (SQLException e) {
                    errors.incrementAndGet();
                    errorTexts.add(e.getSQLState() + " " + e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "shape-worker-" + w);
            threads.add(t);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(150));
            assertFalse(t.isAlive(), "a worker is still running after 150 s: the pool starved");
        }
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(workers, ran.get(), "every worker ran");
        int left = bed.admin().heldAdvisoryLocks().size();
        return new Outcome(done.get(), errors.get(), failedUnlocks.get(), left, millis,
                errorTexts.isEmpty() ? null : errorTexts.get(0));
    }

    @FunctionalInterface
    interface Source {
        Connection open() throws SQLException;
    }

    @ParameterizedTest(name = "{0}, {1} workers")
    @MethodSource("shapesAndSizes")
    void everyShapeOfOwnKeyWorkersFinishesThroughTheTransactionPooler(Shape shape, int workers) throws Exception {
        Outcome emulated = ownKeyWorkers(shape, workers, 982_000L + workers * 100L,
                () -> bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
        System.out.println("[key shapes] " + shape + ", " + workers + " workers over 3 pooled servers: " + emulated);
        assertEquals(workers * 10, emulated.jobsDone(), String.valueOf(emulated.firstError()));
        assertEquals(0, emulated.errors(), emulated.firstError());
        assertEquals(0, emulated.failedUnlocks());
        assertEquals(0, emulated.locksLeft(), "nothing left held");
    }

    @Test
    void controlPlainPgjdbcLosesTheSeedShapesLocks() throws Exception {
        Outcome plain = ownKeyWorkers(SHAPES.get(3), 8, 988_000L, () -> bed.connect(Route.TRANSACTION_POOL));
        System.out.println("[key shapes] control: plain pgjdbc, hashtext keys: " + plain);
        assertTrue(plain.failedUnlocks() + plain.locksLeft() + plain.errors() > 0,
                "control: unlocks land on other servers, locks stay behind " + plain);
        try (Connection c = bed.connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND pid <> pg_backend_pid()");
        }
    }

    /** Round trips the application's connection started (through {@code proxy}) while {@code sql} ran. */
    private static long roundTrips(io.lockhygiene.it.bed.TcpProxy proxy, Statement s, String... sql) throws SQLException {
        long before = proxy.roundTrips();
        for (String q : sql) {
            try (ResultSet rs = s.executeQuery(q)) {
                assertTrue(rs.next());
                assertTrue(rs.getBoolean(1), q);
            }
        }
        return proxy.roundTrips() - before;
    }

    private static long roundTrips(io.lockhygiene.it.bed.TcpProxy proxy, Connection c, String text, String sql) throws SQLException {
        long before = proxy.roundTrips();
        for (String q : new String[] {"SELECT pg_try_advisory_lock(hashtext(?))", "SELECT pg_advisory_unlock(hashtext(?))"}) {
            try (PreparedStatement ps = c.prepareStatement(q)) {
                ps.setString(1, text);
                try (ResultSet rs = ps.executeQuery()) {
                    assertTrue(rs.next());
                    assertTrue(rs.getBoolean(1), q);
                }
            }
        }
        return proxy.roundTrips() - before;
    }

    /**
     * The cost of an expression key, counted on the wire between the application and the pooler (the holder
     * connects to the server itself, so its round trips are the same for every shape): an integer key sends
     * nothing from the application's connection; a key PostgreSQL computes is asked of the server once, and is
     * known from then on (immutable functions of constants, and of the same bind values).
     */
    @Test
    void anExpressionKeyCostsOneRoundTripTheFirstTimeAndNoneOnceKnown() throws Exception {
        String pool = bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate", "lockhygiene.poolMode=transaction");
        int port = io.lockhygiene.it.bed.TcpProxy.portOf(pool);
        try (io.lockhygiene.it.bed.TcpProxy proxy = new io.lockhygiene.it.bed.TcpProxy(port)) {
            String url = proxy.via(pool);
            try (Connection c = java.sql.DriverManager.getConnection(url, bed.credentials()); Statement s = c.createStatement()) {
                long integer = roundTrips(proxy, s, "SELECT pg_try_advisory_lock(983001)", "SELECT pg_advisory_unlock(983001)");
                String seed = "SELECT pg_try_advisory_lock(7742, hashtext('report-daily'))";
                String seedUnlock = "SELECT pg_advisory_unlock(7742, hashtext('report-daily'))";
                long seedFirst = roundTrips(proxy, s, seed, seedUnlock);
                long seedAgain = roundTrips(proxy, s, seed, seedUnlock);
                long bindFirst = roundTrips(proxy, c, "job-a", null);
                long bindAgain = roundTrips(proxy, c, "job-a", null);
                long bindOther = roundTrips(proxy, c, "job-b", null);
                String figures = "integer " + integer + ", seed's key first " + seedFirst + " then " + seedAgain
                        + ", hashtext(?) first " + bindFirst + " then " + bindAgain + ", another value " + bindOther;
                System.out.println("[key shapes] application round trips for try + unlock: " + figures);
                assertEquals(0, integer, figures);
                assertEquals(1, seedFirst, figures);
                assertEquals(0, seedAgain, figures);
                assertEquals(1, bindFirst, figures);
                assertEquals(0, bindAgain, figures);
                assertEquals(1, bindOther, figures);
                assertTrue(proxy.roundTrips() > 0, "the counter saw the connection's start-up queries");
            }
        }
    }
}
