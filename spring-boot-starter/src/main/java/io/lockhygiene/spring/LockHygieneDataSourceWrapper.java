package io.lockhygiene.spring;

import java.sql.SQLException;
import java.util.Properties;

import javax.sql.DataSource;

import io.lockhygiene.LockHygieneDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Wraps every DataSource bean in a {@link LockHygieneDataSource}, once: a bean that is one already, or
 * wraps one, is left as it is (as the datasource-proxy and p6spy starters do). The wrapper unwraps to the
 * pool underneath ({@code unwrap(HikariDataSource.class)}), so Boot's pool metrics and health still find it.
 */
final class LockHygieneDataSourceWrapper implements BeanPostProcessor {
    private final ObjectProvider<LockHygieneProperties> properties;

    LockHygieneDataSourceWrapper(ObjectProvider<LockHygieneProperties> properties) {
        this.properties = properties;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof DataSource) || isOurs((DataSource) bean)) {
            return bean;
        }
        Properties settings = properties.getObject().toDriverProperties();
        return new LockHygieneDataSource((DataSource) bean, settings);
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
