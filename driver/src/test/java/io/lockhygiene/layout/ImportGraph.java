package io.lockhygiene.layout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Which package of a source tree uses which other package of the same tree: from import lines and from fully
 * qualified names in the code (comments and literals removed first, so a name in a message is no arrow).
 * Names of packages outside the tree (other modules, libraries) are left out.
 */
final class ImportGraph {
    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern QUALIFIED = Pattern.compile("\\bio\\.lockhygiene(?:\\.\\w+)+");

    /** package -> packages it uses -> the files that use them (as "File.java: name"). */
    private final Map<String, Map<String, Set<String>>> uses = new TreeMap<>();

    private ImportGraph() {
    }

    /** The graph of one {@code .java} source root. */
    static ImportGraph of(Path root) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(f -> f.toString().endsWith(".java")).sorted().collect(Collectors.toList());
        }
        Map<Path, String> packageOf = new TreeMap<>();
        Map<Path, String> code = new TreeMap<>();
        for (Path f : files) {
            String text = withoutCommentsAndLiterals(new String(Files.readAllBytes(f), java.nio.charset.StandardCharsets.UTF_8));
            Matcher m = PACKAGE.matcher(text);
            if (m.find()) {
                packageOf.put(f, m.group(1));
                code.put(f, text.substring(m.end()));
            }
        }
        ImportGraph g = new ImportGraph();
        Set<String> packages = new TreeSet<>(packageOf.values());
        packages.forEach(p -> g.uses.put(p, new TreeMap<>()));
        for (Map.Entry<Path, String> e : code.entrySet()) {
            String from = packageOf.get(e.getKey());
            Matcher m = QUALIFIED.matcher(e.getValue());
            while (m.find()) {
                String to = packageNamed(m.group(), packages);
                if (to != null && !to.equals(from)) {
                    g.add(from, to, e.getKey().getFileName() + ": " + m.group());
                }
            }
        }
        return g;
    }

    /** A graph given by hand: {@code "a -> b"} lines (for the tests of the rules themselves). */
    static ImportGraph of(String... arrows) {
        ImportGraph g = new ImportGraph();
        for (String a : arrows) {
            String[] ends = a.split("->");
            String from = ends[0].trim();
            g.uses.computeIfAbsent(from, k -> new TreeMap<>());
            if (ends.length > 1) {
                String to = ends[1].trim();
                g.uses.computeIfAbsent(to, k -> new TreeMap<>());
                g.add(from, to, "given");
            }
        }
        return g;
    }

    private void add(String from, String to, String where) {
        uses.computeIfAbsent(from, k -> new TreeMap<>()).computeIfAbsent(to, k -> new TreeSet<>()).add(where);
    }

    Set<String> packages() {
        return uses.keySet();
    }

    /** The packages {@code from} uses, and where. */
    Map<String, Set<String>> usesOf(String from) {
        return uses.getOrDefault(from, Map.of());
    }

    /**
     * The package of a qualified name (its parts before the first that starts with a capital, a type's), when it
     * is one of {@code packages}; null otherwise (another module's, such as the build's annotations).
     */
    private static String packageNamed(String name, Set<String> packages) {
        String[] parts = name.split("\\.");
        StringBuilder p = new StringBuilder(parts[0]);
        for (int i = 1; i < parts.length && !Character.isUpperCase(parts[i].charAt(0)); i++) {
            p.append('.').append(parts[i]);
        }
        String found = p.toString();
        return packages.contains(found) ? found : null;
    }

    /** Cycles of packages (strongly connected parts with more than one package), each sorted. */
    List<Set<String>> cycles() {
        List<Set<String>> found = new ArrayList<>();
        Map<String, Integer> index = new TreeMap<>();
        Map<String, Integer> low = new TreeMap<>();
        List<String> stack = new ArrayList<>();
        for (String p : uses.keySet()) {
            if (!index.containsKey(p)) {
                connect(p, index, low, stack, found);
            }
        }
        return found;
    }

    private void connect(String v, Map<String, Integer> index, Map<String, Integer> low, List<String> stack,
                         List<Set<String>> found) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.add(v);
        for (String w : usesOf(v).keySet()) {
            if (!index.containsKey(w)) {
                connect(w, index, low, stack, found);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (stack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> part = new TreeSet<>();
            String w;
            do {
                w = stack.remove(stack.size() - 1);
                part.add(w);
            } while (!w.equals(v));
            if (part.size() > 1) {
                found.add(part);
            }
        }
    }

    /** Java text with comments, string, text block and char literals blanked (lines kept). */
    static String withoutCommentsAndLiterals(String s) {
        StringBuilder b = new StringBuilder(s.length());
        int i = 0;
        int n = s.length();
        while (i < n) {
            char c = s.charAt(i);
            if (c == '/' && i + 1 < n && s.charAt(i + 1) == '/') {
                while (i < n && s.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && s.charAt(i + 1) == '*') {
                int end = s.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                blankKeepingLines(s, i, end, b);
                i = end;
            } else if (c == '"' && s.startsWith("\"\"\"", i)) {
                int end = s.indexOf("\"\"\"", i + 3);
                end = end < 0 ? n : end + 3;
                blankKeepingLines(s, i, end, b);
                i = end;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && s.charAt(j) != c && s.charAt(j) != '\n') {
                    j += s.charAt(j) == '\\' ? 2 : 1;
                }
                b.append(c).append(c);
                i = Math.min(n, j + 1);
            } else {
                b.append(c);
                i++;
            }
        }
        return b.toString();
    }

    private static void blankKeepingLines(String s, int from, int to, StringBuilder b) {
        for (int k = from; k < to; k++) {
            b.append(s.charAt(k) == '\n' ? '\n' : ' ');
        }
    }
}
