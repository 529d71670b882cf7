package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.internal.leak.CallSite;
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
 * end, rewrite splices a call inside a transaction to its transaction-level form, as the JDBC batch does); the
 * texts go to the driver's batch then, in order. An owner holding emulated locks has its autocommit batch fenced
 * by the one rule ({@link LockPolicy#fencesBatch}).
 */
final class GuardedBatch implements Batch {
    private final R2dbcGuard guard;
    private final Batch delegate;
    /** Every text, in order: given to the driver's batch at execution, as planned then. */
    private final List<String> texts = new ArrayList<>(4);
    /** Which of {@link #texts} passed the prefilter (asked once, at add). */
    private final java.util.BitSet flagged = new java.util.BitSet();

    GuardedBatch(R2dbcGuard guard, Batch delegate) {
        this.guard = guard;
        this.delegate = delegate;
    }

    @Override
    public Batch add(String sql) {
        if (sql == null) {
            throw new IllegalArgumentException("sql must not be null"); // r2dbc-postgresql's words, at once, as without us
        }
        if (SqlScanner.mightMatter(sql)) {
            flagged.set(texts.size());
        }
        texts.add(sql);
        return this;
    }

    @Override
    public Publisher<? extends Result> execute() {
        if (flagged.isEmpty() && guard.emulation == null
                && !(guard.checksEveryEnd && guard.assumesPooling())) {
            texts.forEach(delegate::add);
            return guard.gate.afterMany(guard.begin.now().thenMany(delegate.execute()));
        }
        Throwable callSite = !flagged.isEmpty() ? CallSite.capture("session-level advisory lock call sent here") : null;
        return guard.gate.afterMany(Flux.defer(() -> {
            Flux<Result> lost = guard.lossOnce();
            return lost != null ? lost : guard.situation().flatMapMany(where -> planned(where, callSite));
        }));
    }

    private Flux<Result> planned(LockPolicy.Situation where, Throwable callSite) {
        boolean inTransaction = where.statementRunsInTransaction();
        OwnerSession session = guard.session;
        boolean controls = controlsTransactions();
        // an owner's autocommit batch carries the fence in the COMMIT of a transaction of ours; under leakCheck=always
        // any autocommit batch carries the check there, as a statement does (JDBC's rule, LockPolicy.wrapsBatch)
        boolean wrap = (session.ownerHolds() && LockPolicy.fencesBatch(inTransaction, true, controls))
                || (!controls && LockPolicy.wrapsBatch(where, guard.settings));
        for (int i = 0; i < texts.size(); i++) {
            String sql = texts.get(i);
            String sent = sql;
            if (flagged.get(i)) {
                TextAnalysis a = TextAnalysis.of(sql);
                try {
                    Plan p = session.inBatch(sql, a.scan(), guard.emulation == null ? null : a.shape(), where);
                    if (p.action() == Plan.Action.REWRITE) {
                        sent = session.rewritten(sql, a.scan(), inTransaction);
                    }
                    session.beforeSend(p, sql, sent == sql ? a.scan() : SqlScanner.scan(sent), where, callSite);
                    wrap |= p.wrapped();
                } catch (SQLException e) {
                    return Flux.error(R2dbcErrors.of(e));
                }
            }
            delegate.add(sent);
        }
        // autocommit under transaction pooling: a transaction of ours, whose COMMIT carries the check (or the fence)
        return wrap ? guard.ends.wrapped(delegate::execute)
                : guard.begin.now().thenMany(Flux.<Result>from(delegate.execute()));
    }

    /** A text of the batch is transaction control: no transaction of ours can be around it. */
    private boolean controlsTransactions() {
        for (String sql : texts) {
            if (sql != null && !sql.isEmpty() && TextAnalysis.of(sql).scan().hasTransactionControl()) {
                return true;
            }
        }
        return false;
    }
}
