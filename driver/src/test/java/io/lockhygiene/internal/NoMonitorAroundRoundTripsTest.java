package io.lockhygiene.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * On Java 21 to 23 a virtual thread that blocks inside a {@code synchronized} block pins its carrier; the
 * driver's rule is no monitor around a round trip or a file write (a ReentrantLock instead, as pgjdbc 42.6
 * did). Every {@code synchronized} left in the driver is listed here with why it is harmless: a new one
 * fails this test until it is read and added, or replaced.
 */
class NoMonitorAroundRoundTripsTest {
    /** file -> monitors allowed in it, each around memory only. */
    private static final Map<String, Integer> ALLOWED = Map.of(
            "internal/log/Log.java", 1,            // resolving the logging sink once (reflection, no I/O)
            "internal/leak/ReportLog.java", 2);    // a counter and a set of seen keys

    @Test
    void everyMonitorInTheDriverIsAroundMemoryOnly() throws IOException {
        Path root = Paths.get("src/main/java/io/lockhygiene");
        assertTrue(Files.isDirectory(root), "run from the driver module: " + root.toAbsolutePath());
        Pattern monitor = Pattern.compile("\\bsynchronized\\b(?!Map|List|Set|Collection)");
        Map<String, Integer> found = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                int n = 0;
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    String code = line.replaceAll("//.*", "").trim();
                    if (code.startsWith("*") || code.startsWith("/*")) {
                        continue;
                    }
                    Matcher m = monitor.matcher(code.replace("Collections.synchronized", ""));
                    while (m.find()) {
                        n++;
                    }
                }
                if (n > 0) {
                    found.put(root.relativize(f).toString().replace('\\', '/'), n);
                }
            }
        }
        assertEquals(new TreeMap<>(ALLOWED), found);
    }
}
