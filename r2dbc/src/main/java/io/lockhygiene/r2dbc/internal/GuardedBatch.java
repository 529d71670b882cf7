package io.lockhygiene.r2dbc.internal;

import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.guard.StatementPlan.TextAnalysis;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.sql.SqlScanner;
import io.r2dbc.spi.Batch;
import io.r2dbc.spi.Result;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * A batch: each text that passed the prefilter is planned by the decision table's batch rule at execution
 * (strict rejects, emulate refuses session-level calls, detect records them for the check at the transaction's
 * end); the texts go to the driver's batch as they are.
 */
final class GuardedBatch implements Batch {
    private final R2dbcGuard guard;
    private final Batch delegate;
    private final List<String> flagged = new ArrayList<>(0);

    GuardedBatch(R2dbcGuard guard, Batch delegate) {
        this.guard = guard;
        this.delegate = delegate;
    }

    @Override
    public Batch add(String sql) {
        if (sql != null && SqlScanner.mightMatter(sql)) {
            flagged.add(sql);
        }
        delegate.add(sql);
        return this;
    }

    @Override
    public Publisher<? extends Result> execute() {
        if (flagged.isEmpty() && guard.emulation == null) {
            return guard.gate.afterMany(guard.begin.now().thenMany(delegate.execute()));
        }
        Throwable callSite = flagged.isEmpty() ? null
                : io.lockhygiene.internal.leak.CallSite.capture("session-level advisory lock call sent here");
        return guard.gate.afterMany(Flux.defer(() -> {
            Flux<Result> lost = guard.lossOnce();
            return lost != null ? lost : guard.situation().flatMapMany(where -> planned(where, callSite));
        }));
    }

    private Flux<Result> planned(LockPolicy.Situation where, Throwable callSite) {
        // emulate: an owner holding locks has its autocommit batch committed in a transaction of ours whose
        // COMMIT carries the fence, as a single statement's
        boolean wrap = guard.emulation != null && !where.statementRunsInTransaction() && guard.emulation.ownerHolds();
        for (String sql : flagged) {
            TextAnalysis a = TextAnalysis.of(sql);
            Plan p = LockPolicy.inBatch(a.scan(), guard.emulation == null ? null : a.shape(), where, guard.settings);
            switch (p.action()) {
                case REJECT:
                    return Flux.error(R2dbcErrors.of(guard.recorder().reject(sql, a.scan())));
                case REFUSE:
                    return Flux.error(R2dbcErrors.of(guard.refused(p.refusal(), sql)));
                case RECORD:
                    guard.recorder().record(a.scan(), sql, where, LockPolicy.rewrites(guard.settings),
                            LockPolicy.emulates(guard.settings) && guard.emulation == null, callSite);
                    break;
                default:
                    break;
            }
            wrap |= p.wrapped();
        }
        // autocommit under transaction pooling: a transaction of ours, whose COMMIT carries the check
        return wrap ? guard.ends.wrapped(delegate::execute)
                : guard.begin.now().thenMany(Flux.<Result>from(delegate.execute()));
    }
}
