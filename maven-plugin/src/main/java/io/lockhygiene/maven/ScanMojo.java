package io.lockhygiene.maven;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

import io.lockhygiene.cli.Finding;
import io.lockhygiene.cli.SourceTreeScan;

/**
 * {@code lockhygiene:scan}: the static check of {@code java -jar lockhygiene-cli.jar scan}, as a build step. Reads
 * .sql, .java, .kt and .xml files under the project's {@code src} (session-level advisory lock calls, also in
 * DO blocks and function bodies; SKIP LOCKED pinned by equality), writes the findings in the chosen format
 * and fails the build on any finding the baseline does not accept. Bound to {@code verify}, as Checkstyle's
 * and SpotBugs' {@code check} are.
 */
@Mojo(name = "scan", defaultPhase = LifecyclePhase.VERIFY, threadSafe = true)
public final class ScanMojo extends AbstractMojo {
    @Parameter(defaultValue = "${project.basedir}", readonly = true, required = true)
    File basedir;

    @Parameter(defaultValue = "${project.build.directory}", readonly = true, required = true)
    File buildDirectory;

    /** Files or directories to scan; the project's {@code src} when not set. */
    @Parameter
    List<File> directories;

    /** {@code text}, {@code json} or {@code sarif} (SARIF 2.1.0, for code scanning dashboards). */
    @Parameter(property = "lockhygiene.scan.format", defaultValue = "text")
    String format;

    /** Where the findings are written; {@code target/lockhygiene/scan.txt|json|sarif} when not set. */
    @Parameter(property = "lockhygiene.scan.outputFile")
    File outputFile;

    /** Findings the team has accepted (one fingerprint per line; see {@code writeBaseline}). */
    @Parameter(property = "lockhygiene.scan.baseline", defaultValue = "${project.basedir}/lockhygiene-baseline.txt")
    File baseline;

    /** Write every current finding to the baseline file and pass: the way to accept today's findings. */
    @Parameter(property = "lockhygiene.scan.writeBaseline", defaultValue = "false")
    boolean writeBaseline;

    /** {@code note} (every finding fails, as the command line does) or {@code warning} (notes are only listed). */
    @Parameter(property = "lockhygiene.scan.failOn", defaultValue = "note")
    String failOn;

    @Parameter(property = "lockhygiene.skip", defaultValue = "false")
    boolean skip;

    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        if (skip) {
            getLog().info("LockHygiene scan skipped (lockhygiene.skip)");
            return;
        }
        SourceTreeScan.Format fmt = parseFormat(format);
        boolean notesFail = parseFailOn(failOn);
        List<Path> roots = new ArrayList<>();
        if (directories == null || directories.isEmpty()) {
            Path src = basedir.toPath().resolve("src");
            if (Files.exists(src)) {
                roots.add(src); // a project without src has nothing to scan; a named directory that is missing is an error
            }
        } else {
            for (File d : directories) {
                roots.add(d.toPath());
            }
        }
        SourceTreeScan.Result result = SourceTreeScan.scan(roots, basedir.toPath());
        result.skipped().forEach(s -> getLog().info("LockHygiene scan: " + s));
        if (!result.problems().isEmpty()) {
            throw new MojoExecutionException("LockHygiene scan could not read everything: "
                    + String.join("; ", result.problems()));
        }
        try {
            if (writeBaseline) {
                SourceTreeScan.writeBaseline(baseline.toPath(), result.findings());
                getLog().info("LockHygiene scan: wrote " + result.findings().size() + " finding(s) to " + baseline
                        + "; commit it, and these findings no longer fail the build");
                return;
            }
            Set<String> accepted = SourceTreeScan.readBaseline(baseline.toPath());
            List<Finding> reported = SourceTreeScan.notIn(accepted, result.findings());
            int acceptedCount = result.findings().size() - reported.size();
            Path out = outputFile != null ? outputFile.toPath()
                    : buildDirectory.toPath().resolve("lockhygiene").resolve("scan." + (fmt == SourceTreeScan.Format.text ? "txt" : fmt.name()));
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.write(out, SourceTreeScan.render(reported, fmt).getBytes(StandardCharsets.UTF_8));
            List<Finding> failing = new ArrayList<>();
            for (Finding f : reported) {
                String line = f.file() + ":" + f.line() + ":" + f.column() + ": " + f.message() + " [" + f.rule() + "]";
                if (notesFail || "warning".equals(f.severity())) {
                    getLog().error(line);
                    failing.add(f);
                } else {
                    getLog().warn(line);
                }
            }
            String tally = result.findings().size() + " finding(s) in " + roots.size() + " location(s)"
                    + (acceptedCount > 0 ? ", " + acceptedCount + " accepted by " + basedir.toPath().relativize(baseline.toPath().toAbsolutePath()) : "")
                    + "; written to " + out;
            if (failing.isEmpty()) {
                getLog().info("LockHygiene scan: " + tally);
                return;
            }
            throw new MojoFailureException("LockHygiene scan: " + failing.size() + " finding(s) fail the build (" + tally
                    + "). Fix them (each line above says how), mark a line 'lockhygiene:ignore', or accept today's"
                    + " findings with -Dlockhygiene.scan.writeBaseline=true and commit " + baseline.getName() + ".");
        } catch (IOException e) {
            throw new MojoExecutionException("LockHygiene scan: " + e, e);
        }
    }

    static SourceTreeScan.Format parseFormat(String format) throws MojoExecutionException {
        try {
            return SourceTreeScan.Format.valueOf(format.trim().toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new MojoExecutionException("lockhygiene.scan.format must be text, json or sarif, not '" + format + "'");
        }
    }

    static boolean parseFailOn(String failOn) throws MojoExecutionException {
        String v = failOn.trim().toLowerCase(Locale.ROOT);
        if (!v.equals("note") && !v.equals("warning")) {
            throw new MojoExecutionException("lockhygiene.scan.failOn must be note or warning, not '" + failOn + "'");
        }
        return v.equals("note");
    }
}
