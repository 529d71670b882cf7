package io.lockhygiene.spring;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** Spring Boot 4's health API (spring-boot-health) over {@link LockHygieneWaitHealth}. */
final class Boot4WaitHealthIndicator implements HealthIndicator {
    private final LockHygieneWaitHealth health;

    Boot4WaitHealthIndicator(LockHygieneWaitHealth health) {
        this.health = health;
    }

    @Override
    public Health health() {
        return (health.up() ? Health.up() : Health.down()).withDetails(health.details()).build();
    }
}
