package io.lockhygiene.bench;

import static io.lockhygiene.bench.Report.JSON;
import static io.lockhygiene.bench.Report.MD;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

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
 * Section 5: R2DBC end to end. Small transactions (BEGIN, SELECT, UPDATE, COMMIT) from N concurrent reactive
 * workers, each on a connection of its own, through the transaction-mode PgBouncer: plain r2dbc-postgresql
 * against LockHygiene's wrapper (detect, emulate), interleaved, with the ratio.
 */
final class R2dbcSection {
    private R2dbcSection() {
    }

    static ConnectionFactory factory(TestBed bed, Route route, String driver, String... settings) {
        return ConnectionFactories.get(R2dbcOptions.of(bed, route, driver, settings));
    }

    /** Transactions per second of {@code workers} reactive workers for {@code millis}. */
    static double tps(ConnectionFactory cf, int workers, long millis) {
        AtomicLong done = new AtomicLong();
        long until = System.nanoTime() + millis * 1_000_000;
        Flux.range(0, workers).flatMap(w -> Mono.usingWhen(cf.create(), c -> loop(c, until, done), Connection::close),
                workers).then().block(Duration.ofMillis(millis + 60_000));
        return done.get() * 1000.0 / millis;
    }

    private static Mono<Void> loop(Connection c, long until, AtomicLong done) {
        return Mono.defer(() -> {
            if (System.nanoTime() >= until) {
                return Mono.empty();
            }
            int aid = 1 + ThreadLocalRandom.current().nextInt(EndToEnd.ACCOUNTS);
            return Mono.from(c.beginTransaction())
                    .thenMany(Flux.from(c.createStatement("SELECT abalance FROM bench_accounts WHERE aid = $1")
                            .bind(0, aid).execute()).concatMap(r -> r.map((row, m) -> row.get(0))))
                    .thenMany(Flux.from(c.createStatement("UPDATE bench_accounts SET abalance = abalance + 1 WHERE aid = $1")
                            .bind(0, aid).execute()).concatMap(Result::getRowsUpdated))
                    .then(Mono.from(c.commitTransaction()))
                    .doOnSuccess(v -> done.incrementAndGet())
                    .then(Mono.defer(() -> loop(c, until, done)));
        });
    }

    static void endToEnd(TestBed bed, boolean full) {
        long millis = full ? 8_000 : 2_000;
        int reps = full ? 3 : 2;
        Map<String, ConnectionFactory> clients = new LinkedHashMap<>();
        clients.put("plain r2dbc-postgresql", factory(bed, Route.TRANSACTION_POOL, "postgresql"));
        clients.put("lockhygiene-r2dbc detect", factory(bed, Route.TRANSACTION_POOL, "lockhygiene"));
        clients.put("lockhygiene-r2dbc emulate", factory(bed, Route.TRANSACTION_POOL, "lockhygiene",
                "lockhygiene.mode=emulate"));
        MD.append("## 5. R2DBC end to end: small transactions (BEGIN, SELECT, UPDATE, COMMIT), transaction pool, ")
                .append(reps).append(" x ").append(millis / 1000).append(" s per cell, interleaved\n\n")
                .append("| workers | client | tx/s | ratio |\n|---|---|---|---|\n");
        for (int workers : List.of(1, 8, 32)) {
            Map<String, Double> sum = new LinkedHashMap<>();
            for (int rep = 0; rep < reps; rep++) {
                for (Map.Entry<String, ConnectionFactory> e : clients.entrySet()) {
                    sum.merge(e.getKey(), tps(e.getValue(), workers, millis), Double::sum);
                }
            }
            double base = sum.get("plain r2dbc-postgresql");
            for (Map.Entry<String, Double> e : sum.entrySet()) {
                MD.append(String.format(Locale.ROOT, "| %d | %s | %.0f | %.3f |%n", workers, e.getKey(), e.getValue() / reps,
                        e.getValue() / base));
                JSON.put("r2dbc.e2e." + workers + "." + e.getKey() + ".ratio", e.getValue() / base);
            }
        }
        MD.append('\n');
    }
}
