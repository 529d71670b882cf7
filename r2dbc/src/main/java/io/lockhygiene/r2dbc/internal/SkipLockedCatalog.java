package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;

import io.lockhygiene.internal.session.SkipLockedCheck;
import io.r2dbc.spi.Connection;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The SKIP LOCKED trap for R2DBC: the core decides and says it ({@link SkipLockedCheck}), this reads the catalog
 * for it without blocking, as JDBC's guard reads it with pgjdbc.
 */
final class SkipLockedCatalog {
    private SkipLockedCatalog() {
    }

    /**
     * {@code sql}'s check, after what it needs is read on the driver's own connection {@code raw}: the connection's
     * scope at its first such text, a table's unique keys at its first. Strict refuses (an error, nothing sent); a
     * catalog that cannot be read leaves the statement unchecked, as JDBC's.
     */
    static Mono<Void> checked(Connection raw, SkipLockedCheck check, String sql, Throwable callSite) {
        Mono<Void> scope = check.knowsScope() ? Mono.empty()
                : Flux.from(raw.createStatement(SkipLockedCheck.SCOPE_QUERY).execute())
                        .concatMap(r -> r.map((row, meta) -> row.get(0, String.class))).next()
                        .doOnNext(check::scopeRead).then()
                        .onErrorResume(e -> Mono.empty()); // a failed transaction: the statement fails itself
        return scope.then(Mono.defer(() -> {
            String table = check.keysToRead(sql);
            if (table == null) {
                return Mono.<Void>empty();
            }
            return Flux.from(raw.createStatement(SkipLockedCheck.KEYS_QUERY).bind("$1", table).execute())
                    .concatMap(r -> r.map((row, meta) -> row.get(0, String[].class))).collectList()
                    .doOnNext(keys -> check.keysRead(table, keys)).then()
                    .onErrorResume(e -> {
                        check.keysUnread(table, e);
                        return Mono.empty();
                    });
        })).then(Mono.defer(() -> {
            try {
                check.check(sql, callSite);
                return Mono.<Void>empty();
            } catch (SQLException e) {
                return Mono.error(R2dbcErrors.of(e));
            }
        }));
    }
}
