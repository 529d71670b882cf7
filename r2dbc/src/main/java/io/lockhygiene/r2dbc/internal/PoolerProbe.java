package io.lockhygiene.r2dbc.internal;


import io.lockhygiene.internal.log.Log;
import io.r2dbc.spi.Connection;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Whether an R2DBC connection reaches PostgreSQL through a pooler, as the JDBC guard tells: the backend pid the
 * server announced at start-up (BackendKeyData) differs from {@code pg_backend_pid()} when a pooler is in
 * between. r2dbc-postgresql keeps the announced pid in its client, which it does not show: it is read by
 * reflection, and where that fails (another driver, a module that does not open it) the answer is "a pooler",
 * the stricter one ({@code lockhygiene.poolMode} says otherwise).
 */
final class PoolerProbe {
    private PoolerProbe() {
    }

    static Mono<Boolean> behindPooler(Connection raw, String id) {
        Integer announced = announcedPid(raw);
        if (announced == null) {
            Log.debug("LockHygiene: {} cannot read the backend pid its driver was given; treated as transaction"
                    + " pooling (lockhygiene.poolMode=session if it is not)", id);
            return Mono.just(true);
        }
        return Flux.from(raw.createStatement("SELECT pg_catalog.pg_backend_pid()").execute())
                .concatMap(r -> r.map((row, meta) -> row.get(0, Integer.class)))
                .next()
                .map(pid -> {
                    boolean pooler = !announced.equals(pid);
                    Log.debug("LockHygiene: {} {}", id, pooler ? "reaches PostgreSQL through a pooler: treated as"
                            + " transaction pooling (lockhygiene.poolMode=session if it is not)" : "is connected directly");
                    return pooler;
                })
                .defaultIfEmpty(true)
                .onErrorReturn(true);
    }

    /** r2dbc-postgresql's {@code client.getProcessId()}, or null. */
    static Integer announcedPid(Connection connection) {
        return PostgresClient.of(connection).processId();
    }
}
