package io.lockhygiene;

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
 * The house rules of the driver's hand-written sources (issue 34), kept by the build: no file over 350 lines
 * (nested types count with their file), no package over 20 files.
 */
class LayoutTest {
    private static final Path SOURCES = Paths.get("src/main/java");
    private static final int MAX_LINES = 350;
    private static final int MAX_FILES_PER_PACKAGE = 20;

    @Test
    void noFileIsLongerThanAReaderCanHold() throws IOException {
        Map<String, Integer> tooLong = new TreeMap<>();
        for (Path f : javaFiles()) {
            int lines = Files.readAllLines(f).size();
            if (lines > MAX_LINES) {
                tooLong.put(SOURCES.relativize(f).toString(), lines);
            }
        }
        assertTrue(javaFiles().size() > 100, "the sources were found");
        assertTrue(tooLong.isEmpty(), "over " + MAX_LINES + " lines: " + tooLong);
    }

    @Test
    void noPackageHasMoreThanTwentyFiles() throws IOException {
        Map<Path, Long> perPackage = javaFiles().stream()
                .filter(f -> !f.getFileName().toString().equals("package-info.java"))
                .collect(Collectors.groupingBy(Path::getParent, TreeMap::new, Collectors.counting()));
        Map<Path, Long> crowded = new TreeMap<>();
        perPackage.forEach((p, n) -> {
            if (n > MAX_FILES_PER_PACKAGE) {
                crowded.put(SOURCES.relativize(p), n);
            }
        });
        assertTrue(perPackage.size() > 10, "the packages were found");
        assertTrue(crowded.isEmpty(), "over " + MAX_FILES_PER_PACKAGE + " files: " + crowded);
    }

    private static List<Path> javaFiles() throws IOException {
        try (Stream<Path> s = Files.walk(SOURCES)) {
            return s.filter(f -> f.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
    }
}
