package io.lockhygiene.it.vthreads;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A thread-owner service on virtual threads (Java 21 API, run on the newest JDK of this machine): lock,
 * job and unlock on three borrows of a 4-connection HikariCP pool through the transaction-mode PgBouncer,
 * under a JFR recording of every pinned virtual thread ({@code jdk.VirtualThreadPinned}, threshold 0).
 * LockHygiene must keep exclusion and pin no carrier in its own code; the plain pool (the control) overlaps.
 * Under CI it fails when no JDK 21 or later is found; elsewhere it is skipped (LOCKHYGIENE_TEST_JDK21 names one).
 */
@ExtendWith(TestBedExtension.class)
class VirtualThreadsTest {
    private static final int THREADS = 16;
    private static final int JOBS = 5;
    private final TestBed bed = TestBed.shared();

    /** A JDK of version 21 or later: LOCKHYGIENE_TEST_JDK21, else the newest under /usr/lib/jvm. */
    static Optional<Path> modernJdk() throws IOException {
        String named = System.getenv("LOCKHYGIENE_TEST_JDK21");
        if (named != null && !named.isBlank()) {
            return Optional.of(Paths.get(named));
        }
        Path jvms = Paths.get("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        Path best = null;
        int bestVersion = 20;
        try (Stream<Path> dirs = Files.list(jvms)) {
            for (Path d : (Iterable<Path>) dirs::iterator) {
                Path release = d.resolve("release");
                if (!Files.isRegularFile(release) || !Files.isExecutable(d.resolve("bin/java"))
                        || !Files.isExecutable(d.resolve("bin/jfr"))) {
                    continue;
                }
                for (String line : Files.readAllLines(release, StandardCharsets.UTF_8)) {
                    if (line.startsWith("JAVA_VERSION=")) {
                        String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                        int major = Integer.parseInt(v.split("[.+-]")[0]);
                        if (major > bestVersion) {
                            bestVersion = major;
                            best = d;
                        }
                    }
                }
            }
        }
        return Optional.ofNullable(best);
    }

    record Run(int ran, int done, int overlaps, int failedUnlocks, int errors, int pinnedInOurCode, int pinnedAll,
               String output) {
    }

    private Run run(Path jdk, boolean wrap, long key, Path jfr) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(jdk.resolve("bin/java").toString(),
                "-XX:StartFlightRecording:jdk.VirtualThreadPinned#enabled=true,jdk.VirtualThreadPinned#threshold=0ms,"
                        + "filename=" + jfr,
                "-cp", System.getProperty("java.class.path"), VirtualThreadWorkersMain.class.getName(),
                bed.url(Route.TRANSACTION_POOL), bed.endpoints().user(), bed.endpoints().password(), Long.toString(key),
                Integer.toString(THREADS), Integer.toString(JOBS), Boolean.toString(wrap)));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(180, TimeUnit.SECONDS), "the child ends");
        String done = out.lines().filter(l -> l.startsWith("DONE ")).findFirst().orElseThrow(
                () -> new AssertionError("no DONE line from the child:\n" + out));
        String[] f = done.split(" ");
        Process print = new ProcessBuilder(jdk.resolve("bin/jfr").toString(), "print", "--events", "jdk.VirtualThreadPinned",
                jfr.toString()).redirectErrorStream(true).start();
        String events = new String(print.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(print.waitFor(60, TimeUnit.SECONDS));
        int all = 0;
        int ours = 0;
        StringBuilder oursText = new StringBuilder();
        for (String event : events.split("jdk\\.VirtualThreadPinned \\{")) {
            if (event.contains("startTime")) {
                all++;
                // ours: the frame that blocked is LockHygiene's. Class loading, class initialisation and the JDK's
                // poller pin under our frames too: the JVM's doing, once per class, not a monitor of ours. (On
                // JDK 24 and later a monitor no longer pins at all, JEP 491; for Java 21 to 23 the driver's
                // NoMonitorAroundRoundTripsTest keeps synchronized away from round trips and file writes.)
                int frames = event.indexOf("stackTrace = [");
                String top = frames < 0 ? "" : event.substring(frames + "stackTrace = [".length()).trim();
                if (top.startsWith("io.lockhygiene.") && !event.contains("Waited for initialization of")) {
                    ours++;
                    oursText.append(event, 0, Math.min(event.length(), 1500)).append('\n');
                }
            }
        }
        return new Run(Integer.parseInt(f[1]), Integer.parseInt(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4]),
                Integer.parseInt(f[5]), ours, all, (out.length() > 4000 ? out.substring(0, 4000) : out) + oursText);
    }

    @Test
    void virtualThreadsKeepTheirLocksAcrossBorrowsAndPinNoCarrierInOurCode() throws Exception {
        Optional<Path> jdk = modernJdk();
        if (System.getenv("CI") != null) {
            // CI's machine kind carries JDK 25: there the test must run, never skip
            org.junit.jupiter.api.Assertions.assertTrue(jdk.isPresent(), "CI needs a JDK 21 or later (LOCKHYGIENE_TEST_JDK21)");
        }
        Assumptions.assumeTrue(jdk.isPresent(), "no JDK 21 or later on this machine (LOCKHYGIENE_TEST_JDK21 names one)");
        Path dir = Files.createTempDirectory("lh-vthreads");
        Run guarded = run(jdk.get(), true, 985_501, dir.resolve("guarded.jfr"));
        System.out.println("[virtual threads] " + jdk.get().getFileName() + ", emulate: ran " + guarded.ran() + " threads, "
                + guarded.done() + " jobs, " + guarded.overlaps() + " overlaps, " + guarded.failedUnlocks()
                + " failed unlocks, " + guarded.errors() + " errors; pinned events " + guarded.pinnedAll() + " (in our code "
                + guarded.pinnedInOurCode() + ")");
        assertEquals(THREADS, guarded.ran(), "every virtual thread ran");
        assertEquals(THREADS * JOBS, guarded.done(), guarded.output());
        assertEquals(0, guarded.overlaps(), guarded.output());
        assertEquals(0, guarded.failedUnlocks(), guarded.output());
        assertEquals(0, guarded.errors(), guarded.output());
        assertEquals(0, guarded.pinnedInOurCode(), "a carrier pinned inside LockHygiene: " + guarded.output());

        assertEquals(List.of(), bed.admin().awaitReleased(985_501, 10_000), "emulate left nothing held after its exit");
        Run plain = run(jdk.get(), false, 985_502, dir.resolve("plain.jfr"));
        System.out.println("[virtual threads] control, plain HikariCP: ran " + plain.ran() + " threads, " + plain.done()
                + " jobs, " + plain.overlaps() + " overlaps, " + plain.failedUnlocks() + " failed unlocks, "
                + plain.errors() + " errors");
        assertEquals(THREADS, plain.ran(), "every virtual thread ran");
        assertTrue(plain.overlaps() + plain.failedUnlocks() + plain.errors() > 0,
                "control: session locks across borrows of a transaction pool exclude nothing " + plain);
        try (var c = bed.connect(Route.DIRECT); var s = c.createStatement()) {
            // keys of this test only; the plain control leaves its locks on pooled servers
            s.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid IN (985501, 985502)"
                    + " AND pid <> pg_backend_pid()");
        }
        for (File f : dir.toFile().listFiles()) {
            f.delete();
        }
        dir.toFile().delete();
    }
}
