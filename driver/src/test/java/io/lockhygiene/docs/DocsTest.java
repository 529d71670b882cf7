package io.lockhygiene.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.lockhygiene.settings.LockHygieneProperty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The documentation cannot drift: the configuration reference is the {@link LockHygieneProperty} enum's (every key, its
 * default and values, nothing that does not exist), every relative link of README.md, CONTRIBUTING.md and
 * docs/ reaches a file (and its {@code #anchor} a heading there), and the README stays short.
 */
class DocsTest {
    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();
    /** Keys of ours that are not connection settings: the starter's switch. */
    private static final Set<String> NOT_SETTINGS = Set.of("lockhygiene.enabled");
    private static final Pattern KEY = Pattern.compile("(?<![\\w.])lockhygiene\\.([a-z][A-Za-z]*)(?![\\w.-])");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @Test
    void theConfigurationReferenceIsTheSettingEnums() throws IOException {
        String page = read(ROOT.resolve("docs/configuration.md"));
        assertEquals(ConfigurationReference.merged(page), page,
                "docs/configuration.md differs from the LockHygieneProperty enum: run bin/config-reference");
        for (LockHygieneProperty s : LockHygieneProperty.values()) {
            assertTrue(page.contains("| `" + s.key() + "` | `" + s.envName() + "` | `"), s.key() + " is not documented");
        }
    }

    @Test
    void everyKeyTheDocsNameExists() throws IOException {
        List<String> unknown = new ArrayList<>();
        for (Path p : pages()) {
            Matcher m = KEY.matcher(read(p));
            while (m.find()) {
                String key = m.group();
                if (LockHygieneProperty.byKey(key) == null && !NOT_SETTINGS.contains(key)) {
                    unknown.add(ROOT.relativize(p) + ": " + key);
                }
            }
        }
        assertEquals(List.of(), unknown, "documented keys that are not settings");
    }

    @Test
    void everyRelativeLinkReachesAFileAndItsHeading() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path p : pages()) {
            Matcher m = LINK.matcher(read(p));
            while (m.find()) {
                String target = m.group(1);
                if (target.matches("(?i)(https?|mailto):.*")) {
                    continue;
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path to = file.isEmpty() ? p : p.getParent().resolve(file).normalize();
                if (!Files.exists(to)) {
                    broken.add(ROOT.relativize(p) + ": " + target + " (no such file)");
                } else if (hash >= 0 && to.toString().endsWith(".md")
                        && !anchors(read(to)).contains(target.substring(hash + 1))) {
                    broken.add(ROOT.relativize(p) + ": " + target + " (no such heading)");
                }
            }
        }
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void theReadmeIsReadInFiveMinutes() throws IOException {
        long lines = Files.readAllLines(ROOT.resolve("README.md"), StandardCharsets.UTF_8).size();
        assertTrue(lines <= 300, "README.md has " + lines + " lines; the rest belongs in docs/");
    }

    /** GitHub's anchors: lower case, punctuation but '-' and '_' dropped, spaces to '-'. */
    static Set<String> anchors(String page) {
        Set<String> out = new HashSet<>();
        boolean fence = false;
        for (String line : page.split("\n")) {
            if (line.startsWith("```")) {
                fence = !fence;
            }
            if (!fence && line.startsWith("#")) {
                String title = line.replaceFirst("^#+\\s*", "").trim().toLowerCase(Locale.ROOT);
                out.add(title.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
            }
        }
        return out;
    }

    private static List<Path> pages() throws IOException {
        List<Path> out = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            out.addAll(docs.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
        }
        return out;
    }

    private static String read(Path p) throws IOException {
        return Files.readString(p, StandardCharsets.UTF_8);
    }
}
