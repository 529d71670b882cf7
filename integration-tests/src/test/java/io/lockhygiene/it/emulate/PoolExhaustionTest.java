package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Properties;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.it.demo.BorrowsScenario;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 32: emulate under the DataSource wrapper with nothing configured but the mode, on the workload that
 * empties a pool: twice as many threads as connections, every call borrowing, and the job itself running a
 * 20 ms statement through the same pool while the lock is held. The holder learns where to connect from the
 * pool's own configuration and never takes one of its connections, so every thread runs through, as plain
 * pgjdbc on direct PostgreSQL does in the same test. Control: plain pgjdbc through the transaction pooler
 * breaks the guard.
 */
@ExtendWith(TestBedExtension.class)
class PoolExhaustionTest {
    static final int POOL = 4;
    static final int THREADS = 8;
    static final int TRIES = 25;
    static final String JOB = "SELECT pg_sleep(0.02)";
    private final TestBed bed = TestBed.shared();

    private HikariDataSource hikari(Route route) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(bed.url(route));
        config.setUsername(bed.endpoints().user());
        config.setPassword(bed.endpoints().password());
        config.setMaximumPoolSize(POOL);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    /** HikariCP configured the other documented way: pgjdbc's DataSource class and its properties. */
    private HikariDataSource hikariByDataSourceProperties(Route route) {
        java.net.URI uri = java.net.URI.create(bed.url(route).substring("jdbc:".length()));
        HikariConfig config = new HikariConfig();
        config.setDataSourceClassName("org.postgresql.ds.PGSimpleDataSource");
        config.addDataSourceProperty("serverName", uri.getHost());
        config.addDataSourceProperty("portNumber", Integer.toString(uri.getPort()));
        config.addDataSourceProperty("databaseName", uri.getPath().substring(1));
        config.addDataSourceProperty("user", bed.endpoints().user());
        config.addDataSourceProperty("password", bed.endpoints().password());
        config.addDataSourceProperty("prepareThreshold", "0");
        config.setMaximumPoolSize(POOL);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    private static Properties emulate() {
        Properties p = new Properties();
        p.setProperty("lockhygiene.mode", "emulate");
        return p;
    }

    private BorrowsScenario.Result workers(javax.sql.DataSource ds, long key) throws InterruptedException {
        return BorrowsScenario.run(BorrowsScenario.over(ds, JOB), key, THREADS, TRIES, 120);
    }

    private void assertClean(String what, BorrowsScenario.Result r, long key) throws Exception {
        List<Integer> left = bed.admin().awaitReleased(key, 2_000);
        System.out.println("[pool exhaustion] " + what + ": " + r + ", locks left " + left.size());
        assertTrue(r.finished(), what + ": a thread is still running after 120 s: " + r);
        assertEquals(THREADS, r.threadsDone(), what + ": every thread went through its tries: " + r);
        assertTrue(r.runs() > 0, what + ": " + r);
        assertEquals(0, r.errors(), what + ": " + r);
        assertEquals(0, r.overlapping(), what + ": " + r);
        assertEquals(0, r.failedUnlocks(), what + ": " + r);
        assertEquals(List.of(), left, what + ": no lock left");
    }

    @Test
    void controlPlainPgjdbcThroughTheTransactionPoolerBreaksTheGuard() throws Exception {
        long key = 932_001;
        BorrowsScenario.Result plain;
        try (HikariDataSource pool = hikari(Route.TRANSACTION_POOL)) {
            plain = workers(pool, key);
        }
        int left = bed.admin().awaitReleased(key, 1_000).size();
        bed.admin().terminateHoldersOf(key);
        System.out.println("[pool exhaustion] plain pgjdbc, transaction pooler: " + plain + ", locks left " + left);
        assertEquals(THREADS, plain.threadsDone(), plain.toString());
        assertTrue(plain.overlapping() + plain.failedUnlocks() + left > 0, "control: " + plain);
    }

    @Test
    void theWrapperOverHikariOnDirectPostgresRunsAsPlainPgjdbcDoes() throws Exception {
        long key = 932_011;
        BorrowsScenario.Result plain;
        try (HikariDataSource pool = hikari(Route.DIRECT)) {
            plain = workers(pool, key);
        }
        bed.admin().terminateHoldersOf(key);
        System.out.println("[pool exhaustion] plain pgjdbc, direct (the liveness reference): " + plain);
        // every call borrowing breaks the guard even direct (lock and unlock on different sessions): the reference
        // is for liveness only, every thread through its tries within the bound
        assertEquals(THREADS, plain.threadsDone(), plain.toString());
        try (HikariDataSource pool = hikari(Route.DIRECT)) {
            BorrowsScenario.Result guarded = workers(new LockHygieneDataSource(pool, emulate()), key + 1);
            assertClean("LockHygieneDataSource(emulate) over HikariCP, direct", guarded, key + 1);
        }
    }

    @Test
    void theWrapperOverHikariThroughTheTransactionPoolerNeverTakesThePool() throws Exception {
        long key = 932_021;
        try (HikariDataSource pool = hikari(Route.TRANSACTION_POOL)) {
            BorrowsScenario.Result guarded = workers(new LockHygieneDataSource(pool, emulate()), key);
            assertClean("LockHygieneDataSource(emulate) over HikariCP, transaction pooler", guarded, key);
        }
    }

    @Test
    void hikariConfiguredByDataSourcePropertiesTellsTheHolderToo() throws Exception {
        long key = 932_031;
        for (Route route : new Route[] {Route.DIRECT, Route.TRANSACTION_POOL}) {
            try (HikariDataSource pool = hikariByDataSourceProperties(route)) {
                BorrowsScenario.Result guarded = workers(new LockHygieneDataSource(pool, emulate()), key);
                assertClean("LockHygieneDataSource(emulate) over HikariCP by dataSourceProperties, " + route, guarded, key);
            }
            key++;
        }
    }
}
