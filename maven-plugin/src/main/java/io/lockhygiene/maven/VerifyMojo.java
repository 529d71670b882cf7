package io.lockhygiene.maven;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Date;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import org.apache.maven.plugin.AbstractMojo;
import org.apache.maven.plugin.MojoExecutionException;
import org.apache.maven.plugin.MojoFailureException;
import org.apache.maven.plugins.annotations.LifecyclePhase;
import org.apache.maven.plugins.annotations.Mojo;
import org.apache.maven.plugins.annotations.Parameter;

import io.lockhygiene.events.EventType;

/**
 * {@code lockhygiene:verify}: after {@code integration-test}, fails the build when the report file that the test
 * JVMs wrote ({@code lockhygiene.report}) holds a violation: a leaked or inherited session lock released, a
 * statement rejected, a single-key SKIP LOCKED statement. The way failsafe's {@code verify} fails a build on
 * the results its {@code integration-test} left, with a summary and each violation's SQL and stack.
 * Events from before this build started (the file is appended to) are not counted.
 */
@Mojo(name = "verify", defaultPhase = LifecyclePhase.VERIFY, threadSafe = true)
public final class VerifyMojo extends AbstractMojo {
    /** The report file the test JVMs write: give them the same path as {@code -Dlockhygiene.report=...}. */
    @Parameter(property = "lockhygiene.report", defaultValue = "${project.build.directory}/lockhygiene/events.jsonl")
    File reportFile;

    /** Fail when there is no report file (the test JVMs were not given lockhygiene.report, or no test ran). */
    @Parameter(property = "lockhygiene.verify.failIfNoReport", defaultValue = "false")
    boolean failIfNoReport;

    /** How many violations the failure lists in full. */
    @Parameter(property = "lockhygiene.verify.shown", defaultValue = "10")
    int shown;

    @Parameter(defaultValue = "${session.request.startTime}", readonly = true)
    Date buildStarted;

    @Parameter(property = "lockhygiene.skip", defaultValue = "false")
    boolean skip;

    @Parameter(property = "skipTests", defaultValue = "false")
    boolean skipTests;

    @Override
    public void execute() throws MojoExecutionException, MojoFailureException {
        if (skip || skipTests) {
            getLog().info("LockHygiene verify skipped (" + (skip ? "lockhygiene.skip" : "skipTests") + ")");
            return;
        }
        if (!reportFile.isFile()) {
            String why = "LockHygiene verify: no report file " + reportFile + "; give the test JVMs -Dlockhygiene.report="
                    + reportFile + " (failsafe's systemPropertyVariables), or the events are not seen here";
            if (failIfNoReport) {
                throw new MojoFailureException(why);
            }
            getLog().warn(why);
            return;
        }
        Instant since = buildStarted == null ? Instant.EPOCH : buildStarted.toInstant();
        List<Map<String, String>> violations = new ArrayList<>();
        Map<EventType, Integer> counts = new EnumMap<>(EventType.class);
        int events = 0;
        int older = 0;
        int unreadable = 0;
        List<String> lines;
        try {
            lines = Files.readAllLines(reportFile.toPath(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new MojoExecutionException("LockHygiene verify: cannot read " + reportFile + ": " + e, e);
        }
        for (String line : lines) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, String> event = EventLines.parse(line);
            EventType type = event == null ? null : typeOf(event.get("type"));
            if (type == null) {
                unreadable++;
                continue;
            }
            if (before(event.get("time"), since)) {
                older++;
                continue;
            }
            events++;
            if (type.isViolation()) {
                counts.merge(type, 1, Integer::sum);
                violations.add(event);
            }
        }
        if (unreadable > 0) {
            getLog().warn("LockHygiene verify: " + unreadable + " line(s) of " + reportFile + " are not events (cut off?)");
        }
        String tally = events + " event(s) from this build in " + reportFile
                + (older > 0 ? " (" + older + " older one(s) from an earlier build not counted)" : "");
        if (violations.isEmpty()) {
            getLog().info("LockHygiene verify: no violations; " + tally);
            return;
        }
        getLog().error("LockHygiene: " + violations.size() + " advisory-lock violation(s): " + summary(counts) + "; " + tally);
        for (int i = 0; i < Math.min(shown, violations.size()); i++) {
            getLog().error(describe(violations.get(i)));
        }
        if (violations.size() > shown) {
            getLog().error("... and " + (violations.size() - shown) + " more in " + reportFile);
        }
        throw new MojoFailureException("LockHygiene: " + violations.size() + " advisory-lock violation(s) in the test run ("
                + summary(counts) + "). Each is listed above with its SQL and where the lock was taken; fix the"
                + " code, or allow a test's deliberate violation with @AllowLockHygieneViolation.");
    }

    private static EventType typeOf(String name) {
        if (name == null) {
            return null;
        }
        try {
            return EventType.valueOf(name);
        } catch (IllegalArgumentException newerDriver) {
            return null;
        }
    }

    private static boolean before(String time, Instant since) {
        if (time == null) {
            return false;
        }
        try {
            return Instant.parse(time).isBefore(since);
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    static String summary(Map<EventType, Integer> counts) {
        List<String> parts = new ArrayList<>();
        counts.forEach((t, n) -> parts.add(n + " " + noun(t)));
        return String.join(", ", parts);
    }

    private static String noun(EventType t) {
        switch (t) {
            case LEAK_RELEASED: return "leaked lock(s) released";
            case INHERITED_RELEASED: return "inherited lock(s) released";
            case REJECTED: return "statement(s) rejected";
            case SKIP_LOCKED_SINGLE_KEY: return "single-key SKIP LOCKED statement(s)";
            default: return t.name();
        }
    }

    /** One violation in a few lines: type, key, message, SQL, and the first frames of where it happened. */
    static String describe(Map<String, String> e) {
        StringBuilder sb = new StringBuilder();
        sb.append(e.get("type"));
        if (e.containsKey("function")) {
            sb.append(' ').append(e.get("function"));
        }
        if (e.containsKey("key")) {
            sb.append(" key ").append(e.get("key"));
        }
        if (e.containsKey("message")) {
            sb.append(": ").append(e.get("message"));
        }
        if (e.containsKey("sql")) {
            sb.append("\n    SQL: ").append(e.get("sql"));
        }
        String stack = e.get("stack");
        if (stack != null) {
            int shownFrames = 0;
            for (String frame : stack.split("\n")) {
                String f = frame.trim();
                if (f.startsWith("at ") && !f.startsWith("at io.lockhygiene.internal.") && !f.startsWith("at org.postgresql.")
                        && !f.startsWith("at com.zaxxer.") && !f.startsWith("at java.") && !f.startsWith("at jdk.")
                        && !f.startsWith("at org.junit.") && !f.startsWith("at org.apache.maven.")) {
                    sb.append("\n    ").append(f);
                    if (++shownFrames == 3) {
                        break;
                    }
                }
            }
        }
        return sb.toString();
    }
}
