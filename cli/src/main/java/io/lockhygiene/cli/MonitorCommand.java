package io.lockhygiene.cli;

import java.io.PrintWriter;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import io.lockhygiene.internal.util.JsonWriter;
import io.lockhygiene.monitor.AdvisoryWait;
import io.lockhygiene.monitor.AdvisoryWaitMonitor;

/** {@code monitor}: advisory waits over a threshold, once per episode. */
@Command(name = "monitor", usageHelpAutoWidth = true,
        description = {"Advisory waits over a threshold.", "Reports backends waiting for an advisory lock longer than the threshold, once per episode.",
                "With --once: one look, exit 1 when such waits exist. --json: one JSON object per wait."})
final class MonitorCommand extends DatabaseCommand {
    @Option(names = "--threshold", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "report waits longer than this (default: ${DEFAULT-VALUE})")
    Duration threshold;

    @Option(names = "--interval", defaultValue = "10s", converter = DurationConverter.class, paramLabel = "DURATION",
            description = "time between looks (default: ${DEFAULT-VALUE})")
    Duration interval;

    @Option(names = "--classid", paramLabel = "N", description = "only keys of this first int (two-int keys)")
    Integer classId;

    @Option(names = "--once", description = "one look, then exit")
    boolean once;

    @Option(names = "--json", description = "one JSON object per wait")
    boolean json;

    @Override
    int run(Database db, PrintWriter out, PrintWriter err) {
        AdvisoryWaitMonitor monitor = AdvisoryWaitMonitor.forSource(db::connect).threshold(threshold).classId(classId).build();
        if (once) {
            try {
                List<AdvisoryWait> waits = monitor.poll();
                for (AdvisoryWait w : waits) {
                    out.println(json ? toJson(w) : w + "; state " + w.state() + "; waiting: " + w.blockedQuery()
                            + " | holding: " + w.blockingQuery());
                }
                if (!json && waits.isEmpty()) {
                    out.println("no advisory wait over " + threshold.toMillis() + " ms");
                }
                return waits.isEmpty() ? 0 : 1;
            } catch (SQLException | RuntimeException e) {
                err.println("monitor: cannot query " + db.displayUrl() + ": " + e.getMessage());
                return 2;
            }
        }
        Set<String> episodes = new HashSet<>();
        boolean down = false;
        while (!Thread.currentThread().isInterrupted()) {
            try {
                Set<String> seen = new HashSet<>();
                for (AdvisoryWait w : monitor.poll()) {
                    String episode = w.blockedPid() + "/" + w.key();
                    seen.add(episode);
                    if (episodes.add(episode)) {
                        out.println(json ? toJson(w) : java.time.Instant.now() + " " + w + "; waiting: " + w.blockedQuery()
                                + " | holding: " + w.blockingQuery());
                        out.flush();
                    }
                }
                episodes.retainAll(seen);
                if (down) {
                    err.println(java.time.Instant.now() + " monitor: the server answers again");
                    down = false;
                }
            } catch (SQLException | RuntimeException e) {
                if (!down) {
                    err.println(java.time.Instant.now() + " monitor: cannot query the server (" + e.getMessage() + "); retrying");
                    down = true;
                }
            }
            try {
                Thread.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return 0;
        }

    static String toJson(AdvisoryWait w) {
        return new JsonWriter().beginObject()
                .field("blockedPid", w.blockedPid())
                .field("blockingPid", w.blockingPid())
                .field("key", w.key())
                .field("mode", w.mode())
                .field("waitMillis", w.waitMillis())
                .field("state", w.state())
                .field("waitEvent", w.waitEventType() + ":" + w.waitEvent())
                .field("blockedQuery", w.blockedQuery())
                .field("blockingQuery", w.blockingQuery())
                .endObject().toString();
    }
}
