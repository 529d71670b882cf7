package io.lockhygiene.spring;

import io.lockhygiene.monitor.AdvisoryWaitMonitor;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The wait monitor's last poll as two gauges: {@code lockhygiene.advisory.waits} (sessions waiting for an
 * advisory lock longer than the threshold) and {@code lockhygiene.advisory.wait.longest} (seconds). Read
 * when scraped, from what the monitor's own poll saw: no query per scrape.
 */
final class LockHygieneWaitGauges implements MeterBinder {
    private final AdvisoryWaitMonitor monitor;

    LockHygieneWaitGauges(AdvisoryWaitMonitor monitor) {
        this.monitor = monitor;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder("lockhygiene.advisory.waits", monitor, m -> m.getCurrentWaits())
                .description("sessions waiting for an advisory lock longer than lockhygiene.monitor.threshold")
                .register(registry);
        Gauge.builder("lockhygiene.advisory.wait.longest", monitor, m -> m.getLongestWaitMillis() / 1000.0)
                .description("the longest such wait at the last poll").baseUnit("seconds").register(registry);
    }
}
