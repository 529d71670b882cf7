package io.lockhygiene.spring;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Spring Boot infers a JDBC driver class from the URL's prefix and does not know ours: for
 * {@code spring.datasource.url}, {@code spring.flyway.url} and {@code spring.liquibase.url} that start
 * with {@code jdbc:lockhygiene:} and name no driver class, this names LockHygiene's (as the lowest-priority
 * property source: anything the application sets wins).
 */
public class LockHygieneDriverClassNames implements EnvironmentPostProcessor {
    private static final String PREFIX = "jdbc:lockhygiene:";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> names = new LinkedHashMap<>();
        for (String owner : new String[] {"spring.datasource", "spring.flyway", "spring.liquibase"}) {
            String url = environment.getProperty(owner + ".url");
            if (url != null && url.regionMatches(true, 0, PREFIX, 0, PREFIX.length())
                    && environment.getProperty(owner + ".driver-class-name") == null) {
                names.put(owner + ".driver-class-name", "io.lockhygiene.LockHygieneDriver");
            }
        }
        if (!names.isEmpty()) {
            environment.getPropertySources().addLast(new MapPropertySource("lockhygiene-driver-class-names", names));
        }
    }
}
