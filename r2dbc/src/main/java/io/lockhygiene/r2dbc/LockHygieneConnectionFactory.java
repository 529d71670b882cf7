package io.lockhygiene.r2dbc;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import io.lockhygiene.r2dbc.internal.Guarding;
import io.r2dbc.proxy.listener.ProxyExecutionListener;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Wrapped;
import org.reactivestreams.Publisher;

/**
 * LockHygiene for R2DBC: wraps a {@link ConnectionFactory} (r2dbc-postgresql's, or a pool over it) so that its
 * connections' session-level advisory locks are detected, rewritten, rejected or emulated as the JDBC driver
 * does, with the same settings ({@code lockhygiene.mode}, {@code lockhygiene.poolMode}, ...; from here, from
 * {@code -D} or from the environment). Built on r2dbc-proxy: listeners given here ({@link Builder#listener}, or
 * the URL's {@code proxyListener} option as with {@code r2dbc:proxy:}) see every statement, LockHygiene's own
 * included; without one, statements go to the driver's own connection and one without advisory calls costs
 * LockHygiene only its prefilter.
 *
 * <pre>{@code
 * ConnectionFactory guarded = LockHygieneConnectionFactory.builder(pool)
 *         .setting("lockhygiene.mode", "emulate")
 *         .connectsTo(ConnectionFactoryOptions.parse("r2dbc:postgresql://app@db:6432/app")) // for emulate's holder
 *         .build();
 * }</pre>
 * Or by URL: {@code r2dbc:lockhygiene:postgresql://user@db:6432/app?lockhygiene.mode=emulate}.
 *
 * <p>Wrap the pool (this outside it): a connection's {@code close()} is then its return to the pool, where
 * the leak check runs. Nothing here blocks a Netty thread: emulate's lock holder is pgjdbc sessions of its own,
 * and every call to it runs on Reactor's bounded elastic scheduler. emulate needs pgjdbc on the class path and
 * to know where the server is ({@link Builder#connectsTo}, or the URL); without them the default steps back to
 * r2dbc-postgresql's own behaviour, reported (emulate chosen by name behaves as detect).
 */
public final class LockHygieneConnectionFactory implements ConnectionFactory, Wrapped<ConnectionFactory> {
    private final ConnectionFactory delegate;
    private final Guarding guarding;

    private LockHygieneConnectionFactory(ConnectionFactory delegate, Guarding guarding) {
        this.delegate = delegate;
        this.guarding = guarding;
    }

    /** {@code delegate} guarded with the settings of {@code -D} and the environment (emulate by default). */
    public static LockHygieneConnectionFactory wrap(ConnectionFactory delegate) {
        return builder(delegate).build();
    }

    public static Builder builder(ConnectionFactory delegate) {
        return new Builder(delegate);
    }

    @Override
    public Publisher<? extends Connection> create() {
        return guarding.create();
    }

    @Override
    public ConnectionFactoryMetadata getMetadata() {
        return delegate.getMetadata();
    }

    @Override
    public ConnectionFactory unwrap() {
        return delegate;
    }

    @Override
    public String toString() {
        return "LockHygieneConnectionFactory(" + guarding + ") over " + delegate;
    }

    /** How a guarded ConnectionFactory is made. */
    public static final class Builder {
        private final ConnectionFactory delegate;
        private final Map<String, String> settings = new LinkedHashMap<>();
        private ConnectionFactoryOptions endpoint;
        private final java.util.List<ProxyExecutionListener> listeners = new java.util.ArrayList<>();

        private Builder(ConnectionFactory delegate) {
            if (delegate == null) {
                throw new IllegalArgumentException("delegate must not be null");
            }
            this.delegate = delegate;
        }

        /** One setting, by its key ({@code lockhygiene.mode}); higher than {@code -D} and the environment. */
        public Builder setting(String key, String value) {
            settings.put(key, value);
            return this;
        }

        /** Several settings by key. */
        public Builder settings(Map<String, String> keys) {
            settings.putAll(keys);
            return this;
        }

        /**
         * Where the database is (host, port, database, user, password, sslMode), for emulate's lock holder, which
         * opens pgjdbc sessions of its own there (or where {@code lockhygiene.holderUrl} says): never one of the
         * pool's connections.
         */
        public Builder connectsTo(ConnectionFactoryOptions endpoint) {
            this.endpoint = endpoint;
            return this;
        }

        /** The same from an R2DBC URL ({@code r2dbc:postgresql://user:password@host:port/db}). */
        public Builder connectsTo(String r2dbcUrl) {
            return connectsTo(ConnectionFactoryOptions.parse(r2dbcUrl));
        }

        /** An r2dbc-proxy listener of the application's: it sees every statement, LockHygiene's own included. */
        public Builder listener(ProxyExecutionListener listener) {
            listeners.add(listener);
            return this;
        }

        /**
         * @throws IllegalArgumentException for a bad setting (the message names the allowed values)
         */
        public LockHygieneConnectionFactory build() {
            return new LockHygieneConnectionFactory(delegate, new Guarding(delegate, settings,
                    Optional.ofNullable(endpoint), listeners));
        }
    }


}
