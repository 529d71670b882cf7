package io.lockhygiene.springtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.lockhygiene.LockHygieneDataSource;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.it.demo.BorrowsScenario;
import io.lockhygiene.settings.Settings;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The starter in a real Spring Boot application (this module's Boot version), through the test bed's
 * transaction-mode PgBouncer: HikariCP with 4 connections, JdbcTemplate outside any transaction, so
 * every call borrows a connection of its own; with only {@code lockhygiene.mode=emulate}, the lock holder
 * connects on its own and never takes one of the pool's (issue 32).
 */
@ExtendWith(TestBedExtension.class)
@org.junit.jupiter.api.TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
class StarterTest {
    private final TestBed bed = TestBed.shared();

    private ConfigurableApplicationContext start(String... settings) {
        return start(Route.TRANSACTION_POOL, settings);
    }

    private ConfigurableApplicationContext start(Route route, String... settings) {
        List<String> args = new ArrayList<>(List.of(
                "--spring.datasource.url=" + bed.url(route),
                "--spring.datasource.username=" + bed.endpoints().user(),
                "--spring.datasource.password=" + bed.endpoints().password(),
                "--spring.datasource.hikari.maximum-pool-size=4",
                "--spring.main.banner-mode=off"));
        args.addAll(List.of(settings));
        if (args.stream().noneMatch(a -> a.startsWith("--spring.flyway.enabled="))) {
            args.add("--spring.flyway.enabled=false"); // these applications migrate only when a test says so
        }
        SpringApplication app = new SpringApplication(JobApplication.class);
        app.setWebApplicationType(WebApplicationType.NONE);
        return app.run(args.toArray(new String[0]));
    }

    /**
     * 8 threads (twice the pool) guarding one job with try-lock / unlock through JdbcTemplate outside any
     * transaction, so every call borrows; the job runs its own 20 ms statement through the same JdbcTemplate
     * while the lock is held: the workload that empties the pool.
     */
    private BorrowsScenario.Result eightThreadsGuardOneJob(JdbcTemplate jdbc, long key) throws Exception {
        return BorrowsScenario.run(new BorrowsScenario.Calls() {
            @Override
            public boolean tryLock(long k) {
                return Boolean.TRUE.equals(jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, k));
            }

            @Override
            public void job() {
                jdbc.execute("SELECT pg_sleep(0.02)");
            }

            @Override
            public boolean unlock(long k) {
                return Boolean.TRUE.equals(jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, k));
            }
        }, key, 8, 25, 120);
    }

    /** Every thread finished and ran jobs, none overlapping, every unlock true, no error, no lock left. */
    private static void assertExclusive(BorrowsScenario.Result guarded, int left) {
        assertTrue(guarded.finished(), guarded.toString());
        assertEquals(8, guarded.threadsDone(), guarded.toString());
        assertTrue(guarded.runs() > 0, guarded.toString());
        assertEquals(0, guarded.errors(), guarded.toString());
        assertEquals(0, guarded.overlapping(), guarded.toString());
        assertEquals(0, guarded.failedUnlocks(), guarded.toString());
        assertEquals(0, left, "no lock left");
    }

    /**
     * Issue 45: the starter's dependency and nothing else (no lockhygiene.* property at all) gives the
     * borrow-per-call workers PostgreSQL's semantics through the transaction pooler; the control is the test
     * below (lockhygiene.enabled=false).
     */
    @Test
    void theStarterAloneWithNoPropertyGuardsTheJob() throws Exception {
        String boot = SpringBootVersion.getVersion();
        BorrowsScenario.Result guarded;
        try (ConfigurableApplicationContext ctx = start()) {
            assertTrue(ctx.getBean(DataSource.class) instanceof LockHygieneDataSource, "the DataSource bean is wrapped");
            guarded = eightThreadsGuardOneJob(ctx.getBean(JdbcTemplate.class), 996_011);
        }
        int left = bed.admin().awaitReleased(996_011, 2_000).size();
        System.out.println("[spring boot " + boot + "] the starter, no property: " + guarded + ", left " + left);
        assertExclusive(guarded, left);
    }

    @Test
    void eightThreadsGuardOneJobThroughTheTransactionPooler() throws Exception {
        String boot = SpringBootVersion.getVersion();
        BorrowsScenario.Result plain;
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.enabled=false")) {
            assertTrue(ctx.getBean(DataSource.class) instanceof HikariDataSource, "lockhygiene.enabled=false: not wrapped");
            plain = eightThreadsGuardOneJob(ctx.getBean(JdbcTemplate.class), 996_001);
        }
        int plainLeft = bed.admin().awaitReleased(996_001, 1_000).size();
        System.out.println("[spring boot " + boot + "] plain (lockhygiene.enabled=false): " + plain + ", left " + plainLeft);
        assertEquals(8, plain.threadsDone(), plain.toString());
        assertTrue(plain.overlapping() > 0 || plain.failedUnlocks() > 0 || plainLeft > 0,
                "control: plain pgjdbc breaks the guard under transaction pooling " + plain);
        bed.admin().terminateHoldersOf(996_001);

        BorrowsScenario.Result direct;
        try (ConfigurableApplicationContext ctx = start(Route.DIRECT, "--lockhygiene.enabled=false")) {
            direct = eightThreadsGuardOneJob(ctx.getBean(JdbcTemplate.class), 996_003);
        }
        bed.admin().terminateHoldersOf(996_003);
        System.out.println("[spring boot " + boot + "] plain pgjdbc, direct (the liveness reference): " + direct);
        assertEquals(8, direct.threadsDone(), direct.toString());

        BorrowsScenario.Result guarded;
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=emulate")) {
            assertTrue(ctx.getBean(DataSource.class) instanceof LockHygieneDataSource, "the DataSource bean is wrapped");
            JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
            assertTrue(jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, 996_004L));
            assertEquals(List.of("lockhygiene lock holder"), bed.admin().applicationNamesHolding(996_004),
                    "the holder's own session holds it, none of the pool's");
            assertTrue(jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, 996_004L));
            guarded = eightThreadsGuardOneJob(jdbc, 996_002);
        }
        int left = bed.admin().awaitReleased(996_002, 2_000).size();
        System.out.println("[spring boot " + boot + "] lockhygiene.mode=emulate: " + guarded + ", left " + left);
        assertExclusive(guarded, left);
    }

    @Test
    void relaxedBindingWrapsOnceAndCountsAsMeters() throws Exception {
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=emulate", "--lockhygiene.pool-mode=transaction",
                "--lockhygiene.leak-check=always", "--lockhygiene.lock-timeout=2s")) {
            DataSource ds = ctx.getBean(DataSource.class);
            assertTrue(ds instanceof LockHygieneDataSource);
            Settings s = ((LockHygieneDataSource) ds).settings();
            assertEquals(Settings.Mode.EMULATE, s.mode());
            assertEquals(Settings.PoolMode.TRANSACTION, s.poolMode());
            assertEquals(Settings.LeakCheck.ALWAYS, s.leakCheck());
            assertEquals(2_000, s.lockTimeoutMillis());
            assertTrue(ds.unwrap(HikariDataSource.class).getMaximumPoolSize() == 4, "Boot still finds its pool");
            assertFalse(((LockHygieneDataSource) ds).getDelegate() instanceof LockHygieneDataSource, "wrapped once");

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            ctx.getBean(MeterBinder.class).bindTo(registry);
            double before = registry.get("lockhygiene.statements.seen").functionCounter().count();
            ctx.getBean(JdbcTemplate.class).queryForObject("SELECT 1", Integer.class);
            assertTrue(registry.get("lockhygiene.statements.seen").functionCounter().count() > before);
            assertTrue(registry.get("lockhygiene.leaks.released").functionCounter().count() >= 0);
        }
    }

    /**
     * lockhygiene.holder-url reaches the holder: the bed's session-mode PgBouncer entry is used (the lock is
     * held, and released on unlock); a URL of another cluster is refused at the first connection, with the
     * reason, as the driver refuses it.
     */
    @Test
    void holderUrlComesFromApplicationProperties() throws Exception {
        long key = 996_200;
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=emulate", "--lockhygiene.pool-mode=transaction",
                "--lockhygiene.holder-url=" + bed.sessionHolderUrl())) {
            assertEquals(bed.sessionHolderUrl(), ((LockHygieneDataSource) ctx.getBean(DataSource.class)).settings().holderUrl().url());
            JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
            assertTrue(jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, key));
            assertEquals(1, bed.admin().holdersOf(key).size());
            assertTrue(jdbc.queryForObject("SELECT pg_advisory_unlock(?)", Boolean.class, key));
            assertEquals(List.of(), bed.admin().holdersOf(key));
        }
        io.lockhygiene.it.bed.Holders.reset();
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=emulate", "--lockhygiene.pool-mode=transaction",
                "--spring.datasource.hikari.initialization-fail-timeout=-1",
                "--lockhygiene.holder-url=" + bed.secondClusterUrl())) {
            JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
            Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
                    () -> jdbc.queryForObject("SELECT pg_try_advisory_lock(?)", Boolean.class, key));
            StringBuilder messages = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertTrue(messages.toString().contains("reaches another database than the application"), messages.toString());
        }
    }

    /**
     * lockhygiene.monitor.*: the seed's alert from application properties. A planted advisory wait (a
     * session waiting for a key another holds) shows in the gauges once it is older than the threshold, and
     * leaves them when released; without lockhygiene.monitor.enabled there is no monitor at all.
     */
    @Test
    void theWaitMonitorFeedsTwoGaugesAndTheHealthContributor() throws Exception {
        try (ConfigurableApplicationContext off = start("--lockhygiene.mode=detect")) {
            assertTrue(off.getBeansOfType(io.lockhygiene.monitor.AdvisoryWaitMonitor.class).isEmpty(), "off by default");
        }
        try (ConfigurableApplicationContext noHealth = start("--lockhygiene.mode=detect", "--lockhygiene.monitor.enabled=true")) {
            assertTrue(!noHealth.containsBean("lockHygieneWaitsHealthIndicator"), "the health contributor is off by default");
        }
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=detect", "--lockhygiene.monitor.enabled=true",
                "--lockhygiene.monitor.threshold=300ms", "--lockhygiene.monitor.interval=100ms",
                "--lockhygiene.monitor.health.enabled=true")) {
            Object health = ctx.getBean("lockHygieneWaitsHealthIndicator");
            assertEquals("UP", status(health));
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            for (MeterBinder b : ctx.getBeansOfType(MeterBinder.class).values()) {
                b.bindTo(registry);
            }
            assertEquals(0.0, registry.get("lockhygiene.advisory.waits").gauge().value());
            try (io.lockhygiene.it.bed.PlantedWait planted = new io.lockhygiene.it.bed.PlantedWait(bed, "996300", "")) {
                double waits = 0;
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(15);
                while (waits < 1 && System.nanoTime() < until) {
                    Thread.sleep(100); // the monitor's own polls, read through the gauge
                    waits = registry.get("lockhygiene.advisory.waits").gauge().value();
                }
                assertEquals(1.0, waits, "the planted wait is seen");
                assertTrue(registry.get("lockhygiene.advisory.wait.longest").gauge().value() >= 0.3);
                assertEquals("DOWN", status(health), "health reads the same poll");
                planted.release();
                until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(15);
                while (waits > 0 && System.nanoTime() < until) {
                    Thread.sleep(100);
                    waits = registry.get("lockhygiene.advisory.waits").gauge().value();
                }
                assertEquals(0.0, waits, "and gone once released");
                assertEquals("UP", status(health));
            }
        }
    }

    /** health().getStatus().getCode() of either Boot's HealthIndicator (one test source for both). */
    private static String status(Object indicator) throws Exception {
        Object h = indicator.getClass().getInterfaces()[0].getMethod("health").invoke(indicator); // ours is package-private
        Object st = h.getClass().getMethod("getStatus").invoke(h);
        return (String) st.getClass().getMethod("getCode").invoke(st);
    }

    /** spring.flyway.url may be a jdbc:lockhygiene: URL (Flyway's plugin registration; see the driver's README). */
    @Test
    void springFlywayUrlMayBeALockHygieneUrl() throws Exception {
        try (java.sql.Connection c = bed.connect(Route.DIRECT); java.sql.Statement s = c.createStatement()) {
            s.execute("DROP SCHEMA IF EXISTS sb_flyway CASCADE");
        }
        String url = bed.lockHygieneUrl(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=emulate", "--spring.flyway.enabled=true",
                "--spring.flyway.url=" + url, "--spring.flyway.user=" + bed.endpoints().user(),
                "--spring.flyway.password=" + bed.endpoints().password(), "--spring.flyway.schemas=sb_flyway",
                "--spring.flyway.locations=classpath:db/springtest",
                "--spring.flyway.postgresql.transactional-lock=false")) {
            JdbcTemplate jdbc = ctx.getBean(JdbcTemplate.class);
            assertEquals(1, jdbc.queryForObject("SELECT count(*) FROM sb_flyway.applied_once", Integer.class));
            assertEquals(1, jdbc.queryForObject(
                    "SELECT count(*) FROM sb_flyway.flyway_schema_history WHERE success AND version = '1'", Integer.class));
        }
        assertEquals(List.of(), bed.admin().heldAdvisoryLocks(), "no lock left behind");
    }

    /**
     * lockhygiene.report from application properties: JVM-wide, so applied once before the first
     * connection (this test runs first in its JVM, as a service's first start would).
     */
    @Test
    @org.junit.jupiter.api.Order(1)
    void theReportFileComesFromApplicationProperties() throws Exception {
        java.nio.file.Path report = java.nio.file.Paths.get("target", "lockhygiene-report.jsonl").toAbsolutePath();
        java.nio.file.Files.deleteIfExists(report);
        try (ConfigurableApplicationContext ctx = start("--lockhygiene.mode=detect", "--lockhygiene.report=" + report)) {
            ctx.getBean(JdbcTemplate.class).execute("SELECT pg_advisory_lock(996100)");
        }
        String events = java.nio.file.Files.readString(report);
        assertTrue(events.contains("\"type\":\"LEAK_RELEASED\""), events);
        assertEquals(List.of(), bed.admin().holdersOf(996_100), "released at the statement's end");
    }
}
