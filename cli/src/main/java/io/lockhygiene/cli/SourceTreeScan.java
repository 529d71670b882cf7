package io.lockhygiene.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.lockhygiene.internal.policy.Rule;
import io.lockhygiene.internal.util.JsonWriter;

/**
 * The static scan over files and directories, shared by the {@code scan} command and the Maven plugin's
 * {@code scan} goal: which files are read, how findings are sorted and printed (text, JSON, SARIF 2.1.0), and
 * the baseline (findings a team has accepted). Files that cannot be read are problems, not crashes; binary
 * files and files over 64 MiB are skipped and said so.
 */
public final class SourceTreeScan {
    static final long MAX_BYTES = 64L * 1024 * 1024;

    /** Output formats. */
    public enum Format { text, json, sarif }

    /** Findings in order, and what could not be read (each a sentence). */
    public static final class Result {
        private final List<Finding> findings;
        private final List<String> problems;
        private final List<String> skipped;

        Result(List<Finding> findings, List<String> problems, List<String> skipped) {
            this.findings = Collections.unmodifiableList(findings);
            this.problems = Collections.unmodifiableList(problems);
            this.skipped = Collections.unmodifiableList(skipped);
        }

        public List<Finding> findings() {
            return findings;
        }

        public List<String> problems() {
            return problems;
        }

        public List<String> skipped() {
            return skipped;
        }
    }

    private SourceTreeScan() {
    }

    /**
     * @param roots      files or directories
     * @param relativeTo when not null, findings name files relative to it (stable across machines, as a
     *                   baseline needs); otherwise as walked from the given roots
     */
    public static Result scan(List<Path> roots, Path relativeTo) {
        List<Finding> findings = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (Path root : roots) {
            if (!Files.exists(root)) {
                problems.add("no such file or directory: " + root);
                continue;
            }
            List<Path> files;
            try (Stream<Path> walk = Files.walk(root)) {
                files = walk.filter(Files::isRegularFile).filter(SourceTreeScan::isScanned).sorted()
                        .collect(Collectors.toList());
            } catch (IOException | RuntimeException e) {
                problems.add("cannot walk " + root + ": " + e);
                continue;
            }
            for (Path file : files) {
                try {
                    String content = read(file, skipped);
                    if (content != null) {
                        String shown = relativeTo == null ? file.toString()
                                : relativeTo.toAbsolutePath().normalize().relativize(file.toAbsolutePath().normalize())
                                        .toString().replace('\\', '/');
                        findings.addAll(SourceScan.scan(shown, content));
                    }
                } catch (IOException | RuntimeException | StackOverflowError e) {
                    problems.add("cannot read " + file + ": " + e);
                }
            }
        }
        findings.sort(Comparator.comparing((Finding f) -> f.file).thenComparingInt(f -> f.line)
                .thenComparingInt(f -> f.column));
        return new Result(findings, problems, skipped);
    }

    static boolean isScanned(Path p) {
        String n = p.getFileName().toString().toLowerCase(Locale.ROOT);
        return n.endsWith(".sql") || n.endsWith(".java") || n.endsWith(".kt") || n.endsWith(".xml");
    }

    /** The text, or null for a file skipped as binary or too large (said in {@code skipped}). */
    private static String read(Path file, List<String> skipped) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            skipped.add("skipped " + file + " (" + size + " bytes, over " + MAX_BYTES + ")");
            return null;
        }
        byte[] bytes = Files.readAllBytes(file);
        for (int i = 0; i < Math.min(bytes.length, 8192); i++) {
            if (bytes[i] == 0) {
                skipped.add("skipped " + file + " (binary)");
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException notUtf8) {
            return new String(bytes, StandardCharsets.ISO_8859_1); // positions stay right for ASCII SQL
        }
    }

    /** The baseline's accepted fingerprints; an absent file accepts nothing. Lines starting with # are comments. */
    public static Set<String> readBaseline(Path file) throws IOException {
        Set<String> accepted = new LinkedHashSet<>();
        if (file == null || !Files.exists(file)) {
            return accepted;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isEmpty() && !line.startsWith("#")) {
                accepted.add(line);
            }
        }
        return accepted;
    }

    /** The findings whose fingerprint the baseline does not hold. */
    public static List<Finding> notIn(Set<String> baseline, List<Finding> findings) {
        return findings.stream().filter(f -> !baseline.contains(f.fingerprint())).collect(Collectors.toList());
    }

    /** Writes every finding's fingerprint as the new baseline (sorted, so that its diffs review well). */
    public static void writeBaseline(Path file, List<Finding> findings) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add("# LockHygiene scan baseline: findings this project has accepted, one per line (rule, file,");
        lines.add("# the line's text). Remove a line to fail on that finding again.");
        findings.stream().map(Finding::fingerprint).distinct().sorted().forEach(lines::add);
        if (file.toAbsolutePath().getParent() != null) {
            Files.createDirectories(file.toAbsolutePath().getParent());
        }
        Files.write(file, lines, StandardCharsets.UTF_8);
    }

    /** The findings in one format, as the command prints them. */
    public static String render(List<Finding> findings, Format format) {
        StringWriter s = new StringWriter();
        print(findings, format, new PrintWriter(s));
        return s.toString();
    }

    static void print(List<Finding> findings, Format format, PrintWriter out) {
        if (format == Format.json) {
            JsonWriter json = new JsonWriter().beginArray();
            for (Finding f : findings) {
                json.beginObject().field("file", f.file).field("line", f.line).field("column", f.column)
                        .field("rule", f.rule).field("severity", f.severity).field("message", f.message).endObject();
            }
            out.println(json.endArray());
        } else if (format == Format.sarif) {
            JsonWriter sarif = new JsonWriter().beginObject()
                    .field("$schema", "https://json.schemastore.org/sarif-2.1.0.json").field("version", "2.1.0")
                    .name("runs").beginArray().beginObject()
                    .name("tool").beginObject().name("driver").beginObject().field("name", "LockHygiene")
                    .name("rules").beginArray();
            for (Rule r : Rule.values()) {
                sarif.beginObject().field("id", r.id()).name("shortDescription").beginObject()
                        .field("text", r.title()).endObject().endObject();
            }
            sarif.endArray().endObject().endObject().name("results").beginArray();
            for (Finding f : findings) {
                sarif.beginObject().field("ruleId", f.rule).field("level", f.severity)
                        .name("message").beginObject().field("text", f.message).endObject()
                        .name("locations").beginArray().beginObject().name("physicalLocation").beginObject()
                        .name("artifactLocation").beginObject().field("uri", f.file.replace('\\', '/')).endObject()
                        .name("region").beginObject().field("startLine", f.line).field("startColumn", f.column)
                        .endObject().endObject().endObject().endArray().endObject();
            }
            out.println(sarif.endArray().endObject().endArray().endObject());
        } else {
            for (Finding f : findings) {
                out.println(f.file + ":" + f.line + ":" + f.column + ": " + f.severity + ": " + f.message);
            }
        }
        out.flush();
    }
}
