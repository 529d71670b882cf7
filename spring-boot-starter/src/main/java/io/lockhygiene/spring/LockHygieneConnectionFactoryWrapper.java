package io.lockhygiene.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import io.lockhygiene.r2dbc.LockHygieneConnectionFactory;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Wrapped;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;

/**
 * The R2DBC counterpart of {@link LockHygieneDataSourceWrapper}: wraps every R2DBC {@link ConnectionFactory} bean
 * (Boot's is r2dbc-pool's pool over r2dbc-postgresql) in a {@link LockHygieneConnectionFactory}, once, with the
 * same {@code lockhygiene.*} properties. The wrapper sits outside the pool, so a connection's {@code close()},
 * its return to the pool, is where the leak check runs; it unwraps to the pool ({@code Wrapped}), so Boot's pool
 * metrics still find it. For emulate's lock holder it is told {@code spring.r2dbc.url}, {@code username} and
 * {@code password}: the holder opens pgjdbc sessions of its own there, never one of the pool's connections.
 */
final class LockHygieneConnectionFactoryWrapper implements BeanPostProcessor, EnvironmentAware {
    private final ObjectProvider<LockHygieneProperties> properties;
    private Environment environment;

    LockHygieneConnectionFactoryWrapper(ObjectProvider<LockHygieneProperties> properties) {
        this.properties = properties;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!(bean instanceof ConnectionFactory) || isOurs(bean)) {
            return bean;
        }
        Properties driverProperties = properties.getObject().toDriverProperties();
        Map<String, String> settings = new LinkedHashMap<>();
        for (String key : driverProperties.stringPropertyNames()) {
            settings.put(key, driverProperties.getProperty(key));
        }
        LockHygieneConnectionFactory.Builder wrapped = LockHygieneConnectionFactory.builder((ConnectionFactory) bean)
                .settings(settings);
        ConnectionFactoryOptions endpoint = endpoint();
        if (endpoint != null) {
            wrapped.connectsTo(endpoint);
        }
        return wrapped.build();
    }

    /** spring.r2dbc.url with spring.r2dbc.username and password, as Boot reads them; null without a URL. */
    private ConnectionFactoryOptions endpoint() {
        String url = environment == null ? null : environment.getProperty("spring.r2dbc.url");
        if (url == null || url.isBlank()) {
            return null;
        }
        ConnectionFactoryOptions.Builder b = ConnectionFactoryOptions.builder().from(ConnectionFactoryOptions.parse(url));
        String user = environment.getProperty("spring.r2dbc.username");
        String password = environment.getProperty("spring.r2dbc.password");
        if (user != null) {
            b.option(ConnectionFactoryOptions.USER, user);
        }
        if (password != null) {
            b.option(ConnectionFactoryOptions.PASSWORD, password);
        }
        return b.build();
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    private static boolean isOurs(Object factory) {
        for (Object f = factory; f != null; f = f instanceof Wrapped ? ((Wrapped<?>) f).unwrap() : null) {
            if (f instanceof LockHygieneConnectionFactory) {
                return true;
            }
            if (f instanceof Wrapped && ((Wrapped<?>) f).unwrap() == f) {
                break;
            }
        }
        return false;
    }
}
