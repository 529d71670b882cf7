package io.lockhygiene.agent.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code scan PATH... [--format text|json|sarif]}: the static check. Exit 0 clean, 1 findings, 2 usage or
 * I/O error. Binary files and files over 64 MiB are skipped (said on stderr); nothing crashes it.
 */
public final class ScanCommand {
    static final long MAX_BYTES = 64L * 1024 * 1024;

    private ScanCommand() {
    }

    public static String help() {
        return "Usage: java -jar lockhygiene-agent.jar scan PATH... [--format text|json|sarif]\n"
                + "Statically checks .sql files and SQL in string literals (text blocks too) of .java and .kt files and\n"
                + "in MyBatis-style .xml files, walking directories, for session-level advisory lock calls (also inside\n"
                + "DO blocks and function bodies) and SKIP LOCKED pinned by equality (a note: the key cannot be known\n"
                + "without the catalog). Output: file:line:column: message, or JSON, or SARIF 2.1.0. A comment\n"
                + "'lockhygiene:ignore' on the line suppresses a finding. Exit 0 clean, 1 findings, 2 usage or I/O error.";
    }

    public static int run(List<String> args, PrintStream out, PrintStream err) {
        String format = "text";
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if ("--help".equals(a) || "-h".equals(a)) {
                out.println(help());
                return 0;
            } else if ("--format".equals(a) && i + 1 < args.size()) {
                format = args.get(++i);
            } else if (a.startsWith("--format=")) {
                format = a.substring("--format=".length());
            } else if (a.startsWith("--")) {
                err.println("scan: unknown option " + a + "\n" + help());
                return 2;
            } else {
                paths.add(a);
            }
        }
        if (paths.isEmpty() || !List.of("text", "json", "sarif").contains(format)) {
            err.println(help());
            return 2;
        }
        List<Finding> findings = new ArrayList<>();
        boolean ioError = false;
        for (String given : paths) {
            Path root = Paths.get(given);
            if (!Files.exists(root)) {
                err.println("scan: no such file or directory: " + given);
                ioError = true;
                continue;
            }
            List<Path> files;
            try (Stream<Path> walk = Files.walk(root)) {
                files = walk.filter(Files::isRegularFile).filter(ScanCommand::isScanned).sorted().collect(Collectors.toList());
            } catch (IOException | RuntimeException e) {
                err.println("scan: cannot walk " + given + ": " + e);
                ioError = true;
                continue;
            }
            for (Path file : files) {
                try {
                    String content = read(file, err);
                    if (content != null) {
                        findings.addAll(SourceScan.scan(file.toString(), content));
                    }
                } catch (IOException | RuntimeException | StackOverflowError e) {
                    err.println("scan: cannot read " + file + ": " + e);
                    ioError = true;
                }
            }
        }
        findings.sort(java.util.Comparator.comparing((Finding f) -> f.file).thenComparingInt(f -> f.line)
                .thenComparingInt(f -> f.column));
        print(findings, format, out);
        if (ioError) {
            return 2;
        }
        return findings.isEmpty() ? 0 : 1;
    }

    static boolean isScanned(Path p) {
        String n = p.getFileName().toString().toLowerCase(java.util.Locale.ROOT);
        return n.endsWith(".sql") || n.endsWith(".java") || n.endsWith(".kt") || n.endsWith(".xml");
    }

    /** The text, or null for a file skipped as binary or too large (said on stderr). */
    private static String read(Path file, PrintStream err) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            err.println("scan: skipped " + file + " (" + size + " bytes, over " + MAX_BYTES + ")");
            return null;
        }
        byte[] bytes = Files.readAllBytes(file);
        for (int i = 0; i < Math.min(bytes.length, 8192); i++) {
            if (bytes[i] == 0) {
                err.println("scan: skipped " + file + " (binary)");
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

    static void print(List<Finding> findings, String format, PrintStream out) {
        if ("json".equals(format)) {
            out.print("[");
            for (int i = 0; i < findings.size(); i++) {
                Finding f = findings.get(i);
                out.print((i == 0 ? "\n  " : ",\n  ") + "{\"file\":" + io.lockhygiene.events.JsonText.quote(f.file) + ",\"line\":" + f.line
                        + ",\"column\":" + f.column + ",\"rule\":" + io.lockhygiene.events.JsonText.quote(f.rule) + ",\"severity\":"
                        + io.lockhygiene.events.JsonText.quote(f.severity) + ",\"message\":" + io.lockhygiene.events.JsonText.quote(f.message) + "}");
            }
            out.println(findings.isEmpty() ? "]" : "\n]");
        } else if ("sarif".equals(format)) {
            StringBuilder sb = new StringBuilder();
            sb.append("{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{")
                    .append("\"tool\":{\"driver\":{\"name\":\"LockHygiene\",")
                    .append("\"rules\":[{\"id\":\"").append(SourceScan.RULE_SESSION).append("\",\"shortDescription\":{\"text\":")
                    .append(io.lockhygiene.events.JsonText.quote("Session-level advisory lock call")).append("}},{\"id\":\"").append(SourceScan.RULE_SKIP)
                    .append("\",\"shortDescription\":{\"text\":").append(io.lockhygiene.events.JsonText.quote("SKIP LOCKED pinned to one key"))
                    .append("}}]}},\"results\":[");
            for (int i = 0; i < findings.size(); i++) {
                Finding f = findings.get(i);
                sb.append(i == 0 ? "" : ",").append("{\"ruleId\":").append(io.lockhygiene.events.JsonText.quote(f.rule)).append(",\"level\":")
                        .append(io.lockhygiene.events.JsonText.quote(f.severity)).append(",\"message\":{\"text\":").append(io.lockhygiene.events.JsonText.quote(f.message))
                        .append("},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":")
                        .append(io.lockhygiene.events.JsonText.quote(f.file.replace('\\', '/'))).append("},\"region\":{\"startLine\":").append(f.line)
                        .append(",\"startColumn\":").append(f.column).append("}}}]}");
            }
            out.println(sb.append("]}]}"));
        } else {
            for (Finding f : findings) {
                out.println(f.file + ":" + f.line + ":" + f.column + ": " + f.severity + ": " + f.message);
            }
        }
    }
}
