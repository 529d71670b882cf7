package io.lockhygiene.spring;

import java.util.HashMap;
import java.util.Map;

import io.lockhygiene.internal.events.ProcessReportsSwitch;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * {@code lockhygiene.report} and {@code lockhygiene.fail-on-violation} from the application's own
 * configuration. They are JVM-wide (one report file, one exit status), so they are applied once, before
 * the first connection, instead of per DataSource; the first configuration of a JVM wins, as with
 * {@code -D}.
 */
public class LockHygieneProcessReports implements EnvironmentPostProcessor {

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Binder binder = Binder.get(environment);
        if (!binder.bind("lockhygiene.enabled", Boolean.class).orElse(true)) {
            return;
        }
        String report = binder.bind("lockhygiene.report", String.class).orElse(null);
        Boolean fail = binder.bind("lockhygiene.fail-on-violation", Boolean.class).orElse(null);
        if (report == null && fail == null) {
            return;
        }
        Map<String, String> explicit = new HashMap<>();
        if (report != null) {
            explicit.put("lockhygiene.report", report);
        }
        if (fail != null) {
            explicit.put("lockhygiene.failOnViolation", fail.toString());
        }
        ProcessReportsSwitch.installOnce(explicit::get);
    }
}
