package io.lockhygiene.spring;

import java.util.LinkedHashMap;
import java.util.Map;

import io.lockhygiene.monitor.AdvisoryWaitMonitor;

/**
 * The health of advisory waits, read from the wait monitor's last poll (no query per probe): DOWN while a
 * session has waited for an advisory lock longer than {@code lockhygiene.monitor.threshold} (the seed's "jobs
 * never run"), UP otherwise, with the figures as details. The same for both Boots' health APIs, which wrap it.
 */
final class LockHygieneWaitHealth {
    private final AdvisoryWaitMonitor monitor;
    private final long thresholdMillis;

    LockHygieneWaitHealth(AdvisoryWaitMonitor monitor, long thresholdMillis) {
        this.monitor = monitor;
        this.thresholdMillis = thresholdMillis;
    }

    boolean up() {
        return monitor.getCurrentWaits() == 0;
    }

    Map<String, Object> details() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("waits", monitor.getCurrentWaits());
        d.put("longestWaitMillis", monitor.getLongestWaitMillis());
        d.put("thresholdMillis", thresholdMillis);
        if (!up()) {
            d.put("what", "sessions wait for advisory locks longer than the threshold; the log's WARN (or"
                    + " java -jar lockhygiene-cli.jar doctor) names the blocking session and its last statement");
        }
        return d;
    }
}
