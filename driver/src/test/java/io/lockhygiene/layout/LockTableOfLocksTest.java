package io.lockhygiene.layout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.lockhygiene.internal.util.LockOrder;
import org.junit.jupiter.api.Test;

/**
 * The lock-order table ({@link LockOrder}) names exactly the locks that exist: each place is made once in the
 * driver's sources, and no other lock is made there but the short JDK monitors its comment names.
 */
class LockTableOfLocksTest {
    private static final Path SOURCES = Paths.get("src/main/java");
    private static final Pattern MADE = Pattern.compile("new OrderedLock\\(LockOrder\\.(\\w+)\\)");
    /** The JDK monitors LockOrder's comment names (file: what), each a leaf. */
    private static final Set<String> MONITORS = Set.of("ThreadOwners.java: synchronizedMap",
            "UnlockWatch.java: synchronizedMap", "ReportLog.java: synchronized", "Log.java: synchronized");

    @Test
    void everyPlaceIsMadeOnceAndNoOtherLockExists() throws IOException {
        Map<LockOrder, List<String>> made = new EnumMap<>(LockOrder.class);
        Set<String> otherLocks = new TreeSet<>();
        for (Path f : javaFiles()) {
            String name = f.getFileName().toString();
            String code = ImportGraph.withoutCommentsAndLiterals(new String(Files.readAllBytes(f), StandardCharsets.UTF_8));
            Matcher m = MADE.matcher(code);
            while (m.find()) {
                made.computeIfAbsent(LockOrder.valueOf(m.group(1)), k -> new ArrayList<>()).add(name);
            }
            if (!name.equals("OrderedLock.java") && code.matches("(?s).*\\b(ReentrantLock|ReentrantReadWriteLock|StampedLock)\\b.*")) {
                otherLocks.add(name + ": java.util.concurrent lock");
            }
            if (code.contains("synchronizedMap") || code.contains("synchronizedSet") || code.contains("synchronizedList")) {
                otherLocks.add(name + ": synchronizedMap");
            }
            if (code.matches("(?s).*\\bsynchronized\\b(?!Map|Set|List).*")) {
                otherLocks.add(name + ": synchronized");
            }
        }
        for (LockOrder place : LockOrder.values()) {
            assertEquals(1, made.getOrDefault(place, List.of()).size(), place + " is made exactly once: " + made.get(place));
        }
        Set<String> unlisted = new TreeSet<>(otherLocks);
        unlisted.removeAll(MONITORS);
        assertTrue(unlisted.isEmpty(), "locks that are not in LockOrder: " + unlisted);
        assertEquals(MONITORS, otherLocks, "LockOrder's comment names only monitors that exist");
    }

    private static List<Path> javaFiles() throws IOException {
        try (Stream<Path> s = Files.walk(SOURCES)) {
            return s.filter(f -> f.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
    }
}
