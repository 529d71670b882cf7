package io.lockhygiene.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parser: help, usage errors and exit statuses, one duration syntax. */
class MainTest {

    private static String[] run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new String[] {Integer.toString(exit), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
    }

    @Test
    void helpAndUsageErrors() {
        String[] help = run("--help");
        assertEquals("0", help[0]);
        for (String command : new String[] {"scan", "doctor", "monitor", "attach"}) {
            assertTrue(help[1].contains(command), help[1]);
            String[] one = run(command, "--help");
            assertEquals("0", one[0], one[2]);
            assertTrue(one[1].startsWith("Usage: java -jar lockhygiene-cli.jar " + command), one[1]);
        }
        assertEquals("2", run()[0]);
        String[] bogus = run("bogus");
        assertEquals("2", bogus[0]);
        assertTrue(bogus[2].contains("bogus"), bogus[2]);
        assertEquals("2", run("attach")[0], "attach needs a pid");
        assertEquals("2", run("doctor")[0], "doctor needs --url");
        assertEquals("2", run("scan")[0], "scan needs a path");
        String[] format = run("scan", ".", "--format", "xml");
        assertEquals("2", format[0]);
        assertTrue(format[2].contains("text, json, sarif"), format[2]);
        String[] badDuration = run("monitor", "--url", "jdbc:postgresql://127.0.0.1:1/x", "--threshold", "soon");
        assertEquals("2", badDuration[0]);
        assertTrue(badDuration[2].contains("500ms"), badDuration[2]);
    }

    @Test
    void oneDurationSyntaxWithTheSettings() {
        DurationConverter c = new DurationConverter();
        assertEquals(Duration.ofMillis(250), c.convert("250"));
        assertEquals(Duration.ofMillis(250), c.convert("250ms"));
        assertEquals(Duration.ofSeconds(30), c.convert("30s"));
        assertEquals(Duration.ofMinutes(5), c.convert("5m"));
        assertEquals(Duration.ZERO, c.convert("0"));
        assertThrows(TypeConversionException.class, () -> c.convert("-1s"));
        assertThrows(TypeConversionException.class, () -> c.convert("1h"));
    }
}
