package io.lockhygiene.it.leak;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leak no SQL shows: a PL/pgSQL function takes a session lock and never releases it, called once among
 * ordinary traffic (four connections, autocommit statements and explicit transactions) through the bed's
 * transaction-mode PgBouncer (three servers). With the sampled check the lock is found and released after a
 * number of transactions of the order of servers / rate; with tracked alone (the control, sample 0) it is
 * never found, because no statement the driver saw called an advisory function.
 */
@ExtendWith(TestBedExtension.class)
class SampledLeakCheckTest {
    private static final long KEY = 998_501;
    private static final int WORKERS = 4;
    private final TestBed bed = TestBed.shared();

    @BeforeAll
    static void function() throws SQLException {
        try (Connection c = TestBed.shared().connect(Route.DIRECT); Statement s = c.createStatement()) {
            s.execute("CREATE OR REPLACE FUNCTION lh_job_with_hidden_lock(k bigint) RETURNS void LANGUAGE plpgsql"
                    + " AS $$ BEGIN PERFORM pg_advisory_lock(k); END $$");
        }
    }

    /** Transactions run after the leaking call until the leak was reported, or -1 when it never was. */
    private record Run(long transactions, String message) {
    }

    private Run leakThenTraffic(String sample, long maxTransactions) throws Exception {
        AtomicBoolean found = new AtomicBoolean();
        List<String> messages = Collections.synchronizedList(new ArrayList<>());
        LockHygieneListener listener = (LockHygieneEvent e) -> {
            if (e.type() == EventType.INHERITED_RELEASED && String.valueOf(KEY).equals(e.key())) {
                messages.add(e.message());
                found.set(true);
            }
        };
        LockHygiene.addListener(listener);
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            List<Connection> cs = new ArrayList<>();
            for (int i = 0; i < WORKERS; i++) {
                cs.add(bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.leakCheckSample=" + sample));
            }
            try (Statement s = cs.get(0).createStatement()) {
                s.execute("SELECT lh_job_with_hidden_lock(" + KEY + ")"); // the hidden session lock
            }
            assertTrue(found.get() || !bed.admin().holdersOf(KEY).isEmpty(), "the function took the lock");
            AtomicLong transactions = new AtomicLong();
            long[] perWorker = new long[WORKERS];
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                int me = w;
                Connection c = cs.get(w);
                done.add(pool.submit(() -> {
                    start.await();
                    try (Statement s = c.createStatement()) {
                        while (!found.get() && transactions.get() < maxTransactions) {
                            if ((perWorker[me] & 3) == 3) { // one in four: an explicit transaction
                                c.setAutoCommit(false);
                                s.execute("SELECT 1");
                                s.execute("SELECT 2");
                                c.commit();
                                c.setAutoCommit(true);
                            } else {
                                s.execute("SELECT 1");
                            }
                            perWorker[me]++;
                            transactions.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
            for (int w = 0; w < WORKERS; w++) {
                assertTrue(perWorker[w] > 0 || found.get(), "worker " + w + " ran");
            }
            for (Connection c : cs) {
                c.close();
            }
            return new Run(found.get() ? transactions.get() : -1, messages.isEmpty() ? null : messages.get(0));
        } finally {
            pool.shutdownNow();
            LockHygiene.removeListener(listener);
        }
    }

    @Test
    void aHiddenLeakIsFoundAndReleasedAtTwoRates() throws Exception {
        for (String rate : List.of("0.005", "0.05")) { // the default, and ten times it
            double r = Double.parseDouble(rate);
            long expected = Math.round(3 / r); // three servers: each sampled end checks one of them
            List<Long> counts = new ArrayList<>();
            for (int run = 0; run < 10; run++) {
                Run result = leakThenTraffic(rate, 40 * expected);
                assertTrue(result.transactions() >= 0, "rate " + rate + ", run " + run + ": not found in " + 40 * expected
                        + " transactions");
                assertEquals(List.of(), bed.admin().holdersOf(KEY), "released on the server");
                assertTrue(result.message().contains("found by a sampled check")
                        && result.message().contains("statement(s) before the check")
                        && result.message().contains("does not record when a lock was granted"), result.message());
                counts.add(result.transactions());
            }
            Collections.sort(counts);
            System.out.printf("SAMPLED leakCheckSample=%s: transactions until found over %d runs: median %d, worst %d"
                            + " (servers/rate = %d)%n", rate, counts.size(),
                    counts.get(counts.size() / 2), counts.get(counts.size() - 1), expected);
        }
    }

    @Test
    void controlTrackedAloneNeverFindsIt() throws Exception {
        try {
            Run result = leakThenTraffic("0", 3_000);
            assertEquals(-1, result.transactions(), "tracked alone found it: " + result.message());
            assertEquals(1, bed.admin().holdersOf(KEY).size(), "after 3,000 transactions the lock is still held");
        } finally {
            bed.admin().terminateHoldersOf(KEY);
        }
    }

    /**
     * With every end sampled, statements that cannot run inside a transaction block still run as they would
     * alone (the sample never wraps them), also right after a batch whose addBatch took a sample's turn. The
     * control: the same VACUUM inside a transaction block, as wrapping would send it, fails.
     */
    @Test
    void theSampleNeverWrapsWhatCannotRunInATransactionBlock() throws Exception {
        try (Connection admin = bed.connect(Route.DIRECT); Statement s = admin.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_sample_t (id int PRIMARY KEY, n int)");
            s.execute("INSERT INTO lh_sample_t VALUES (1, 0) ON CONFLICT DO NOTHING");
        }
        try (Connection c = bed.connect(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class, () -> s.execute("VACUUM lh_sample_t"));
            assertEquals("25001", e.getSQLState(), "control: VACUUM cannot run inside a transaction block");
            c.rollback();
        }
        try (Connection c = bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.leakCheckSample=1");
             Statement s = c.createStatement()) {
            s.addBatch("UPDATE lh_sample_t SET n = n + 1 WHERE id = 1");
            s.addBatch("UPDATE lh_sample_t SET n = n + 1 WHERE id = 1");
            assertEquals(2, s.executeBatch().length);
            s.execute("VACUUM lh_sample_t");
            s.execute("CREATE INDEX CONCURRENTLY IF NOT EXISTS lh_sample_t_n ON lh_sample_t (n)");
            s.execute("DROP INDEX CONCURRENTLY lh_sample_t_n");
            try (java.sql.ResultSet rs = s.executeQuery("SELECT n FROM lh_sample_t WHERE id = 1")) {
                assertTrue(rs.next() && rs.getInt(1) >= 2);
            }
        }
    }
}
