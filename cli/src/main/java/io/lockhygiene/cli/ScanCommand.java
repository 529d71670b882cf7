package io.lockhygiene.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code scan PATH... [--format text|json|sarif] [--baseline FILE [--write-baseline]]}: the static check (the
 * walk and the formats are {@link SourceTreeScan}'s). Exit 0 clean, 1 findings, 2 usage or I/O error.
 */
@Command(name = "scan", usageHelpAutoWidth = true,
        description = {"Static check of .sql, .java, .kt and .xml files.", "Statically checks .sql files and SQL in string literals (text blocks too) of .java and .kt"
                + " files and in MyBatis-style .xml files, walking directories, for session-level advisory lock calls"
                + " (also inside DO blocks and function bodies) and SKIP LOCKED pinned by equality (a note: the key"
                + " cannot be known without the catalog).", "Output: file:line:column: message, or JSON, or SARIF"
                + " 2.1.0. A comment 'lockhygiene:ignore' on the line suppresses a finding.",
                "--baseline FILE: findings listed there (accepted by the team) are not reported; --write-baseline"
                + " writes every current finding there instead.",
                "Exit 0 clean, 1 findings, 2 usage or I/O error."})
final class ScanCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "PATH", description = "files or directories to walk")
    List<String> paths;

    @Option(names = "--format", defaultValue = "text", paramLabel = "FORMAT",
            description = "text, json or sarif (default: ${DEFAULT-VALUE})")
    SourceTreeScan.Format format;

    @Option(names = "--baseline", paramLabel = "FILE", description = "accepted findings, not reported")
    Path baseline;

    @Option(names = "--write-baseline", description = "write the current findings to --baseline FILE and exit 0")
    boolean writeBaseline;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this help")
    boolean help;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (writeBaseline && baseline == null) {
            err.println("scan: --write-baseline needs --baseline FILE");
            return 2;
        }
        SourceTreeScan.Result r = SourceTreeScan.scan(paths.stream().map(Paths::get).collect(Collectors.toList()), null);
        r.skipped().forEach(s -> err.println("scan: " + s));
        r.problems().forEach(p -> err.println("scan: " + p));
        List<Finding> findings = r.findings();
        try {
            if (writeBaseline) {
                SourceTreeScan.writeBaseline(baseline, findings);
                err.println("scan: wrote " + findings.size() + " finding(s) to " + baseline);
                return r.problems().isEmpty() ? 0 : 2;
            }
            if (baseline != null) {
                Set<String> accepted = SourceTreeScan.readBaseline(baseline);
                int all = findings.size();
                findings = SourceTreeScan.notIn(accepted, findings);
                if (all > findings.size()) {
                    err.println("scan: " + (all - findings.size()) + " finding(s) accepted by " + baseline);
                }
            }
        } catch (IOException e) {
            err.println("scan: baseline " + baseline + ": " + e);
            return 2;
        }
        SourceTreeScan.print(findings, format, out);
        if (!r.problems().isEmpty()) {
            return 2;
        }
        return findings.isEmpty() ? 0 : 1;
    }
}
