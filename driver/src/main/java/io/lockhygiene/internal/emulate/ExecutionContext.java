package io.lockhygiene.internal.emulate;

import java.sql.Connection;

import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.settings.Settings;

/**
 * What every emulated execution of one connection works with, fixed for the connection's life: the
 * process's lock holder, the application's own connection (PostgreSQL's verdicts and the keys' values are
 * asked there), the connection's reporter and settings, and its transaction in the lock table.
 */
final class ExecutionContext {
    final Holder holder;
    final Connection raw;
    final LeakReporter reporter;
    final Settings settings;
    final TableTransaction tableTransaction;

    ExecutionContext(Holder holder, Connection raw, LeakReporter reporter, Settings settings,
                     TableTransaction tableTransaction) {
        this.holder = holder;
        this.raw = raw;
        this.reporter = reporter;
        this.settings = settings;
        this.tableTransaction = tableTransaction;
    }
}
