package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.begin;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.commit;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.plain;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.bed.Eventually;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.LockRace;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;
import reactor.core.publisher.Flux;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lost-lock race through R2DBC with the default settings (issue 42: the commit fence's seals-then-loss rule
 * in one place for every front end): A takes its session lock and commits a row every few milliseconds, in
 * autocommit or in transactions of its own, while the holder session that holds its lock is terminated and B,
 * waiting directly on PostgreSQL, takes the key. Nothing A inserts after B's grant commits, and A is told with
 * class 08, as a client whose session died.
 */
@ExtendWith(TestBedExtension.class)
class R2dbcFencedCommitTest {
    private final TestBed bed = TestBed.shared();
    private final LockRace race = new LockRace(bed);

    /** How A commits each row: an autocommit INSERT, a transaction of its own, a batch of one in autocommit. */
    enum Style {
        AUTOCOMMIT, TRANSACTIONS, BATCH,
        /** The transaction begun and ended as text (BEGIN, COMMIT). */
        TEXT_TRANSACTIONS,
        /** One BEGIN as text, then each write committed with COMMIT AND CHAIN. */
        CHAINED,
        /** BEGIN as text, then the write and its COMMIT in one text of two statements. */
        ENDING_TEXT,
        /** Two INSERTs in one text in autocommit: one implicit transaction, committed at the text's end. */
        SEVERAL,
        /** One text that begins and commits a transaction and goes on after its COMMIT: {@code BEGIN; INSERT; COMMIT; SELECT 1}. */
        COMMIT_MID_TEXT,
        /** An autocommit INSERT with a SKIP LOCKED subquery (a job queue's shape). */
        SKIP_LOCKED
    }

    /** What A did: rows committed, rows committed after B took the key, A's first error. */
    record Outcome(int committed, int committedAfter, String firstError) {
    }

    /**
     * The race with A on connections of {@code factory}.
     *
     * @param goOn the plain control: on an error A opens another connection and goes on, as an application behind
     *             a pool does, still believing it holds its lock; else A stops at its first error
     */
    private Outcome race(ConnectionFactory factory, long key, Style style, boolean goOn) throws Exception {
        return race(factory, key, style, goOn, false);
    }

    /**
     * @param afterLossSeen A pauses between two writes while its holder session is terminated, and writes again
     *                      only once the holder has reported the loss (the order a busy event loop or a slow writer
     *                      meets): its next statement must be told, not pass as an owner's that holds nothing
     */
    private Outcome race(ConnectionFactory factory, long key, Style style, boolean goOn, boolean afterLossSeen)
            throws Exception {
        race.createTable();
        String runId = UUID.randomUUID().toString();
        CountDownLatch locked = new CountDownLatch(1);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger committed = new AtomicInteger();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicReference<Connection> a = new AtomicReference<>(open(factory));
        AtomicReference<CountDownLatch> pause = new AtomicReference<>();
        CountDownLatch paused = new CountDownLatch(1);
        // A's writes block on a plain thread of its own, never on an event loop
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            run(a.get(), "select pg_advisory_lock($1)", key);
            locked.countDown();
            while (!stop.get()) {
                try {
                    CountDownLatch resume = pause.get();
                    if (resume != null) {
                        paused.countDown();
                        if (!resume.await(60, TimeUnit.SECONDS)) {
                            firstError.compareAndSet(null, "A was never resumed");
                            return;
                        }
                    }
                    if (style == Style.TRANSACTIONS) {
                        begin(a.get());
                    } else if (style == Style.TEXT_TRANSACTIONS || style == Style.ENDING_TEXT
                            || (style == Style.CHAINED && committed.get() == 0)) {
                        run(a.get(), "BEGIN");
                    }
                    String insert = "insert into lost_rows (run, worker) values ('" + runId + "', 'a')";
                    if (style == Style.ENDING_TEXT) {
                        run(a.get(), insert + "; COMMIT");
                    } else if (style == Style.SEVERAL) {
                        run(a.get(), insert + "; " + insert);
                    } else if (style == Style.SKIP_LOCKED) {
                        run(a.get(), "insert into lost_rows (run, worker) select '" + runId + "', 'a' where not exists"
                                + " (select 1 from lost_rows l where false for update skip locked)");
                    } else if (style == Style.COMMIT_MID_TEXT) {
                        run(a.get(), "BEGIN; " + insert + "; COMMIT; select 1");
                    } else if (style == Style.BATCH) {
                        batch(a.get(), "insert into lost_rows (run, worker) values ('" + runId + "', 'a')");
                    } else {
                        run(a.get(), "insert into lost_rows (run, worker) values ($1, 'a')", runId);
                    }
                    if (style == Style.TRANSACTIONS) {
                        commit(a.get());
                    } else if (style == Style.TEXT_TRANSACTIONS || style == Style.CHAINED) {
                        run(a.get(), style == Style.CHAINED ? "COMMIT AND CHAIN" : "COMMIT");
                    }
                    committed.incrementAndGet();
                    Thread.sleep(5);
                } catch (R2dbcException e) {
                    firstError.compareAndSet(null, e.getSqlState() + " " + e.getMessage());
                    if (!goOn) {
                        return;
                    }
                    close(a.get());
                    a.set(open(factory));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        });
        try {
            assertTrue(locked.await(30, TimeUnit.SECONDS), "A took its lock");
            race.awaitRowsOf(runId, 20);
            CountDownLatch bWaits = new CountDownLatch(1);
            CompletableFuture<LockRace.Taken> b = race.workerB(key, bWaits);
            assertTrue(bWaits.await(30, TimeUnit.SECONDS));
            race.awaitWaiterFor(key);
            CountDownLatch resume = new CountDownLatch(1);
            LockRace.Taken taken;
            if (afterLossSeen) {
                pause.set(resume);
                assertTrue(paused.await(30, TimeUnit.SECONDS), "A paused between two writes");
                try (EventRecorder events = EventRecorder.all()) {
                    race.terminateHolderOf(key);
                    taken = b.get(60, TimeUnit.SECONDS);
                    Eventually.until("the holder reported the loss", Duration.ofSeconds(30),
                            () -> !events.of(EventType.LOCK_LOST).isEmpty());
                }
                resume.countDown();
            } else {
                race.terminateHolderOf(key);
                taken = b.get(60, TimeUnit.SECONDS);
            }
            Eventually.until("A's writer stopped or wrote after B took the key", Duration.ofSeconds(30),
                    () -> writer.isDone() || race.committedAfter(runId, taken) >= 10);
            stop.set(true);
            writer.get(60, TimeUnit.SECONDS);
            // a commit on its way when the holder's session went may complete (its fence ran before the exit: the
            // window emulate documents); one writer has at most one
            assertTrue(race.inFlightAt(runId, taken) <= 1, "one writer has at most one transaction in flight");
            return new Outcome(committed.get(), race.committedAfter(runId, taken), firstError.get());
        } finally {
            stop.set(true);
            CountDownLatch left = pause.get();
            if (left != null) {
                left.countDown();
            }
            close(a.get());
        }
    }

    /**
     * The order the fence cannot catch: the holder has seen its session's loss (and cleared the owner's locks from
     * its table) before A's next write, which must get the loss (08006) rather than run as an owner's that holds
     * nothing (CI met it once, in autocommit: 11 rows committed after B took the key, and no error).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Style.class)
    void aWriteAfterTheHolderSawTheLossIsTold(Style style) throws Exception {
        Outcome o = race(guarded(bed, Route.TRANSACTION_POOL), 1_992_107 + style.ordinal(), style, false, true);
        System.out.println("[fenced commit] R2DBC, the loss seen before A's next write, " + style + ": " + o);
        assertTrue(o.committed() > 0, o.toString());
        assertEquals(0, o.committedAfter(), "nothing of A commits once B holds the key: " + o);
        assertNotNull(o.firstError(), "A was told: " + o);
        assertTrue(o.firstError().startsWith("08"), "class 08, as a dead session's: " + o);
        assertTrue(o.firstError().contains("lost its server connection"), "the holder's loss, told: " + o);
    }

    /** A batch of one text, blocking (A runs on a thread of its own). */
    private static void batch(Connection c, String sql) {
        Flux.from(c.createBatch().add(sql).execute()).flatMap(r -> r.getRowsUpdated()).blockLast(Duration.ofSeconds(60));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Style.class)
    void commitsRacingTheHoldersLossAreFenced(Style style) throws Exception {
        Outcome o = race(guarded(bed, Route.TRANSACTION_POOL), 1_992_204 + style.ordinal(), style, false);
        System.out.println("[fenced commit] R2DBC, default settings, " + style + ": " + o);
        assertTrue(o.committed() > 0, o.toString());
        assertEquals(0, o.committedAfter(), "nothing of A commits once B holds the key: " + o);
        assertNotNull(o.firstError(), "A was told: " + o);
        assertTrue(o.firstError().startsWith("08"), "class 08, as a dead session's: " + o);
    }

    @Test
    void controlPlainR2dbcThroughThePoolerGoesOnWritingAfterItsLockIsGone() throws Exception {
        Outcome o = race(plain(bed, Route.TRANSACTION_POOL), 1_992_103, Style.AUTOCOMMIT, true);
        System.out.println("[fenced commit] control, plain r2dbc-postgresql through the transaction pooler: " + o);
        assertTrue(o.committedAfter() > 0, "control: the pooled session's lock went, A did not notice " + o);
    }
}
