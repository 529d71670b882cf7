package io.lockhygiene.spring;

import java.sql.SQLException;
import java.util.Properties;

import javax.sql.DataSource;

import io.lockhygiene.LockHygieneDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;

/**
 * Wraps every DataSource bean in a {@link LockHygieneDataSource}, once: a bean that is one already, or
 * wraps one, is left as it is (as the datasource-proxy and p6spy starters do). The wrapper unwraps to the
 * pool underneath ({@code unwrap(HikariDataSource.class)}), so Boot's pool metrics and health still find it.
 *
 * <p>Boot's own DataSource (the bean {@code dataSource}) is also told {@code spring.datasource.url},
 * {@code username} and {@code password}, so that emulate's lock holder connects on its own even where the pool
 * Boot built does not show them (the pool's own configuration is read too; a wrong hint is checked and
 * passed over).
 */
final class LockHygieneDataSourceWrapper implements BeanPostProcessor, EnvironmentAware {
    private final ObjectProvider<LockHygieneProperties> properties;
    private Environment environment;

    LockHygieneDataSourceWrapper(ObjectProvider<LockHygieneProperties> properties) {
        this.properties = properties;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof DataSource) || isOurs((DataSource) bean)) {
            return bean;
        }
        Properties settings = properties.getObject().toDriverProperties();
        LockHygieneDataSource wrapped = new LockHygieneDataSource((DataSource) bean, settings);
        String url = environment == null ? null : environment.getProperty("spring.datasource.url");
        if ("dataSource".equals(beanName) && url != null && url.startsWith("jdbc:postgresql:")) {
            wrapped.connectsTo(url, environment.getProperty("spring.datasource.username"),
                    environment.getProperty("spring.datasource.password"));
        }
        return wrapped;
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    private static boolean isOurs(DataSource ds) {
        if (ds instanceof LockHygieneDataSource) {
            return true;
        }
        try {
            return ds.isWrapperFor(LockHygieneDataSource.class);
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }
}
