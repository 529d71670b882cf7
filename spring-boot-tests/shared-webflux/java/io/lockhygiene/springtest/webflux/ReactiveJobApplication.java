package io.lockhygiene.springtest.webflux;

import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.spi.Connection;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * An ordinary WebFlux service on R2DBC (Boot's ConnectionFactory: r2dbc-pool over r2dbc-postgresql): a request
 * runs a job once at a time across the fleet, guarded by a session advisory lock on one connection of the pool
 * (try-lock, the job's own statement, unlock), as such services write it for PostgreSQL.
 */
@SpringBootApplication
public class ReactiveJobApplication {
    /** What the jobs did (read by the test): runs, runs that overlapped another, unlocks that returned false. */
    public static final class Tally {
        public final AtomicInteger runs = new AtomicInteger();
        public final AtomicInteger overlapping = new AtomicInteger();
        public final AtomicInteger failedUnlocks = new AtomicInteger();
        final AtomicInteger running = new AtomicInteger();
    }

    @org.springframework.context.annotation.Bean
    Tally tally() {
        return new Tally();
    }

    @RestController
    static class JobController {
        private final DatabaseClient db;
        private final Tally tally;

        JobController(DatabaseClient db, Tally tally) {
            this.db = db;
            this.tally = tally;
        }

        @GetMapping("/job/{key}")
        Mono<String> job(@PathVariable("key") long key) {
            return db.inConnection(c -> first(c, "select pg_try_advisory_lock($1)", key).flatMap(got -> {
                if (!Boolean.TRUE.equals(got)) {
                    return Mono.just("busy");
                }
                if (tally.running.incrementAndGet() > 1) {
                    tally.overlapping.incrementAndGet();
                }
                tally.runs.incrementAndGet();
                return Mono.from(c.createStatement("select pg_sleep(0.02)").execute())
                        .flatMap(r -> Mono.from(r.getRowsUpdated()))
                        .doFinally(s -> tally.running.decrementAndGet())
                        .then(first(c, "select pg_advisory_unlock($1)", key))
                        .map(unlocked -> {
                            if (!Boolean.TRUE.equals(unlocked)) {
                                tally.failedUnlocks.incrementAndGet();
                            }
                            return "ran";
                        });
            }));
        }

        private static Mono<Object> first(Connection c, String sql, long key) {
            return Mono.from(c.createStatement(sql).bind("$1", key).execute())
                    .flatMap(r -> Mono.from(r.map((row, meta) -> row.get(0))));
        }
    }
}
