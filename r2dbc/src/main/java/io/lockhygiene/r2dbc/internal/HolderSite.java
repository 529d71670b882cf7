package io.lockhygiene.r2dbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Properties;

import io.lockhygiene.internal.placement.RawConnect;
import io.lockhygiene.internal.placement.EndpointResolver;
import io.lockhygiene.internal.placement.HolderRoute;
import io.lockhygiene.settings.Settings;
import io.r2dbc.spi.ConnectionFactoryOptions;
import reactor.core.publisher.Mono;

/**
 * Where emulate's lock holder for one wrapped ConnectionFactory connects, learned from the R2DBC endpoint (host,
 * port, database, user, password, SSL mode) as a pgjdbc URL: the holder's sessions are pgjdbc sessions of its
 * own, placed as the driver places them ({@code lockhygiene.holderUrl}: the server itself by default, never
 * the application's pooled connections). Placed once, at the first connection, off the event loop.
 */
final class HolderSite {
    private final Settings settings;
    private final HolderRoute route;
    private final Mono<EndpointResolver.ForConnection> placed;

    private HolderSite(Settings settings, String jdbcUrl, Properties info) {
        this.settings = settings;
        // the holder stays raw pgjdbc, also when the agent is in the same JVM
        this.route = HolderRoute.ofUrl(jdbcUrl, info, false, (u, p) -> RawConnect.connect(new org.postgresql.Driver(), u, p));
        this.placed = Blocking.call(this::place).cache(h -> java.time.Duration.ofDays(36500),
                e -> java.time.Duration.ZERO, () -> java.time.Duration.ZERO); // a failed placement is tried again
    }

    /** The site of an endpoint, or null when the options name no host (then emulate cannot place a holder). */
    static HolderSite of(ConnectionFactoryOptions endpoint, Settings settings) {
        Object host = endpoint.getValue(ConnectionFactoryOptions.HOST);
        if (host == null) {
            return null;
        }
        Object port = endpoint.getValue(ConnectionFactoryOptions.PORT);
        Object database = endpoint.getValue(ConnectionFactoryOptions.DATABASE);
        StringBuilder url = new StringBuilder("jdbc:postgresql://").append(host).append(':')
                .append(port == null ? "5432" : port.toString()).append('/').append(database == null ? "" : database);
        Object ssl = endpoint.getValue(io.r2dbc.spi.Option.valueOf("sslMode"));
        if (ssl != null) {
            url.append("?sslmode=").append(ssl.toString().toLowerCase(Locale.ROOT).replace('_', '-'));
        }
        Properties info = new Properties();
        Object user = endpoint.getValue(ConnectionFactoryOptions.USER);
        Object password = endpoint.getValue(ConnectionFactoryOptions.PASSWORD);
        if (user != null) {
            info.setProperty("user", user.toString());
        }
        if (password != null) {
            info.setProperty("password", password.toString());
        }
        return new HolderSite(settings, url.toString(), info);
    }

    /**
     * What this factory's connections run with (decided at the first ask, on a thread that may block), as the
     * driver decides it for a JDBC connection of the same route ({@link EndpointResolver#forConnection}): under the
     * default, a route that reaches its server directly is a session of its own (detect, no holder placed);
     * otherwise the placed holder, or the default stepping back when it has no session of its own.
     */
    Mono<EndpointResolver.ForConnection> placement() {
        return placed;
    }

    private EndpointResolver.ForConnection place() throws SQLException {
        try (Connection probe = route.openLikeApplication()) {
            return EndpointResolver.forConnection(route, settings, probe);
        }
    }

    /** Where, for messages: no credentials. */
    @Override
    public String toString() {
        return route.describe();
    }
}
