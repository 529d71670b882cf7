package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.bed.LockRace;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 33: a lost lock fences its owner. Worker A takes {@code pg_advisory_lock(k)} and writes one row every
 * 5 ms; the server session that holds its lock is terminated; at once worker B, directly on PostgreSQL, takes
 * {@code k}. Counted: A's rows inserted after B got the key and committed (their ids come after the one B
 * drew right after its grant). On PostgreSQL that is 0 (A's session died with its lock); through the transaction
 * pooler with plain pgjdbc A goes on writing on other servers (the control); under emulate every commit of
 * A carries the fence, so the first commit after the loss rolls back with 08006 and nothing more commits.
 */
@ExtendWith(TestBedExtension.class)
class FencedCommitTest {
    private static final Path AGENT = Paths.get(System.getProperty("testbed.agentJar", "../agent/target/lockhygiene-agent.jar"));
    private final TestBed bed = TestBed.shared();
    private final LockRace race = new LockRace(bed);

    @BeforeEach
    void table() throws SQLException {
        race.createTable();
    }

    /** What one run of the scenario gave. */
    record Outcome(int committedAfter, int committed, String firstError, long errorAfterMillis) {
    }

    /** The scenario with A in this JVM, on {@code a}. */
    private Outcome scenario(Connection a, long key, LostLockWriter.Style style) throws Exception {
        return scenario(a, key, style, null);
    }

    private Outcome scenario(Connection a, long key, LostLockWriter.Style style, LostLockWriter.Reconnect reconnect)
            throws Exception {
        String run = UUID.randomUUID().toString();
        CountDownLatch locked = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        CompletableFuture<LostLockWriter.Result> writer = CompletableFuture.supplyAsync(() -> {
            try {
                return LostLockWriter.run(a, key, run, style, locked, stop, reconnect);
            } catch (SQLException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        assertTrue(locked.await(30, TimeUnit.SECONDS), "A took its lock");
        race.awaitRowsOf(run, 20); // A writes under its lock
        CountDownLatch bWaits = new CountDownLatch(1);
        CompletableFuture<LockRace.Taken> b = race.workerB(key, bWaits);
        assertTrue(bWaits.await(30, TimeUnit.SECONDS));
        race.awaitWaiterFor(key); // B is in PostgreSQL's queue for the key
        long terminatedAt = race.terminateHolderOf(key);
        LockRace.Taken taken = b.get(60, TimeUnit.SECONDS);
        // A goes on while it can: until its writer fails (fenced) or it has committed rows begun after B's grant
        Eventually.until("A's writer stopped or wrote after B took the key", Duration.ofSeconds(30),
                () -> writer.isDone() || race.committedAfter(run, taken) >= 10);
        stop.set(true);
        LostLockWriter.Result r = writer.get(60, TimeUnit.SECONDS);
        int inFlight = race.inFlightAt(run, taken);
        if (inFlight > 0) {
            System.out.println("[fenced commit] " + style + ": a commit on its way when the holder's session went"
                    + " completed (its fence ran before the session's exit: the window emulate documents)");
        }
        assertTrue(inFlight <= 1, "one writer has at most one transaction in flight: " + inFlight);
        return new Outcome(race.committedAfter(run, taken), r.committed, r.errorState == null ? null
                : r.errorState + " " + r.errorMessage, r.errorState == null ? -1 : r.errorAtMillis - terminatedAt);
    }

    @Test
    void controlPlainPgjdbcThroughThePoolerGoesOnWritingAfterItsLockIsGone() throws Exception {
        Outcome plain;
        try (Connection a = bed.connect(Route.TRANSACTION_POOL)) {
            // if the termination breaks A's own statement (PgBouncer gave it the dying server), A goes on with a
            // new connection, as behind any pool: it still believes it holds its lock
            plain = scenario(a, 933_001, LostLockWriter.Style.AUTOCOMMIT, () -> bed.connect(Route.TRANSACTION_POOL));
        }
        Outcome direct;
        try (Connection a = bed.connect(Route.DIRECT)) {
            direct = scenario(a, 933_002, LostLockWriter.Style.AUTOCOMMIT);
        }
        System.out.println("[fenced commit] plain pgjdbc through the transaction pooler: " + plain);
        System.out.println("[fenced commit] plain pgjdbc on direct PostgreSQL (its own session ends): " + direct);
        assertTrue(plain.committedAfter() > 0, "control: the pooled session's lock went, A did not notice " + plain);
        assertEquals(0, direct.committedAfter(), "the reference: PostgreSQL ends the work with the session " + direct);
        assertNotNull(direct.firstError(), direct.toString());
        assertTrue(direct.firstError().startsWith("57P01") || direct.firstError().startsWith("08"), direct.toString());
    }

    @Test
    void underEmulateNothingCommitsAfterTheLockIsGoneAutocommitAndTransactions() throws Exception {
        for (LostLockWriter.Style style : LostLockWriter.Style.values()) {
            Outcome o;
            try (EventRecorder events = EventRecorder.all();
                 Connection a = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")) {
                o = scenario(a, 933_011 + style.ordinal(), style);
                assertEquals(1, events.of(EventType.LOCK_LOST).size(), events.types().toString());
            }
            System.out.println("[fenced commit] emulate through the transaction pooler, " + style + ": " + o
                    + "; first error " + o.errorAfterMillis() + " ms after the termination");
            assertTrue(o.committed() > 0, o.toString());
            assertEquals(0, o.committedAfter(), style + ": nothing of A commits once B holds the key " + o);
            assertNotNull(o.firstError(), "A was told: " + o);
            assertTrue(o.firstError().startsWith("08"), style + ": class 08, as a dead session's: " + o);
            assertTrue(o.firstError().contains("lock holder"), o.toString());
        }
    }

    /**
     * The same race through the DataSource wrapper around HikariCP, with the default settings (no lockhygiene.*
     * setting): the writer's thread owns the lock across the pool's connection, and its commits racing the holder's
     * loss are fenced as the driver's are (issue 42: the seals-then-loss rule, one place for every front end).
     */
    @Test
    void throughTheDataSourceWrapperWithTheDefaultSettings() throws Exception {
        for (LostLockWriter.Style style : LostLockWriter.Style.values()) {
            com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
            config.setJdbcUrl(bed.url(Route.TRANSACTION_POOL));
            config.setUsername(bed.endpoints().user());
            config.setPassword(bed.endpoints().password());
            config.setMaximumPoolSize(2);
            Outcome o;
            try (com.zaxxer.hikari.HikariDataSource pool = new com.zaxxer.hikari.HikariDataSource(config);
                 io.lockhygiene.LockHygieneDataSource ds = new io.lockhygiene.LockHygieneDataSource(pool, new java.util.Properties());
                 Connection a = ds.getConnection()) {
                o = scenario(a, 933_031 + style.ordinal(), style);
            }
            System.out.println("[fenced commit] the DataSource wrapper, default settings, " + style + ": " + o
                    + "; first error " + o.errorAfterMillis() + " ms after the termination");
            assertTrue(o.committed() > 0, o.toString());
            assertEquals(0, o.committedAfter(), style + ": nothing of A commits once B holds the key " + o);
            assertNotNull(o.firstError(), "A was told: " + o);
            assertTrue(o.firstError().startsWith("08"), style + ": class 08, as a dead session's: " + o);
        }
    }

    @Test
    void throughTheAgentTooWithAnUnchangedWriter() throws Exception {
        long key = 933_021;
        String run = UUID.randomUUID().toString();
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String cp = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !(e.contains("driver" + File.separator + "target") || e.contains("lockhygiene-driver")))
                .collect(Collectors.joining(File.pathSeparator));
        Process p = new ProcessBuilder(java, "-javaagent:" + AGENT.toAbsolutePath() + "=mode=emulate", "-cp", cp,
                LostLockWriterMain.class.getName(), bed.url(Route.TRANSACTION_POOL), bed.endpoints().user(),
                bed.endpoints().password(), Long.toString(key), run, "AUTOCOMMIT").redirectErrorStream(true).start();
        p.getOutputStream().close();
        StringBuilder out = new StringBuilder();
        String result = null;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            LockRace.Taken taken = null;
            long terminatedAt = 0;
            for (String line; (line = r.readLine()) != null; ) {
                out.append(line).append('\n');
                if (line.startsWith("LOCKED")) {
                    assertTrue(line.contains("io.lockhygiene"), "the agent guards the writer: " + line);
                    race.awaitRowsOf(run, 20);
                    CountDownLatch bWaits = new CountDownLatch(1);
                    CompletableFuture<LockRace.Taken> b = race.workerB(key, bWaits);
                    assertTrue(bWaits.await(30, TimeUnit.SECONDS));
                    race.awaitWaiterFor(key);
                    terminatedAt = race.terminateHolderOf(key);
                    taken = b.get(60, TimeUnit.SECONDS);
                } else if (line.startsWith("RESULT")) {
                    result = line;
                    assertNotNull(taken, out.toString());
                    String[] f = line.split(" ", 5);
                    int after = race.committedAfter(run, taken);
                    assertTrue(race.inFlightAt(run, taken) <= 1, "one writer, at most one transaction in flight");
                    System.out.println("[fenced commit] the agent, an unchanged writer: " + f[1] + " rows committed, "
                            + after + " after B got the key, first error " + f[2] + " "
                            + (Long.parseLong(f[3]) - terminatedAt) + " ms after the termination");
                    assertEquals(0, after, out.toString());
                    assertTrue(f[2].startsWith("08"), out.toString());
                }
            }
        }
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), out.toString());
        assertNotNull(result, out.toString());
    }

    /** DISCARD ALL releases the session's advisory locks on PostgreSQL; under emulate the owner's emulated ones go too. */
    @Test
    void discardAllLetsTheOwnersLocksGoAsOnPostgres() throws Exception {
        long key = 933_031;
        for (boolean emulate : new boolean[] {false, true}) {
            try (Connection a = emulate ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")
                    : bed.connect(Route.DIRECT); Statement s = a.createStatement()) {
                s.execute("SELECT pg_advisory_lock(" + key + ")");
                s.execute("SELECT pg_advisory_lock_shared(" + (key + 1) + ")");
                assertEquals(1, bed.admin().holdersOf(key).size());
                s.execute("DISCARD ALL");
                assertEquals(List.of(), bed.admin().awaitReleased(key, 5_000), (emulate ? "emulate" : "PostgreSQL")
                        + ": DISCARD ALL released it");
                assertEquals(List.of(), bed.admin().awaitReleased(key + 1, 5_000));
                try (Connection o = bed.connect(Route.DIRECT); Statement os = o.createStatement()) {
                    assertTrue(io.lockhygiene.it.bed.Sql.bool(os, "SELECT pg_try_advisory_lock(" + key + ")"));
                    os.execute("SELECT pg_advisory_unlock(" + key + ")");
                }
                assertTrue(io.lockhygiene.it.bed.Sql.bool(s, "SELECT NOT pg_advisory_unlock(" + key + ")"),
                        "nothing left to unlock");
            }
        }
    }
}
