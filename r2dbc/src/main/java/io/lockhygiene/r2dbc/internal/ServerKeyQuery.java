package io.lockhygiene.r2dbc.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.emulate.ServerKeys;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.NumberedParameters;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * emulate's keys that only the server can compute ({@code pg_advisory_lock(hashtext($1))}, a key bound as text),
 * asked on the application's own connection without blocking, as JDBC's owners ask them on theirs: the core says
 * what to ask ({@link Emulation#keysToCompute}, nothing when the holder's key cache knows the values), this sends it
 * and hands the answer back; a statement whose keys are read from a table's rows ({@code SELECT
 * pg_try_advisory_lock(id) FROM jobs WHERE ...}) has its rows and their keys read the same way. An immutable key (a
 * hash of binds and literals) is asked without the application's deferred BEGIN, so a transaction that waits in the
 * lock table pins no pooled server; anything else is asked inside the application's transaction, where PostgreSQL
 * would compute it, in its snapshot.
 */
final class ServerKeyQuery {
    private ServerKeyQuery() {
    }

    /** The keys of one binding's execution, computed; empty when the JVM or the key cache knows them all. */
    static Mono<ServerKeys> of(R2dbcGuard guard, LockShape shape, R2dbcBinds binds) {
        if (!ServerKeys.mayBeNeeded(shape, binds)) {
            return Mono.empty(); // integer literals and binds: decided in the JVM, no thread hop
        }
        return Blocking.call(() -> Optional.ofNullable(guard.emulation.keysToCompute(shape, binds)))
                .flatMap(asked -> !asked.isPresent() ? Mono.<ServerKeys>empty()
                        : asked.get().asks() ? computed(guard, asked.get(), binds)
                        : Mono.just(asked.get())); // the key cache knew them: kept, nothing sent
    }

    private static Mono<ServerKeys> computed(R2dbcGuard guard, ServerKeys keys, R2dbcBinds binds) {
        Mono<Void> first = keys.immutable() ? Mono.empty() : guard.begin.now();
        return first.then(Mono.defer(() -> {
            Statement s = guard.raw.createStatement(NumberedParameters.numbered(keys.sql()));
            binds.applyTo(s, keys.parameters());
            Flux<List<byte[]>> rows = Flux.from(s.execute()).concatMap(r -> r.map(ServerKeyQuery::columns));
            if (keys.readsRows()) {
                return rows.collectList().map(all -> {
                    keys.answeredRows(all);
                    return keys;
                });
            }
            return rows.next().map(columns -> {
                keys.answered(columns);
                return keys;
            });
        })).onErrorMap(R2dbcException.class,
                e -> R2dbcErrors.of(keys.failed(R2dbcErrors.toSql(e)))); // the call's own words
    }

    /** The key query's row: each column's bytes ({@code int8send}, {@code int4send}), null for SQL NULL. */
    private static List<byte[]> columns(Row row, RowMetadata meta) {
        int n = meta.getColumnMetadatas().size();
        List<byte[]> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(row.get(i, byte[].class));
        }
        return out;
    }
}
