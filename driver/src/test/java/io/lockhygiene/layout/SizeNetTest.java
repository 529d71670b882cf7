package io.lockhygiene.layout;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * A generous size net over every module's hand-written main sources: no file over 500 lines (nested types count
 * with their file). Files are split where there is a seam, not where a count says so; this only catches a class
 * that has become several.
 */
class SizeNetTest {
    private static final Path REPOSITORY = Paths.get("..");
    private static final int MAX_LINES = 500;

    @Test
    void noFileIsLongerThanAReaderCanHold() throws IOException {
        Map<String, Integer> tooLong = new TreeMap<>();
        List<Path> files = mainSources();
        for (Path f : files) {
            int lines = Files.readAllLines(f).size();
            if (lines > MAX_LINES) {
                tooLong.put(REPOSITORY.relativize(f).toString(), lines);
            }
        }
        assertTrue(files.size() > 200, "the sources were found: " + files.size());
        assertTrue(tooLong.isEmpty(), "over " + MAX_LINES + " lines: " + tooLong);
    }

    private static List<Path> mainSources() throws IOException {
        try (Stream<Path> s = Files.walk(REPOSITORY)) {
            return s.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> f.toString().contains("/src/main/java/"))
                    .filter(f -> !f.toString().contains("/target/"))
                    .sorted().collect(Collectors.toList());
        }
    }
}
