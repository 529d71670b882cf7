package io.lockhygiene.monitor;

/** Over JMX as {@code io.lockhygiene:type=AdvisoryWaitMonitor,name=NAME}. */
public interface AdvisoryWaitMonitorMXBean {
    /** Backends waiting longer than the threshold at the last poll. */
    int getCurrentWaits();

    /** The longest of those waits, in milliseconds (0 when none). */
    long getLongestWaitMillis();

    /** Episodes reported since start. */
    long getEpisodesReported();
}
