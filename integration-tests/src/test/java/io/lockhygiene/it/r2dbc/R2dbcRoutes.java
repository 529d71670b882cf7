package io.lockhygiene.it.r2dbc;

import java.time.Duration;
import java.util.List;

import io.lockhygiene.it.bed.R2dbcOptions;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The test bed's routes for R2DBC: r2dbc-postgresql directly ({@code r2dbc:postgresql:}) and through LockHygiene
 * ({@code r2dbc:lockhygiene:postgresql:}), with the bed's options ({@link R2dbcOptions}).
 */
final class R2dbcRoutes {
    static final Duration TIMEOUT = Duration.ofSeconds(30);

    private R2dbcRoutes() {
    }

    /** Plain r2dbc-postgresql over the route. */
    static ConnectionFactory plain(TestBed bed, Route route) {
        return ConnectionFactories.get(R2dbcOptions.of(bed, route, "postgresql"));
    }

    /** r2dbc-postgresql through LockHygiene over the route, with {@code lockhygiene.*=value} settings. */
    static ConnectionFactory guarded(TestBed bed, Route route, String... settings) {
        return ConnectionFactories.get(R2dbcOptions.of(bed, route, "lockhygiene", settings));
    }

    static Connection open(ConnectionFactory cf) {
        return Mono.from(cf.create()).block(TIMEOUT);
    }

    static void close(Connection c) {
        Mono.from(c.close()).block(TIMEOUT);
    }

    /** The first column of the first row of {@code sql} (with binds $1.. from {@code args}), as text. */
    static String one(Connection c, String sql, Object... args) {
        return rows(c, sql, args).get(0);
    }

    /** Each row's first column as text. */
    static List<String> rows(Connection c, String sql, Object... args) {
        io.r2dbc.spi.Statement s = c.createStatement(sql);
        for (int i = 0; i < args.length; i++) {
            s.bind("$" + (i + 1), args[i]);
        }
        return Flux.from(s.execute()).concatMap(r -> r.map((row, meta) -> String.valueOf(row.get(0))))
                .collectList().block(TIMEOUT);
    }

    /** Runs {@code sql} for its effect. */
    static void run(Connection c, String sql, Object... args) {
        io.r2dbc.spi.Statement s = c.createStatement(sql);
        for (int i = 0; i < args.length; i++) {
            s.bind("$" + (i + 1), args[i]);
        }
        Flux.from(s.execute()).concatMap(Result::getRowsUpdated).then().block(TIMEOUT);
    }

    static void begin(Connection c) {
        Mono.from(c.beginTransaction()).block(TIMEOUT);
    }

    static void commit(Connection c) {
        Mono.from(c.commitTransaction()).block(TIMEOUT);
    }

    static void rollback(Connection c) {
        Mono.from(c.rollbackTransaction()).block(TIMEOUT);
    }
}
