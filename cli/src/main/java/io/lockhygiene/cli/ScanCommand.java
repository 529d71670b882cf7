package io.lockhygiene.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import io.lockhygiene.internal.policy.Rule;
import io.lockhygiene.internal.util.JsonWriter;

/**
 * {@code scan PATH... [--format text|json|sarif]}: the static check. Exit 0 clean, 1 findings, 2 usage or
 * I/O error. Binary files and files over 64 MiB are skipped (said on stderr); nothing crashes it.
 */
@Command(name = "scan", usageHelpAutoWidth = true,
        description = {"Static check of .sql, .java, .kt and .xml files.", "Statically checks .sql files and SQL in string literals (text blocks too) of .java and .kt"
                + " files and in MyBatis-style .xml files, walking directories, for session-level advisory lock calls"
                + " (also inside DO blocks and function bodies) and SKIP LOCKED pinned by equality (a note: the key"
                + " cannot be known without the catalog).", "Output: file:line:column: message, or JSON, or SARIF"
                + " 2.1.0. A comment 'lockhygiene:ignore' on the line suppresses a finding.",
                "Exit 0 clean, 1 findings, 2 usage or I/O error."})
final class ScanCommand implements Callable<Integer> {
    static final long MAX_BYTES = 64L * 1024 * 1024;

    @Parameters(arity = "1..*", paramLabel = "PATH", description = "files or directories to walk")
    List<String> paths;

    @Option(names = "--format", defaultValue = "text", paramLabel = "FORMAT",
            description = "text, json or sarif (default: ${DEFAULT-VALUE})")
    Format format;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this help")
    boolean help;

    @Spec
    CommandSpec spec;

    enum Format { text, json, sarif }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
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
    private static String read(Path file, PrintWriter err) throws IOException {
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
    }
}
