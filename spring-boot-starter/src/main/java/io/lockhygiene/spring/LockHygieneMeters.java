package io.lockhygiene.spring;

import java.util.function.ToDoubleFunction;

import io.lockhygiene.LockHygiene;
import io.lockhygiene.events.LockHygieneMXBean;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * LockHygiene's process-wide counters as Micrometer counters ({@code lockhygiene.*}, dot-separated, as
 * Micrometer names them; each registry's naming convention renders them, e.g. {@code
 * lockhygiene_leaks_released_total} in Prometheus). They read the counters when scraped: no work per
 * statement.
 */
final class LockHygieneMeters implements MeterBinder {

    @Override
    public void bindTo(MeterRegistry registry) {
        LockHygieneMXBean c = LockHygiene.counters();
        counter(registry, c, "lockhygiene.statements.seen", "statements LockHygiene looked at", LockHygieneMXBean::getStatementsSeen);
        counter(registry, c, "lockhygiene.statements.flagged", "statements that call session-level advisory functions",
                LockHygieneMXBean::getStatementsFlagged);
        counter(registry, c, "lockhygiene.statements.rewritten", "statements rewritten to transaction-level calls",
                LockHygieneMXBean::getStatementsRewritten);
        counter(registry, c, "lockhygiene.statements.rejected", "statements refused (strict)",
                LockHygieneMXBean::getStatementsRejected);
        counter(registry, c, "lockhygiene.statements.emulated", "statements emulated", LockHygieneMXBean::getStatementsEmulated);
        counter(registry, c, "lockhygiene.leaks.released", "leaked session locks released", LockHygieneMXBean::getLeaksReleased);
        counter(registry, c, "lockhygiene.inherited.released", "session locks inherited from another client, released",
                LockHygieneMXBean::getInheritedReleased);
        counter(registry, c, "lockhygiene.checks.failed", "leak checks that could not run", LockHygieneMXBean::getChecksFailed);
        counter(registry, c, "lockhygiene.skiplocked.flagged", "SKIP LOCKED statements pinned to one key",
                LockHygieneMXBean::getSkipLockedFlagged);
    }

    private static void counter(MeterRegistry registry, LockHygieneMXBean counters, String name, String description,
                                ToDoubleFunction<LockHygieneMXBean> value) {
        FunctionCounter.builder(name, counters, value).description(description).register(registry);
    }
}
