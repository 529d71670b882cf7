package io.lockhygiene.internal.events;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import io.lockhygiene.internal.settings.SettingsReader;
import io.lockhygiene.settings.LockHygieneProperty;

/**
 * Whether this process writes the event report and sets the exit status ({@code lockhygiene.report},
 * {@code lockhygiene.failOnViolation}), decided once; {@link ProcessReports} itself is loaded only when one
 * of them is on (a service without them never loads it: start-up cost).
 */
public final class ProcessReportsSwitch {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    private ProcessReportsSwitch() {
    }

    /** From -D and the environment, at the first LockHygiene connection. */
    public static void installOnce() {
        if (!INSTALLED.get()) { // the agent or the starter installed it already: no lambda to make here
            installOnce(name -> null);
        }
    }

    /** With explicit values (the agent's options, the starter's properties) first. */
    public static void installOnce(Function<String, String> explicit) {
        if (!INSTALLED.compareAndSet(false, true)) {
            return;
        }
        String path = SettingsReader.jvmWide(LockHygieneProperty.REPORT, explicit);
        boolean fail = Boolean.parseBoolean(SettingsReader.jvmWide(LockHygieneProperty.FAIL_ON_VIOLATION, explicit));
        if ((path != null && !path.isEmpty()) || fail) {
            ProcessReports.start(path, fail);
        }
    }
}
