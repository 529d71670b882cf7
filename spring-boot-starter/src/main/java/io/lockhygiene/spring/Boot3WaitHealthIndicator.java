package io.lockhygiene.spring;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** Spring Boot 3's health API (Actuator) over {@link LockHygieneWaitHealth}. */
final class Boot3WaitHealthIndicator implements HealthIndicator {
    private final LockHygieneWaitHealth health;

    Boot3WaitHealthIndicator(LockHygieneWaitHealth health) {
        this.health = health;
    }

    @Override
    public Health health() {
        return (health.up() ? Health.up() : Health.down()).withDetails(health.details()).build();
    }
}
