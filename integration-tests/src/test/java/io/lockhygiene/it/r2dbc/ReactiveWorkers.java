package io.lockhygiene.it.r2dbc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.Result;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reactive workers that guard one job with a session lock, as a reactive service's scheduled jobs do: each on a
 * connection of its own, {@code tries} times: {@code pg_try_advisory_lock(k)}, and when it got the lock the job
 * (a short statement) and {@code pg_advisory_unlock(k)}; all workers at once, none of it blocking a thread.
 */
final class ReactiveWorkers {
    /** What the workers did: jobs run, jobs that overlapped another, unlocks that returned false, errors. */
    record Outcome(int jobs, int overlapping, int failedUnlocks, int errors, int workersDone, String firstError) {
        @Override
        public String toString() {
            return "jobs " + jobs + ", overlapping " + overlapping + ", failed unlocks " + failedUnlocks + ", errors "
                    + errors + ", workers done " + workersDone + (firstError == null ? "" : " (" + firstError + ")");
        }
    }

    private ReactiveWorkers() {
    }

    static Outcome tryLockJobUnlock(ConnectionFactory cf, long key, int workers, int tries) {
        List<long[]> jobs = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failedUnlocks = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<String> firstError = Collections.synchronizedList(new ArrayList<>());
        Flux.range(0, workers)
                .flatMap(w -> Mono.usingWhen(cf.create(),
                        c -> Flux.range(0, tries).concatMap(i -> oneTry(c, key, jobs, failedUnlocks)).then(),
                        Connection::close)
                        .doOnSuccess(v -> done.incrementAndGet())
                        .onErrorResume(e -> {
                            errors.incrementAndGet();
                            firstError.add(String.valueOf(e));
                            return Mono.empty();
                        }), workers)
                .then()
                .block(java.time.Duration.ofSeconds(120));
        int overlapping = 0;
        synchronized (jobs) {
            for (int i = 0; i < jobs.size(); i++) {
                for (int j = 0; j < jobs.size(); j++) {
                    if (i != j && jobs.get(i)[0] < jobs.get(j)[1] && jobs.get(j)[0] < jobs.get(i)[1]) {
                        overlapping++;
                        break;
                    }
                }
            }
        }
        return new Outcome(jobs.size(), overlapping, failedUnlocks.get(), errors.get(), done.get(),
                firstError.isEmpty() ? null : firstError.get(0));
    }

    private static Mono<Void> oneTry(Connection c, long key, List<long[]> jobs, AtomicInteger failedUnlocks) {
        return first(c, "select pg_try_advisory_lock($1)", key).flatMap(got -> {
            if (!Boolean.TRUE.equals(got)) {
                return Mono.<Void>empty();
            }
            long start = System.nanoTime();
            return Flux.from(c.createStatement("select pg_sleep(0.01)").execute()).concatMap(Result::getRowsUpdated)
                    .then(Mono.fromRunnable(() -> jobs.add(new long[] {start, System.nanoTime()})))
                    .then(first(c, "select pg_advisory_unlock($1)", key))
                    .doOnNext(ok -> {
                        if (!Boolean.TRUE.equals(ok)) {
                            failedUnlocks.incrementAndGet();
                        }
                    })
                    .then();
        });
    }

    private static Mono<Object> first(Connection c, String sql, long key) {
        return Flux.from(c.createStatement(sql).bind("$1", key).execute())
                .concatMap(r -> r.map((row, meta) -> row.get(0)))
                .next();
    }
}
