package io.lockhygiene.it.services;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.it.demo.BorrowsScenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 46: the lock code real services ship, each shape written as its service writes it, through the
 * transaction-mode PgBouncer with LockHygiene's defaults (no {@code lockhygiene.*} setting), each beside a
 * plain-pgjdbc control that shows its failure there. The server decides what is left held (pg_locks).
 */
@ExtendWith(TestBedExtension.class)
class ServicesLockCodeTest {
    private final TestBed bed = TestBed.shared();

    /** Tallies of guarded runs: how many, how many at once (overlaps), failed unlocks, errors, tasks never run. */
    static final class Tally {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger overlaps = new AtomicInteger();
        final AtomicInteger failedUnlocks = new AtomicInteger();
        final AtomicInteger neverRan = new AtomicInteger();
        final List<String> errors = Collections.synchronizedList(new ArrayList<>());

        void run(long millis) throws InterruptedException {
            if (inside.incrementAndGet() > 1) {
                overlaps.incrementAndGet();
            }
            try {
                Thread.sleep(millis); // the task itself
                runs.incrementAndGet();
            } finally {
                inside.decrementAndGet();
            }
        }

        @Override
        public String toString() {
            return "runs " + runs + ", overlaps " + overlaps + ", failed unlocks " + failedUnlocks + ", never ran "
                    + neverRan + ", errors " + errors.size() + (errors.isEmpty() ? "" : " (" + errors.get(0) + ")");
        }
    }

    private HikariDataSource pool(String url, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setUsername(bed.endpoints().user());
        c.setPassword(bed.endpoints().password());
        c.setMaximumPoolSize(size);
        return new HikariDataSource(c);
    }

    private String guardedUrl() {
        return bed.lockHygieneUrl(Route.TRANSACTION_POOL);
    }

    /** Runs {@code body} on {@code n} threads started together; every thread must end within 60 s. */
    private static void together(int n, ThrowingIntConsumer body, List<String> errors) throws InterruptedException {
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(n);
        AtomicInteger ran = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            int at = i;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    ran.incrementAndGet();
                    body.accept(at);
                } catch (Exception | AssertionError e) {
                    errors.add(e.toString());
                } finally {
                    ended.countDown();
                }
            }, "service-" + i);
            t.start();
        }
        start.countDown();
        assertTrue(ended.await(60, TimeUnit.SECONDS), "every thread ended within 60 s");
        assertEquals(n, ran.get(), "every thread ran");
    }

    interface ThrowingIntConsumer {
        void accept(int i) throws Exception;
    }

    // --- 1. Start-up tasks: SELECT PG_TRY_ADVISORY_LOCK(?) with an int hash bound as a long, retried on one held
    //        connection, unlocked on it later (the service's comment says it breaks behind transaction pooling)

    /** One instance's start-up, as the service writes it: one connection from its pool for all its tasks. */
    private static void startUpTasks(DataSource ds, List<String> tasks, Map<String, Tally> tallies, int tries)
            throws Exception {
        try (Connection c = ds.getConnection()) {
            for (String task : tasks) {
                int hash = task.hashCode();
                boolean got = false;
                for (int i = 0; i < tries && !got; i++) {
                    try (PreparedStatement ps = c.prepareStatement("SELECT PG_TRY_ADVISORY_LOCK(?)")) {
                        ps.setLong(1, hash);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            got = rs.getBoolean(1);
                        }
                    }
                    if (!got) {
                        Thread.sleep(50); // the service retries every second; shorter here
                    }
                }
                Tally t = tallies.get(task);
                if (!got) {
                    t.neverRan.incrementAndGet();
                    continue;
                }
                try {
                    t.run(30);
                } finally {
                    try (PreparedStatement ps = c.prepareStatement("SELECT PG_ADVISORY_UNLOCK(?)")) {
                        ps.setLong(1, hash);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            if (!rs.getBoolean(1)) {
                                t.failedUnlocks.incrementAndGet();
                            }
                        }
                    }
                }
            }
        }
    }

    private Map<String, Tally> startUps(String url, List<String> tasks) throws Exception {
        Map<String, Tally> tallies = new ConcurrentHashMap<>();
        tasks.forEach(t -> tallies.put(t, new Tally()));
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<HikariDataSource> instances = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                instances.add(pool(url, 2));
            }
            together(4, i -> startUpTasks(instances.get(i), tasks, tallies, 200), errors);
        } finally {
            instances.forEach(HikariDataSource::close);
        }
        tallies.values().forEach(t -> t.errors.addAll(errors));
        return tallies;
    }

    @Test
    void startUpTasksGuardedByAnIntHashRunOneAtATimeOnEveryInstance() throws Exception {
        List<String> tasks = List.of("lh46-reindex-search", "lh46-seed-roles", "lh46-warm-caches");
        Map<String, Tally> guarded = startUps(guardedUrl(), tasks);
        for (String task : tasks) {
            Tally t = guarded.get(task);
            System.out.println("[services] start-up task " + task + ", 4 instances, defaults: " + t);
            assertTrue(t.errors.isEmpty(), t.toString());
            assertEquals(4, t.runs.get(), "each instance ran it once: " + t);
            assertEquals(0, t.overlaps.get(), "one at a time: " + t);
            assertEquals(0, t.failedUnlocks.get(), t.toString());
            assertTrue(bed.admin().awaitReleased(task.hashCode(), 5_000).isEmpty(), "nothing left held");
        }

        List<String> control = List.of("lh46-c-reindex-search", "lh46-c-seed-roles", "lh46-c-warm-caches");
        Map<String, Tally> plain = startUps(bed.url(Route.TRANSACTION_POOL), control);
        boolean broke = false;
        for (String task : control) {
            Tally t = plain.get(task);
            boolean left = !bed.admin().holdersOf(task.hashCode()).isEmpty();
            System.out.println("[services] start-up task " + task + ", 4 instances, plain pgjdbc (control): " + t
                    + ", left held: " + left);
            broke |= t.overlaps.get() > 0 || t.failedUnlocks.get() > 0 || t.neverRan.get() > 0 || left;
            bed.admin().terminateHoldersOf(task.hashCode());
        }
        assertTrue(broke, "the control shows the failure behind the transaction pooler");
    }

    // --- 2. Leader election: a blocking pg_advisory_lock(<literal>) on a DriverManager connection, never unlocked

    /** A child process running {@link LeaderMain}; its output lines in a queue. */
    private static final class Leader implements AutoCloseable {
        final Process process;
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

        Leader(String url, TestBed bed, long key) throws Exception {
            String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            ProcessBuilder pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    LeaderMain.class.getName(), url, bed.endpoints().user(), bed.endpoints().password(), Long.toString(key))
                    .redirectErrorStream(true);
            pb.environment().keySet().removeIf(k -> k.startsWith("LOCKHYGIENE_"));
            process = pb.start();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (java.io.IOException ended) {
                    // the process ended
                }
            }, "leader-output");
            reader.setDaemon(true);
            reader.start();
        }

        /** True once it printed LEADER within {@code millis}. */
        boolean leadsWithin(long millis) throws InterruptedException {
            long deadline = System.nanoTime() + millis * 1_000_000L;
            for (long left = millis; left > 0; left = (deadline - System.nanoTime()) / 1_000_000L) {
                String line = lines.poll(left, TimeUnit.MILLISECONDS);
                if (line == null) {
                    return false;
                }
                if (line.equals("LEADER")) {
                    return true;
                }
            }
            return false;
        }

        boolean saidLeaderSoFar() {
            return lines.contains("LEADER");
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            for (String line; (line = lines.poll(1, TimeUnit.SECONDS)) != null; ) {
                System.out.println("[leader " + process.pid() + "] " + line);
            }
        }
    }

    @Test
    void aLeaderLeadsAloneUntilItsProcessEndsThenAnotherTakesOver() throws Exception {
        long key = 46_460_101L;
        try (Leader a = new Leader(guardedUrl(), bed, key)) {
            assertTrue(a.leadsWithin(30_000), "the first process leads");
            try (Leader b = new Leader(guardedUrl(), bed, key)) {
                // B's lock holder waits on the server for the key: B is blocked, not leading
                Eventually.until("the second process waits for the leader's lock", Duration.ofSeconds(30),
                        () -> !bed.admin().waitersFor(key).isEmpty());
                assertFalse(b.saidLeaderSoFar(), "one leader at a time");
                assertEquals(1, bed.admin().holdersOf(key).size(), "one session holds the leader's lock");
                a.close(); // the leader's process ends (SIGTERM, as a deployment stops it)
                assertTrue(b.leadsWithin(15_000), "the second takes over when the leader's process ends (bounded wait)");
            }
        }
        assertTrue(bed.admin().awaitReleased(key, 10_000).isEmpty(), "nothing left when both have ended");

        long control = 46_460_102L;
        try (Leader a = new Leader(bed.url(Route.TRANSACTION_POOL), bed, control)) {
            assertTrue(a.leadsWithin(30_000), "control: the first process leads");
            try (Leader b = new Leader(bed.url(Route.TRANSACTION_POOL), bed, control)) {
                boolean twoLeaders = b.leadsWithin(10_000);
                System.out.println("[services] leader election, plain pgjdbc (control): two leaders at once: " + twoLeaders);
                assertTrue(twoLeaders, "the control: behind the pooler the second leads too (the lock stayed on a"
                        + " pooled server the second's statements do not reach)");
            }
        } finally {
            bed.admin().terminateHoldersOf(control);
        }
    }

    // --- 3. A patch step: JdbcTemplate-style try-lock and unlock, each on a borrow of its own (the starter's wrapper)

    @Test
    void aPatchStepThatLocksAndUnlocksOnTwoBorrowsRunsOnce() throws Exception {
        long key = 46_460_201L;
        try (HikariDataSource a = pool(bed.url(Route.TRANSACTION_POOL), 2);
             HikariDataSource b = pool(bed.url(Route.TRANSACTION_POOL), 2)) {
            BorrowsScenario.Result r = twoInstances(new LockHygieneDataSource(a), new LockHygieneDataSource(b), key);
            System.out.println("[services] patch step, two instances, LockHygieneDataSource with the defaults: " + r);
            assertEquals(8, r.threadsDone(), r.toString());
            assertTrue(r.runs() > 0, r.toString());
            assertEquals(0, r.errors(), r.toString());
            assertEquals(0, r.overlapping(), r.toString());
            assertEquals(0, r.failedUnlocks(), r.toString());
            assertTrue(bed.admin().awaitReleased(key, 5_000).isEmpty(), "nothing left held");
        }
        // the control's failure depends on which pooled server each borrow's statement meets (PgBouncer reuses the
        // server released last, so a quiet moment can put a try and its unlock on the same one): up to three runs
        boolean broke = false;
        for (int attempt = 1; attempt <= 3 && !broke; attempt++) {
            long control = 46_460_202L + attempt;
            try (HikariDataSource a = pool(bed.url(Route.TRANSACTION_POOL), 2);
                 HikariDataSource b = pool(bed.url(Route.TRANSACTION_POOL), 2)) {
                BorrowsScenario.Result r = twoInstances(a, b, control);
                boolean left = !bed.admin().holdersOf(control).isEmpty();
                System.out.println("[services] patch step, two instances, plain pgjdbc (control), run " + attempt + ": " + r
                        + ", left: " + left);
                broke = r.overlapping() > 0 || r.failedUnlocks() > 0 || left;
            } finally {
                bed.admin().terminateHoldersOf(control);
            }
        }
        assertTrue(broke, "the control shows the failure (overlaps, failed unlocks or a lock left) in one of three runs");
    }

    /** 8 threads, the first four of instance {@code a}, the others of {@code b}: try, patch (20 ms), unlock. */
    private static BorrowsScenario.Result twoInstances(DataSource a, DataSource b, long key) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        ThreadLocal<BorrowsScenario.Calls> mine = ThreadLocal.withInitial(
                () -> BorrowsScenario.over(next.getAndIncrement() % 2 == 0 ? a : b, "SELECT pg_sleep(0.02)"));
        return BorrowsScenario.run(new BorrowsScenario.Calls() {
            @Override
            public boolean tryLock(long k) throws Exception {
                return mine.get().tryLock(k);
            }

            @Override
            public void job() throws Exception {
                mine.get().job();
            }

            @Override
            public boolean unlock(long k) throws Exception {
                return mine.get().unlock(k);
            }
        }, key, 8, 10, 120);
    }

    // --- 4. A named-lock library: one long-lived lock connection per instance, keys by hashtext(?)

    /** As such a library writes it: names locked on one connection it keeps, in-process exclusion by name. */
    static final class NamedLocks implements AutoCloseable {
        private final Connection lockConnection;
        private final Map<String, ReentrantLock> local = new ConcurrentHashMap<>();

        NamedLocks(String url, TestBed bed) throws SQLException {
            lockConnection = DriverManager.getConnection(url, bed.endpoints().user(), bed.endpoints().password());
        }

        boolean tryLock(String name) throws SQLException {
            ReentrantLock l = local.computeIfAbsent(name, n -> new ReentrantLock());
            if (!l.tryLock()) {
                return false;
            }
            boolean got = false;
            try {
                synchronized (lockConnection) {
                    try (PreparedStatement ps = lockConnection.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?))")) {
                        ps.setString(1, name);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            got = rs.getBoolean(1);
                        }
                    }
                }
                return got;
            } finally {
                if (!got) {
                    l.unlock();
                }
            }
        }

        boolean unlock(String name) throws SQLException {
            try {
                synchronized (lockConnection) {
                    try (PreparedStatement ps = lockConnection.prepareStatement("SELECT pg_advisory_unlock(hashtext(?))")) {
                        ps.setString(1, name);
                        try (ResultSet rs = ps.executeQuery()) {
                            rs.next();
                            return rs.getBoolean(1);
                        }
                    }
                }
            } finally {
                local.get(name).unlock();
            }
        }

        @Override
        public void close() throws SQLException {
            lockConnection.close();
        }
    }

    private Tally namedLockRuns(String url, String name) throws Exception {
        Tally t = new Tally();
        List<NamedLocks> instances = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                instances.add(new NamedLocks(url, bed));
            }
            together(6, i -> { // two threads per instance
                NamedLocks locks = instances.get(i % 3);
                for (int n = 0; n < 15; n++) {
                    if (locks.tryLock(name)) {
                        try {
                            t.run(10);
                        } finally {
                            if (!locks.unlock(name)) {
                                t.failedUnlocks.incrementAndGet();
                            }
                        }
                    }
                    Thread.sleep(2);
                }
            }, t.errors);
        } finally {
            for (NamedLocks l : instances) {
                l.close();
            }
        }
        return t;
    }

    private long hashtext(String name) throws SQLException {
        try (Connection c = bed.connect(Route.DIRECT); PreparedStatement ps = c.prepareStatement("SELECT hashtext(?)::bigint")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    @Test
    void aNamedLockLibraryOnOneLongLivedConnectionPerInstanceStaysExclusive() throws Exception {
        String name = "lh46-nightly-report";
        Tally t = namedLockRuns(guardedUrl(), name);
        System.out.println("[services] named-lock library, 3 instances x 2 threads, defaults: " + t);
        assertTrue(t.errors.isEmpty(), t.toString());
        assertTrue(t.runs.get() > 0, t.toString());
        assertEquals(0, t.overlaps.get(), t.toString());
        assertEquals(0, t.failedUnlocks.get(), t.toString());
        assertTrue(bed.admin().awaitReleased(hashtext(name), 5_000).isEmpty(), "nothing left held");

        boolean broke = false; // the control's failure depends on the servers its statements meet: up to three runs
        for (int attempt = 1; attempt <= 3 && !broke; attempt++) {
            String control = "lh46-c-nightly-report-" + attempt;
            Tally p = namedLockRuns(bed.url(Route.TRANSACTION_POOL), control);
            boolean left = !bed.admin().holdersOf(hashtext(control)).isEmpty();
            System.out.println("[services] named-lock library, plain pgjdbc (control), run " + attempt + ": " + p
                    + ", left: " + left);
            broke = p.overlaps.get() > 0 || p.failedUnlocks.get() > 0 || left;
            bed.admin().terminateHoldersOf(hashtext(control));
        }
        assertTrue(broke, "the control shows the failure in one of three runs");
    }
}
