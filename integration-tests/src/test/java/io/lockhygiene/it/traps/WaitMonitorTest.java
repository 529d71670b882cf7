package io.lockhygiene.it.traps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.management.ObjectName;

import io.lockhygiene.it.bed.PlantedWait;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.monitor.AdvisoryWait;
import io.lockhygiene.monitor.AdvisoryWaitMonitor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A real blocked pg_advisory_lock, found through the transaction-mode PgBouncer. */
@ExtendWith(TestBedExtension.class)
class WaitMonitorTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void reportsABlockedBackendOncePerEpisodeAndNothingUnderTheThreshold() throws Exception {
        long key = 980_001;
        try (PlantedWait planted = new PlantedWait(bed, Long.toString(key), " /* the waiting job */")) {
            int holderPid = planted.holderPid;
            int waiterPid = planted.waiterPid;
            Properties credentials = bed.credentials();
            try (AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor
                    .forUrl(bed.url(Route.TRANSACTION_POOL), credentials)
                    .threshold(Duration.ofMillis(2_000)).interval(Duration.ofMillis(100)).name("test-" + key).build()) {
                // a wait younger than the threshold is not reported (the first poll comes right after the plant)
                assertEquals(List.of(), monitor.poll(), "under the threshold: no report");
                assertEquals(0, monitor.getEpisodesReported());
                List<AdvisoryWait> waits = List.of();
                long until = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(15);
                while (waits.isEmpty() && System.nanoTime() < until) {
                    waits = monitor.poll(); // until the wait is older than the threshold, as observed by the monitor
                    if (waits.isEmpty()) {
                        Thread.sleep(100);
                    }
                }
                assertEquals(1, waits.size(), waits.toString());
                AdvisoryWait w = waits.get(0);
                assertEquals(waiterPid, w.blockedPid());
                assertEquals(holderPid, w.blockingPid());
                assertEquals(Long.toString(key), w.key());
                assertTrue(w.waitMillis() >= 2_000);
                assertTrue(w.blockedQuery().contains("the waiting job"));
                assertEquals("Lock", w.waitEventType());
                monitor.poll();
                monitor.poll();
                assertEquals(1, monitor.getEpisodesReported(), "one WARN per episode, not per poll");
                assertEquals(1, monitor.getCurrentWaits());
                planted.release();
                assertEquals(List.of(), monitor.poll());
                assertEquals(0, monitor.getCurrentWaits());
            }
        }
    }

    @Test
    void classIdFilterAndJmx() throws Exception {
        try (PlantedWait planted = new PlantedWait(bed, "4711, 9", "")) {
            try (AdvisoryWaitMonitor other = AdvisoryWaitMonitor.forUrl(bed.url(Route.DIRECT), bed.credentials())
                    .threshold(Duration.ofMillis(100)).classId(1234).name("other").build();
                 AdvisoryWaitMonitor mine = AdvisoryWaitMonitor.forUrl(bed.url(Route.DIRECT), bed.credentials())
                         .threshold(Duration.ofMillis(100)).interval(Duration.ofMillis(100)).classId(4711).name("mine").start()) {
                ObjectName name = new ObjectName("io.lockhygiene:type=AdvisoryWaitMonitor,name=\"mine\"");
                Object current = 0;
                for (int i = 0; i < 50 && !Integer.valueOf(1).equals(current); i++) {
                    Thread.sleep(100); // the started monitor's own polls, read over JMX
                    current = ManagementFactory.getPlatformMBeanServer().getAttribute(name, "CurrentWaits");
                }
                assertEquals(1, current);
                // the wait is over the threshold now (mine reports it): the other class id must still not see it
                assertEquals(List.of(), other.poll());
                assertEquals("(4711, 9)", mine.poll().get(0).key());
            }
        }
    }

    @Test
    void survivesTheServerGoingAwayAndComingBack() throws Exception {
        AtomicBoolean down = new AtomicBoolean(true);
        java.util.concurrent.CountDownLatch scheduledFailures = new java.util.concurrent.CountDownLatch(3);
        java.util.concurrent.CountDownLatch scheduledRecovery = new java.util.concurrent.CountDownLatch(1);
        AtomicBoolean started = new AtomicBoolean();
        try (AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor.forDataSource(io.lockhygiene.it.bed.OpaqueDataSource.of(() -> {
            // a port nothing listens on while "down", the real server after
            if (down.get()) {
                if (started.get()) {
                    scheduledFailures.countDown();
                }
                return java.sql.DriverManager.getConnection("jdbc:postgresql://127.0.0.1:1/x?connectTimeout=2",
                        bed.credentials());
            }
            Connection up = bed.connect(Route.TRANSACTION_POOL);
            if (started.get()) {
                scheduledRecovery.countDown();
            }
            return up;
        })).threshold(Duration.ofSeconds(1)).interval(Duration.ofMillis(50)).name("flaky").build()) {
            assertThrows(SQLException.class, monitor::poll);
            started.set(true);
            monitor.start(); // the scheduled polls log the outage once and keep going
            assertTrue(scheduledFailures.await(30, java.util.concurrent.TimeUnit.SECONDS),
                    "the scheduled polls went on through three failures");
            down.set(false);
            assertTrue(scheduledRecovery.await(30, java.util.concurrent.TimeUnit.SECONDS),
                    "a scheduled poll reached the server once it was back");
            assertEquals(List.of(), monitor.poll());
        }
    }
}
