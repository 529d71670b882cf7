package io.lockhygiene.it.settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 14, items 2 and 3: what a user asked for and cannot get is said at connect, never ignored.
 */
@ExtendWith(TestBedExtension.class)
class ConnectTimeChecksTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void jvmWideSettingsOnAUrlAreRefusedSayingWhereTheyBelong() {
        for (String param : List.of("lockhygiene.report=/tmp/lh-report.jsonl", "lockhygiene.failOnViolation=true")) {
            SQLException e = assertThrows(SQLException.class,
                    () -> bed.connectLockHygiene(Route.DIRECT, param).close());
            assertEquals("HY024", e.getSQLState());
            assertTrue(e.getMessage().contains("JVM-wide") && e.getMessage().contains("-Dlockhygiene."), e.getMessage());
        }
    }

    /** A child JVM with the test class path minus JSqlParser. */
    private String runWithoutJSqlParser(String skipLocked) throws Exception {
        String cp = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.contains("jsqlparser")).collect(Collectors.joining(File.pathSeparator));
        List<String> cmd = new ArrayList<>(List.of(
                Paths.java(), "-cp", cp, ConnectMain.class.getName(),
                bed.lockHygieneUrl(Route.DIRECT, "lockhygiene.skipLocked=" + skipLocked),
                bed.endpoints().user(), bed.endpoints().password()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return out;
    }

    @Test
    void strictWithoutJSqlParserFailsConnectNamingTheDependencyAndWarnDegradesWithAWarning() throws Exception {
        String strict = runWithoutJSqlParser("strict");
        assertTrue(strict.contains("RESULT refused HY024") && strict.contains("com.github.jsqlparser:jsqlparser"), strict);
        String warn = runWithoutJSqlParser("warn");
        assertTrue(warn.contains("RESULT connected"), warn);
        assertTrue(warn.contains("WARN") && warn.contains("JSqlParser"), warn);
    }

    /** The java of this JVM. */
    private static final class Paths {
        static String java() {
            return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        }
    }
}
