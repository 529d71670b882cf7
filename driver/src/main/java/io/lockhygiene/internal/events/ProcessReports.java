package io.lockhygiene.internal.events;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.internal.util.JsonWriter;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * The JVM-wide outputs for CI, configured by system property, environment variable or agent option
 * (never per connection):
 * <ul>
 *   <li>{@code lockhygiene.report=PATH}: every event appended to PATH as one JSON object per line;</li>
 *   <li>{@code lockhygiene.failOnViolation=true}: at JVM exit, when a leak, an inherited lock, a rejection
 *       or a SKIP LOCKED single-key statement was seen, a one-paragraph summary goes to stderr and the
 *       JVM exits with status {@value #EXIT_STATUS}.</li>
 * </ul>
 * Events carry no credentials; SQL is already cut as logSql says.
 */
public final class ProcessReports implements LockHygieneListener {
    /** The exit status of a JVM with failOnViolation=true that saw a violation. */
    public static final int EXIT_STATUS = 3;

    private final BufferedWriter report;
    /** Guards {@link #report}: one writer at a time, the file write inside (never a monitor, see onEvent). */
    private final OrderedLock reportLock = new OrderedLock(LockOrder.PROCESS_REPORT);
    private final boolean failOnViolation;
    private final Map<EventType, AtomicLong> counts = new EnumMap<>(EventType.class);
    private final AtomicLong violations = new AtomicLong();

    private ProcessReports(BufferedWriter report, boolean failOnViolation) {
        this.report = report;
        this.failOnViolation = failOnViolation;
        for (EventType t : EventType.values()) {
            counts.put(t, new AtomicLong());
        }
    }

    /**
     * Opens the report (when {@code path} is set) and registers the listener and the exit hook. Called once,
     * by {@link ProcessReportsSwitch}, only when a report or failOnViolation is configured.
     */
    static void start(String path, boolean fail) {
        BufferedWriter writer = null;
        if (path != null && !path.isEmpty()) {
            try {
                Path p = Paths.get(path);
                if (p.getParent() != null) {
                    Files.createDirectories(p.getParent());
                }
                writer = Files.newBufferedWriter(p, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND, StandardOpenOption.WRITE);
            } catch (IOException | RuntimeException e) {
                Log.warn("LockHygiene: cannot write the event report {} ({}); events are only logged", path, e.toString());
            }
        }
        ProcessReports reports = new ProcessReports(writer, fail);
        Events.addListener(reports);
        Runtime.getRuntime().addShutdownHook(new Thread(reports::atExit, "lockhygiene-report-at-exit"));
    }

    static boolean isViolation(EventType t) {
        return t.isViolation();
    }

    @Override
    public void onEvent(LockHygieneEvent e) {
        counts.get(e.type()).incrementAndGet();
        if (isViolation(e.type())) {
            violations.incrementAndGet();
        }
        if (report != null) {
            String line = toJson(e);
            // a ReentrantLock, not synchronized: a virtual thread that writes here must not pin its carrier
            reportLock.lock();
            try {
                report.write(line);
                report.newLine();
                report.flush();
            } catch (IOException ex) {
                Log.debug("LockHygiene: event report write failed: {}", ex.toString());
            } finally {
                reportLock.unlock();
            }
        }
    }

    private void atExit() {
        if (report != null) {
            reportLock.lock();
            try {
                report.close();
            } catch (IOException ignored) {
                // nothing more to write
            } finally {
                reportLock.unlock();
            }
        }
        if (failOnViolation && violations.get() > 0) {
            System.err.println("LockHygiene: this run had " + violations.get() + " advisory-lock violation(s): "
                    + counts.get(EventType.LEAK_RELEASED) + " leaked lock(s) released, "
                    + counts.get(EventType.INHERITED_RELEASED) + " inherited lock(s) released, "
                    + counts.get(EventType.REJECTED) + " statement(s) rejected, "
                    + counts.get(EventType.SKIP_LOCKED_SINGLE_KEY) + " single-key SKIP LOCKED statement(s)."
                    + " The log lines (or lockhygiene.report) name each with its SQL and the stack where it happened."
                    + " lockhygiene.failOnViolation=true sets the exit status to " + EXIT_STATUS + ".");
            System.err.flush();
            Runtime.getRuntime().halt(EXIT_STATUS);
        }
    }

    /** One event as a JSON object (no credentials: SQL is already cut, URLs never appear). */
    static String toJson(LockHygieneEvent e) {
        JsonWriter json = new JsonWriter().beginObject()
                .field("time", e.time().toString())
                .field("type", e.type().name())
                .field("connection", e.connectionId())
                .field("function", e.function())
                .field("key", e.key())
                .field("mode", e.lockMode())
                .field("sql", e.sql())
                .field("message", e.message());
        if (e.takenAt() != null) {
            StringWriter w = new StringWriter();
            e.takenAt().printStackTrace(new PrintWriter(w));
            json.field("stack", w.toString());
        }
        return json.endObject().toString();
    }
}
