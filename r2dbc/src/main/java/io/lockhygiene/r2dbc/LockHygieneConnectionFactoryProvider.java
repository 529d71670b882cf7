package io.lockhygiene.r2dbc;

import java.util.LinkedHashMap;
import java.util.Map;

import io.lockhygiene.settings.LockHygieneProperty;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.ConnectionFactoryProvider;
import io.r2dbc.spi.Option;

/**
 * {@code r2dbc:lockhygiene:postgresql://...}: as r2dbc-proxy's {@code r2dbc:proxy:} convention, the driver after
 * {@code lockhygiene:} makes the real ConnectionFactory (found by R2DBC's own discovery), which LockHygiene wraps
 * with the {@code lockhygiene.*} options of the URL ({@code ?lockhygiene.mode=emulate}).
 */
public final class LockHygieneConnectionFactoryProvider implements ConnectionFactoryProvider {
    /** The driver name in the URL. */
    public static final String DRIVER = "lockhygiene";

    @Override
    public ConnectionFactory create(ConnectionFactoryOptions options) {
        Object protocol = options.getRequiredValue(ConnectionFactoryOptions.PROTOCOL);
        if (!(protocol instanceof String) || ((String) protocol).trim().isEmpty()) {
            throw new IllegalArgumentException("r2dbc:lockhygiene: needs the real driver after it"
                    + " (r2dbc:lockhygiene:postgresql://...), not '" + protocol + "'");
        }
        String[] parts = ((String) protocol).split(":", 2);
        ConnectionFactoryOptions real = ConnectionFactoryOptions.builder().from(options)
                .option(ConnectionFactoryOptions.DRIVER, parts[0])
                .option(ConnectionFactoryOptions.PROTOCOL, parts.length == 2 ? parts[1] : "")
                .build();
        ConnectionFactory delegate = ConnectionFactories.find(real);
        if (delegate == null) {
            throw new IllegalArgumentException("No R2DBC driver for '" + parts[0] + "' on the class path (r2dbc:lockhygiene:"
                    + parts[0] + ":...); add it, for example org.postgresql:r2dbc-postgresql");
        }
        Map<String, String> settings = new LinkedHashMap<>();
        for (LockHygieneProperty s : LockHygieneProperty.values()) {
            Object v = options.getValue(Option.valueOf(s.key()));
            if (v != null) {
                settings.put(s.key(), v.toString());
            }
        }
        LockHygieneConnectionFactory.Builder b = LockHygieneConnectionFactory.builder(delegate).settings(settings)
                .connectsTo(real);
        // r2dbc-proxy's own option: its listeners see every statement (as with r2dbc:proxy:)
        Object listeners = options.getValue(io.r2dbc.proxy.ProxyConnectionFactoryProvider.PROXY_LISTENERS);
        if (listeners != null) {
            for (io.r2dbc.proxy.listener.ProxyExecutionListener l : ProxyListeners.of(listeners)) {
                b.listener(l);
            }
        }
        return b.build();
    }

    @Override
    public boolean supports(ConnectionFactoryOptions options) {
        return DRIVER.equals(options.getValue(ConnectionFactoryOptions.DRIVER));
    }

    @Override
    public String getDriver() {
        return DRIVER;
    }
}
