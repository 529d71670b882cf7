package io.lockhygiene.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** scan over a fixture tree with known findings, in all three formats. */
class ScanCommandTest {
    static final Path FIXTURES = Paths.get("src/test/resources/scan-fixtures");

    private static String[] run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] line = new String[args.length + 1];
        line[0] = "scan";
        System.arraycopy(args, 0, line, 1, args.length);
        int exit = Main.run(line, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[] {Integer.toString(exit), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void findsExactlyTheKnownFindingsWithRelativePathsAndPositions() {
        String[] r = run(FIXTURES.resolve("app").toString());
        assertEquals("1", r[0], r[2]);
        String p = FIXTURES.resolve("app").toString();
        List<String> lines = r[1].lines().map(l -> l.substring(0, l.indexOf(": ", l.indexOf(':', l.indexOf(':') + 1) + 1) + 1))
                .collect(Collectors.toList());
        assertEquals(List.of(
                p + "/db/schema.sql:4:11:",
                p + "/db/schema.sql:8:8:",
                p + "/src/Jobs.java:4:27:",
                p + "/src/Jobs.java:11:23:",
                p + "/src/Mapper.xml:4:12:",
                p + "/src/Worker.kt:3:10:"), lines, r[1]);
        assertTrue(r[1].contains("schema.sql:4:11: warning: session-level pg_advisory_lock") && r[1].contains("inside a DO block"), r[1]);
        assertTrue(r[1].contains("Jobs.java:11:23: note: FOR UPDATE ... SKIP LOCKED with [job_key]"), r[1]);
        assertTrue(r[1].contains("schema.sql:8:8: note: session-level pg_advisory_unlock_all"), r[1]);
        assertTrue(!r[1].contains("Jobs.java:6"), "lockhygiene:ignore suppresses");
    }

    @Test
    void jsonAndSarif() {
        String[] json = run(FIXTURES.resolve("app").toString(), "--format", "json");
        assertEquals("1", json[0]);
        assertEquals(6, json[1].split("\"rule\":").length - 1, json[1]);
        assertTrue(json[1].contains("\"file\":\"" + FIXTURES.resolve("app") + "/src/Jobs.java\",\"line\":4,\"column\":27"), json[1]);
        String[] sarif = run(FIXTURES.resolve("app").toString(), "--format=sarif");
        assertEquals("1", sarif[0]);
        assertTrue(sarif[1].startsWith("{\"$schema\":") && sarif[1].contains("\"version\":\"2.1.0\""), sarif[1]);
        assertEquals(6, sarif[1].split("\"ruleId\":").length - 1);
        assertTrue(sarif[1].contains("\"region\":{\"startLine\":4,\"startColumn\":11}"), sarif[1]);
    }

    @Test
    void cleanTreeExitsZeroAndUsageErrorsTwo() {
        assertEquals("0", run(FIXTURES.resolve("clean").toString())[0]);
        assertEquals("2", run()[0]);
        assertEquals("2", run("does-not-exist")[0]);
        assertEquals("2", run(FIXTURES.toString(), "--format", "xml")[0]);
        assertEquals("0", run("--help")[0]);
    }

    @Test
    void oddInputNeverCrashes(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve("binary.sql"), new byte[] {1, 0, 2, 3});
        Files.writeString(dir.resolve("huge.sql"), "SELECT '".repeat(200_000) + " pg_advisory_lock(1)");
        Files.writeString(dir.resolve("nested.sql"), "/*".repeat(100_000) + "pg_advisory_lock(1)");
        Files.writeString(dir.resolve("Broken.java"), "class X { String s = \"SELECT pg_advisory_lock(1)");
        Files.write(dir.resolve("latin1.sql"), "SELECT 'caf\u00e9', pg_advisory_lock(2);".getBytes(StandardCharsets.ISO_8859_1));
        String[] r = run(dir.toString());
        assertEquals("1", r[0], r[2]);
        assertTrue(r[2].contains("binary"), r[2]);
        assertTrue(r[1].contains("Broken.java:1:30:"), r[1]);
        assertTrue(r[1].contains("latin1.sql:1:16:"), r[1]);
    }

    @Test
    void aBaselineAcceptsWhatItListsEvenWhenTheLinesMoveAndNothingElse(@TempDir Path dir) throws Exception {
        Path src = dir.resolve("src");
        Files.createDirectories(src);
        Files.writeString(src.resolve("jobs.sql"), "SELECT pg_advisory_lock(1);\n");
        Path baseline = dir.resolve("baseline.txt");
        String[] written = run(src.toString(), "--baseline", baseline.toString(), "--write-baseline");
        assertEquals("0", written[0], written[2]);
        assertEquals(1, Files.readAllLines(baseline).stream().filter(l -> !l.startsWith("#")).count());
        // the accepted call moves down two lines: still accepted
        Files.writeString(src.resolve("jobs.sql"), "-- moved\n\n   SELECT   pg_advisory_lock(1);\n");
        String[] accepted = run(src.toString(), "--baseline", baseline.toString());
        assertEquals("0", accepted[0], accepted[1] + accepted[2]);
        assertTrue(accepted[2].contains("1 finding(s) accepted"), accepted[2]);
        // a new call is not in the baseline: reported, exit 1
        Files.writeString(src.resolve("jobs.sql"), "SELECT pg_advisory_lock(1);\nSELECT pg_try_advisory_lock(2);\n");
        String[] fresh = run(src.toString(), "--baseline", baseline.toString());
        assertEquals("1", fresh[0], fresh[1]);
        assertTrue(fresh[1].contains("jobs.sql:2:8:") && !fresh[1].contains("jobs.sql:1:"), fresh[1]);
        assertEquals("2", run(src.toString(), "--write-baseline")[0]);
    }
}
