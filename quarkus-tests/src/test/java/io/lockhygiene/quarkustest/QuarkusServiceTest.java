package io.lockhygiene.quarkustest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import io.agroal.api.AgroalDataSource;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.demo.BorrowsScenario;
import io.quarkus.agroal.DataSource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.health.SmallRyeHealthReporter;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

/**
 * Issue 46: a Quarkus service (JVM mode, Agroal with 4 connections, Flyway at start, health) with only the
 * lockhygiene-quarkus dependency, through the transaction-mode PgBouncer. 8 threads run the borrow-per-call
 * job (try-lock, a 20 ms job, unlock, each call on a borrow of its own): exclusive, every unlock true, nothing
 * left; the same code on the plain-pgjdbc datasource of the same service (the control) overlaps, fails its
 * unlocks or leaves the lock held. The server decides what is left (pg_locks).
 */
@QuarkusTest
@QuarkusTestResource(BedResource.class)
class QuarkusServiceTest {
    @Inject
    Jobs jobs;

    @Inject
    AgroalDataSource guarded;

    @Inject
    @DataSource("plain")
    AgroalDataSource plain;

    @Inject
    SmallRyeHealthReporter health;

    @Test
    void borrowPerCallWorkersRunOneAtATimeWithTheDependencyAlone() throws Exception {
        long key = 46_460_001L;
        BorrowsScenario.Result r = BorrowsScenario.run(new BorrowsScenario.Calls() {
            @Override
            public boolean tryLock(long k) throws Exception {
                return jobs.tryLock(k);
            }

            @Override
            public void job() throws Exception {
                jobs.job();
            }

            @Override
            public boolean unlock(long k) throws Exception {
                return jobs.unlock(k);
            }
        }, key, 8, 20, 120);
        System.out.println("[quarkus] lockhygiene-quarkus, 8 threads, borrow per call: " + r);
        assertEquals(8, r.threadsDone(), "every thread ran: " + r);
        assertTrue(r.runs() > 0, "jobs ran: " + r);
        assertEquals(0, r.errors(), r.toString());
        assertEquals(0, r.overlapping(), "exclusive: " + r);
        assertEquals(0, r.failedUnlocks(), "every unlock released the lock its thread took: " + r);
        assertTrue(TestBed.shared().admin().awaitReleased(key, 5_000).isEmpty(), "nothing left held on the server");
    }

    @Test
    void theDefaultHoldsTheLockUntilItsUnlockFromAnotherBorrow() throws Exception {
        long key = 46_460_003L;
        assertTrue(jobs.tryLock(key), "the try got the lock");
        assertEquals(1, TestBed.shared().admin().holdersOf(key).size(), "held (by the lock holder) after the borrow ended");
        assertTrue(jobs.unlock(key), "the unlock on another borrow of the same thread released it");
        assertTrue(TestBed.shared().admin().awaitReleased(key, 5_000).isEmpty(), "nothing left held on the server");
    }

    @Test
    void theSameCodeOnThePlainDatasourceBreaks() throws Exception {
        long key = 46_460_002L;
        BorrowsScenario.Result r = BorrowsScenario.run(BorrowsScenario.over(plain, "SELECT pg_sleep(0.02)"), key, 8, 20, 120);
        boolean left = !TestBed.shared().admin().holdersOf(key).isEmpty();
        System.out.println("[quarkus] plain pgjdbc (control), 8 threads, borrow per call: " + r + ", lock left: " + left);
        assertEquals(8, r.threadsDone(), "every thread ran: " + r);
        assertTrue(r.overlapping() > 0 || r.failedUnlocks() > 0 || left,
                "the control shows the bug (overlaps, failed unlocks or a lock left): " + r);
        TestBed.shared().admin().terminateHoldersOf(key);
    }

    @Test
    void flywayMigratedAtStartThroughTheGuardedDatasourceAndHealthIsUp() throws Exception {
        try (Connection c = guarded.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM flyway_schema_history WHERE success")) {
            rs.next();
            assertTrue(rs.getInt(1) >= 1, "Flyway ran its migration at start");
        }
        assertTrue(guarded.getConfiguration().connectionPoolConfiguration().connectionFactoryConfiguration()
                .connectionProviderClass().getName().startsWith("io.lockhygiene."), "the default datasource is ours");
        assertEquals("UP", health.getHealth().getStatus().name(), health.getHealth().getPayload().toString());
    }
}
