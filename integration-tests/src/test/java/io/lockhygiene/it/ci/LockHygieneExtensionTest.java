package io.lockhygiene.it.ci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Collectors;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.lockhygiene.junit.AllowLockHygieneViolation;
import io.lockhygiene.junit.LockHygieneExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The JUnit 5 extension, run through the JUnit Platform launcher on fixture classes (static nested, so
 * neither Surefire nor JUnit runs them on their own): the suite stays green while a fixture fails.
 */
@ExtendWith(TestBedExtension.class)
class LockHygieneExtensionTest {

    static void leak(long key) throws SQLException {
        try (Connection c = TestBed.shared().connectLockHygiene(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            s.execute("SELECT pg_advisory_lock(" + key + ")"); // released by detect at statement end, and reported
        }
    }

    static void hygienic(long key) throws SQLException {
        try (Connection c = TestBed.shared().connectLockHygiene(Route.TRANSACTION_POOL); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            s.execute("SELECT pg_advisory_xact_lock(" + key + ")");
            c.commit();
        }
    }

    @ExtendWith(LockHygieneExtension.class)
    static class LeakingFixture {
        @Test
        void leaksALock() throws SQLException {
            leak(990_001);
        }
    }

    @ExtendWith(LockHygieneExtension.class)
    static class CleanFixture {
        @Test
        void usesTransactionLocks() throws SQLException {
            hygienic(990_002);
        }
    }

    @ExtendWith(LockHygieneExtension.class)
    static class AllowedFixture {
        @Test
        @AllowLockHygieneViolation(value = EventType.LEAK_RELEASED, key = "990003", reason = "demonstrates the leak report")
        void leaksOnPurpose() throws SQLException {
            leak(990_003);
        }
    }

    @ExtendWith(LockHygieneExtension.class)
    @Execution(ExecutionMode.CONCURRENT)
    static class ParallelFixture {
        @Test
        void leaks() throws SQLException {
            for (int i = 0; i < 5; i++) {
                leak(990_010 + i);
            }
        }

        @Test
        void staysClean() throws SQLException, InterruptedException {
            for (int i = 0; i < 20; i++) {
                hygienic(990_020 + i);
                Thread.sleep(5);
            }
        }
    }

    private static TestExecutionSummary run(Class<?> fixture) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(selectClass(fixture))
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "true")
                .build();
        Launcher launcher = LauncherFactory.create();
        SummaryGeneratingListener listener = new SummaryGeneratingListener();
        launcher.execute(request, listener);
        return listener.getSummary();
    }

    private static List<String> failures(TestExecutionSummary s) {
        return s.getFailures().stream()
                .map(f -> f.getTestIdentifier().getDisplayName() + ": " + f.getException().getMessage())
                .collect(Collectors.toList());
    }

    @Test
    void failsALeakingTestAndNamesTheViolation() {
        TestExecutionSummary s = run(LeakingFixture.class);
        assertEquals(1, s.getTestsFailedCount(), failures(s).toString());
        String message = failures(s).get(0);
        assertTrue(message.contains("LEAK_RELEASED key 990001 mode ExclusiveLock via pg_advisory_lock"), message);
        assertTrue(message.contains("SQL: SELECT pg_advisory_lock(990001)"), message);
        assertTrue(message.contains("taken at:") && message.contains("LockHygieneExtensionTest.leak("), message);
    }

    @Test
    void passesACleanTest() {
        TestExecutionSummary s = run(CleanFixture.class);
        assertEquals(1, s.getTestsSucceededCount(), failures(s).toString());
        assertEquals(0, s.getTestsFailedCount());
    }

    @Test
    void anAnnotationAllowsAnIntendedViolation() {
        TestExecutionSummary s = run(AllowedFixture.class);
        assertEquals(0, s.getTestsFailedCount(), failures(s).toString());
    }

    @Test
    void parallelTestsDoNotSeeEachOthersEvents() {
        TestExecutionSummary s = run(ParallelFixture.class);
        List<String> failures = failures(s);
        assertEquals(1, s.getTestsFailedCount(), failures.toString());
        assertTrue(failures.get(0).startsWith("leaks()"), failures.toString());
        assertEquals(1, s.getTestsSucceededCount());
    }
}
