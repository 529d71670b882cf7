package io.lockhygiene.it.bed;

import java.net.URI;

import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.Option;

/**
 * The test bed's routes as R2DBC options: r2dbc-postgresql directly ({@code driver} "postgresql") or through
 * LockHygiene ("lockhygiene", protocol postgresql), found by R2DBC's own discovery as an application finds
 * them. Through the bed's PgBouncer 1.18 pools r2dbc-postgresql needs {@code preparedStatementCacheQueries=0};
 * through 1.21 or later it keeps its default. (R2DBC's SPI is not a dependency of the bed: its users bring it.)
 */
public final class R2dbcOptions {
    private R2dbcOptions() {
    }

    /** The options of {@code route} for {@code driver}, with {@code name=value} settings added. */
    public static ConnectionFactoryOptions of(TestBed bed, Route route, String driver, String... settings) {
        URI u = URI.create(bed.url(route).substring("jdbc:".length()));
        ConnectionFactoryOptions.Builder b = ConnectionFactoryOptions.builder()
                .option(ConnectionFactoryOptions.DRIVER, driver)
                .option(ConnectionFactoryOptions.HOST, u.getHost())
                .option(ConnectionFactoryOptions.PORT, u.getPort())
                .option(ConnectionFactoryOptions.DATABASE, u.getPath().substring(1))
                .option(ConnectionFactoryOptions.USER, bed.endpoints().user())
                .option(ConnectionFactoryOptions.PASSWORD, bed.endpoints().password());
        if ("lockhygiene".equals(driver)) {
            b.option(ConnectionFactoryOptions.PROTOCOL, "postgresql");
        }
        if (route == Route.TRANSACTION_POOL || route == Route.SESSION_POOL) {
            // PgBouncer 1.18: no protocol-level prepared statements
            b.option(Option.valueOf("preparedStatementCacheQueries"), "0");
        }
        for (String s : settings) {
            int eq = s.indexOf('=');
            b.option(Option.valueOf(s.substring(0, eq)), s.substring(eq + 1));
        }
        return b.build();
    }
}
