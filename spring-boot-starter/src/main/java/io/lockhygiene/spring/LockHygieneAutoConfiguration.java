package io.lockhygiene.spring;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * LockHygiene for a Spring Boot application: the dependency and {@code lockhygiene.mode=...} are all it
 * takes; {@code lockhygiene.enabled=false} turns it off. Uses only what Spring Boot 3.5 and 4.0 share.
 */
@AutoConfiguration
@ConditionalOnClass(javax.sql.DataSource.class)
@ConditionalOnProperty(prefix = "lockhygiene", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(LockHygieneProperties.class)
public class LockHygieneAutoConfiguration {

    /** Static: a BeanPostProcessor must exist before the beans it processes. */
    @Bean
    static LockHygieneDataSourceWrapper lockHygieneDataSourceWrapper(ObjectProvider<LockHygieneProperties> properties) {
        return new LockHygieneDataSourceWrapper(properties);
    }

    /**
     * R2DBC (a WebFlux service): its ConnectionFactory beans wrapped too, when lockhygiene-r2dbc is on the class
     * path (it is an optional dependency of this starter: a JDBC-only application never gets R2DBC from us).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"io.r2dbc.spi.ConnectionFactory", "io.lockhygiene.r2dbc.LockHygieneConnectionFactory"})
    static class R2dbc {
        @Bean
        static LockHygieneConnectionFactoryWrapper lockHygieneConnectionFactoryWrapper(
                ObjectProvider<LockHygieneProperties> properties) {
            return new LockHygieneConnectionFactoryWrapper(properties);
        }
    }

    /**
     * {@code lockhygiene.monitor.enabled=true}: the seed's alert, advisory waits longer than the threshold with
     * the session that blocks them, polled on the application's DataSource; its JMX bean, its WARN per episode,
     * and (with Micrometer) two gauges read from its last poll.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(prefix = "lockhygiene.monitor", name = "enabled", havingValue = "true")
    io.lockhygiene.monitor.AdvisoryWaitMonitor lockHygieneAdvisoryWaitMonitor(javax.sql.DataSource dataSource,
                                                                           LockHygieneProperties properties) {
        LockHygieneProperties.Monitor m = properties.getMonitor();
        return io.lockhygiene.monitor.AdvisoryWaitMonitor.forDataSource(dataSource).threshold(m.getThreshold())
                .interval(m.getInterval()).name("spring").start();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    @ConditionalOnProperty(prefix = "lockhygiene.monitor", name = "enabled", havingValue = "true")
    static class WaitGauges {
        @Bean
        LockHygieneWaitGauges lockHygieneWaitGauges(io.lockhygiene.monitor.AdvisoryWaitMonitor monitor) {
            return new LockHygieneWaitGauges(monitor);
        }
    }

    /**
     * {@code lockhygiene.monitor.health.enabled=true} (off by default): the waits as a health contributor
     * ({@code lockHygieneWaits}), read from the monitor's last poll, for Boot 3 (Actuator) or Boot 4
     * (spring-boot-health), whichever the application has.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    @ConditionalOnProperty(prefix = "lockhygiene.monitor", name = {"enabled", "health.enabled"}, havingValue = "true")
    static class Boot3Health {
        @Bean
        Boot3WaitHealthIndicator lockHygieneWaitsHealthIndicator(io.lockhygiene.monitor.AdvisoryWaitMonitor monitor,
                                                                 LockHygieneProperties properties) {
            return new Boot3WaitHealthIndicator(new LockHygieneWaitHealth(monitor,
                    properties.getMonitor().getThreshold().toMillis()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnProperty(prefix = "lockhygiene.monitor", name = {"enabled", "health.enabled"}, havingValue = "true")
    static class Boot4Health {
        @Bean
        Boot4WaitHealthIndicator lockHygieneWaitsHealthIndicator(io.lockhygiene.monitor.AdvisoryWaitMonitor monitor,
                                                                 LockHygieneProperties properties) {
            return new Boot4WaitHealthIndicator(new LockHygieneWaitHealth(monitor,
                    properties.getMonitor().getThreshold().toMillis()));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    static class Meters {
        @Bean
        LockHygieneMeters lockHygieneMeters() {
            return new LockHygieneMeters();
        }
    }
}
