package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.leak.UnlockWatch;
import io.lockhygiene.internal.session.OwnerSession;
import io.lockhygiene.internal.session.ReactiveSession;
import io.lockhygiene.internal.session.SkipLockedCheck;
import io.lockhygiene.internal.session.StatementStep;
import io.lockhygiene.internal.session.TextAnalysis;
import io.lockhygiene.internal.session.TransactionPooling;
import io.lockhygiene.internal.holder.Holder;
import io.lockhygiene.internal.policy.LockPolicy.Situation;
import io.lockhygiene.internal.policy.LockPolicy;
import io.lockhygiene.internal.policy.Plan;
import io.lockhygiene.internal.shape.LockShape;
import io.lockhygiene.internal.sql.NumberedParameters;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.AdvisoryCall;
import io.lockhygiene.internal.sql.SqlScanner;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.settings.Settings;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Everything LockHygiene does for one R2DBC connection: the R2DBC counterpart of the JDBC connection guard,
 * over the same core. A text that passes the prefilter is read once ({@link TextAnalysis}); at its execution the
 * one decision table ({@link LockPolicy#plan}) decides from where the connection stands ({@link #situation},
 * the server's transaction status as r2dbc-postgresql tracks it, and the pooling), and this carries out the
 * plan: as it is, recorded for the leak check, rewritten, refused (strict, emulate), decided in emulate's lock
 * table ({@link Emulation}), or in a transaction of ours whose end carries the check or the fence
 * ({@link R2dbcEnds}). A text that does not pass the prefilter goes to the driver untouched, unless the owner
 * holds emulated locks (its commits are fenced).
 *
 * <p>Nothing here blocks: work that waits (the lock table, the holder) runs through {@link Blocking}. One
 * operation at a time, as an R2DBC connection is used.
 */
final class R2dbcGuard {
    private static final AtomicLong IDS = new AtomicLong();

    /** The front-end-neutral part of this connection: its id, settings, reporter, recent calls, emulation. */
    final OwnerSession session;
    /** The session's. */
    final Settings settings;
    /** The driver's own connection, unseen by r2dbc-proxy's listeners: the server's keys are asked on it. */
    final Connection raw;
    /** r2dbc-proxy's connection over it: what LockHygiene sends goes through it, seen by its listeners. */
    final Connection proxy;
    /** The session's emulation: emulate with a holder, else null. */
    final Emulation emulation;
    final R2dbcEnds ends;
    /** The core's statements of its own for this connection (its ends, close, pooler detection, catalog). */
    final ReactiveSession reactive;
    /** leakCheck=always: under transaction pooling every transaction end is checked, an autocommit statement's too. */
    final boolean checksEveryEnd;
    /** The core's answer: the holder's locks are the owner's wherever it connects, so emulate is pooled everywhere. */
    private final TransactionPooling transactionPooling;
    /** Ends of ours still on their way: later operations wait for them. */
    final PendingEnd gate = new PendingEnd();
    /** The connection as the core's port: its transaction status as the server reported it; how ours is sent. */
    final DriverConnection driver;
    /** emulate: the application's BEGIN, sent with its first statement that needs the server (the driver's). */
    final DeferredBegin begin;
    /**
     * The server's open transaction is one of ours around an autocommit statement (until its end, which may still be
     * on its way after the application saw the statement's error): the application is in autocommit all along.
     */
    volatile boolean transactionOfOurs;

    /** @param holder emulate's holder for this connection, or null (no emulation) */
    R2dbcGuard(Connection raw, Connection proxy, Settings settings, Holder holder) {
        this.raw = raw;
        this.proxy = proxy;
        this.settings = settings;
        this.driver = new DriverConnection(raw, proxy);
        this.session = new OwnerSession(settings, "lh-r2dbc-" + IDS.incrementAndGet(), holder, () -> {
            Blocking.assertMayBlock(); // it waits for the server's answer: never on an event loop
            return ReactiveSession.sessionBounds(driver);
        });
        this.emulation = session.emulation();
        this.checksEveryEnd = LockPolicy.checksEveryTransaction(settings);
        this.transactionPooling = new TransactionPooling(settings, session.id(), emulation != null);
        this.begin = driver.begin;
        this.reactive = new ReactiveSession(session, driver, transactionPooling);
        this.ends = new R2dbcEnds(this);
    }

    /**
     * The hot path: a text that cannot matter goes to the driver as it is (the prefilter's passes, nothing
     * else); everything else is a statement of ours. Under emulate every statement is ours, decided when it is
     * executed, not when it is made: a reactive application makes its statements when it assembles a chain
     * ({@code begin.thenMany(createStatement(...).execute())}), before the BEGIN or the lock before them ran, and
     * what such a statement needs (the application's BEGIN sent first, a fenced commit) is known only then.
     */
    Statement createStatement(String sql) {
        if (session.off()) {
            return proxy.createStatement(sql);
        }
        session.statementSeen();
        boolean flagged = sql == null || SqlScanner.mightMatter(sql);
        // the leak check's sample counts the statements no advisory call flags, as JDBC's does (the turn is taken
        // at execution, where it is known whether the statement is its own transaction under transaction pooling)
        boolean sampled = !flagged && session.autocommitSampleTurn();
        if (!flagged && !sampled && emulation == null && !gate.pending() && !TransactionControl.mayStartWithEnd(sql)
                && !(assumesPooling() && (checksEveryEnd || sql.indexOf(';') >= 0))) {
            return proxy.createStatement(sql);
        }
        return new GuardedStatement(this, sql, flagged, sampled);
    }

    /** At execution, an unflagged statement needs nothing of ours (the core's rule: {@link StatementStep#looksAtUnflagged}). */
    private boolean passes(GuardedStatement st) {
        return !st.flagged && !st.sampled && !gate.pending() && !begin.pending()
                && !StatementStep.looksAtUnflagged(session, st.sql, driver.inTransaction(), assumesPooling());
    }

    /**
     * emulate: the server reported that an error aborted the open transaction (a statement it ran failed, the
     * application's own or ours). PostgreSQL let go of the innermost level's transaction-level locks then, so the
     * lock table does too, once per failure (decided from what the server reports, whichever way the error reached
     * the application: R2DBC delivers it inside a Result).
     */
    Mono<Void> followFailure() {
        return emulation == null || !emulation.failureToFollow(driver.serverTransactionFailed(), false) ? NOTHING
                : Blocking.run(emulation::innermostFailed);
    }

    /** Where the connection stands now; the pooling is detected once (one round trip) when asked first. */
    Mono<Situation> situation() {
        return pooling().map(pooled -> {
            Situation.TransactionStatus status = !driver.inTransaction() ? Situation.TransactionStatus.IDLE
                    : !begin.pending() && driver.serverTransactionFailed() ? Situation.TransactionStatus.FAILED
                    : Situation.TransactionStatus.OPEN;
            return session.situation(status, !driver.inTransaction(), pooled);
        });
    }

    /** Transaction pooling, the core's answer ({@link TransactionPooling}); asked of the server once when not known. */
    Mono<Boolean> pooling() {
        Boolean known = transactionPooling.known();
        // known: no stage made (asked before every planned statement); else the core asks the server
        return known != null ? Mono.just(known) : R2dbcErrors.fromCore(reactive::detectPooling);
    }

    /** What {@link #pooling()} answers without asking: a pooler unless known otherwise. */
    boolean assumesPooling() {
        return transactionPooling.assumed();
    }

    /** One execution of a statement of ours: the plan decided now, from where the connection stands now. */
    Flux<Result> execute(GuardedStatement st) {
        return gate.afterMany(() -> {
            Flux<Result> lost = lossOnce();
            if (lost != null) {
                return lost;
            }
            Mono<Void> failure = followFailure();
            return failure == NOTHING ? planned(st) : failure.thenMany(Flux.defer(() -> planned(st)));
        });
    }

    /** {@link Mono#empty()}: one instance, so an execution with no failure to follow allocates nothing for it. */
    private static final Mono<Void> NOTHING = Mono.empty();

    /** After a loss and a failure were looked at: the statement as it is, or planned now. */
    private Flux<Result> planned(GuardedStatement st) {
        if (passes(st)) {
            return Flux.from(st.real(proxy, st.sql).execute());
        }
        String sql = st.sql;
        TextAnalysis analysis = sql == null || sql.isEmpty() ? null : TextAnalysis.of(sql);
        ScanResult scan = analysis == null ? ScanResult.NOTHING : analysis.scan();
        SkipLockedCheck skipLocked = session.skipLockedCheck(scan);
        if (skipLocked != null) {
            return R2dbcErrors.fromCore(() -> reactive.skipLockedChecked(skipLocked, st.sql, st.callSite))
                    .thenMany(Flux.defer(() -> situation().flatMapMany(where -> run(st, scan, where))));
        }
        return situation().flatMapMany(where -> run(st, scan, where));
    }

    /**
     * emulate: the loss of the owner's locks, once, when the holder saw one (a volatile read otherwise): the open
     * transaction rolled back and the application told, as a dead session's client is. Asked before anything else
     * of an execution: a loss clears the owner's locks from the table, after which its statements would pass as
     * an owner's that holds nothing, unfenced, while it still believes it holds them.
     */
    Flux<Result> lossOnce() {
        SQLException lost = emulation == null ? null : emulation.lossOnce();
        return lost == null ? null
                : R2dbcErrors.fromCore(reactive::rollbackQuietly).thenMany(Flux.error(R2dbcErrors.of(lost)));
    }

    private Flux<Result> run(GuardedStatement st, ScanResult scan, Situation where) {
        String sql = st.sql;
        if (scan.calls().isEmpty()) {
            return withoutCalls(st, scan, where);
        }
        LockShape shape = null;
        NumberedParameters dollars = null;
        if (emulation != null) {
            dollars = NumberedParameters.of(sql);
            shape = OwnerSession.withoutConnection(TextAnalysis.of(dollars.jdbcText).shape());
        }
        LockPolicy.Form form = st.hasBindings() || (shape != null && shape.parameterCount() > 0)
                ? LockPolicy.Form.PREPARED : LockPolicy.Form.TEXT;
        Plan p;
        String sent = sql;
        ScanResult sentScan;
        try {
            p = session.plan(sql, scan, shape, form, false, where);
            switch (p.action()) {
                case SPLIT:
                    throw session.refuse("several statements with advisory calls in one R2DBC statement"
                            + " (send them one statement at a time)", sql);
                case EMULATE:
                    return emulated(st, shape, dollars, where);
                case REWRITE:
                    sent = session.rewritten(sql, scan, where.statementRunsInTransaction());
                    break;
                default:
                    break;
            }
            sentScan = sent == sql ? scan : SqlScanner.scan(sent);
            session.beforeSend(p, sql, sentScan, where, st.callSite);
        } catch (SQLException e) {
            return Flux.error(R2dbcErrors.of(e));
        }
        String why = StatementStep.checkAfterTextEnd(session, sentScan, where);
        if (why != null) {
            // a text that takes a lock and ends its transaction (SELECT pg_advisory_lock(k); COMMIT, or a transaction
            // of its own: BEGIN; ...; COMMIT): the check after its end, as for a text without calls
            return watchingUnlocks(ends.checkedText(st, sent, sentScan, why), sentScan, sql, st.callSite);
        }
        return watchingUnlocks(p.wrapped() && p.action() != Plan.Action.ON_SERVER ? ends.wrapped(st, sent)
                : plain(st, sent, where), sentScan, sql, st.callSite);
    }

    /**
     * A statement with an unlock call that the server runs: PostgreSQL's answer "you don't own a lock of type ..."
     * (a notice, which R2DBC shows as a message segment) is reported as the JDBC guard reports it
     * ({@link UnlockWatch}: the most common real failure, an unlock on another session than its lock), when the
     * application reads its results. Its results are otherwise unchanged.
     */
    private Flux<Result> watchingUnlocks(Flux<Result> run, ScanResult sentScan, String sql, Throwable callSite) {
        AdvisoryCall unlock = UnlockWatch.unlockOf(sentScan);
        if (unlock == null) {
            return run;
        }
        return run.map(r -> r.filter(segment -> {
            if (segment instanceof Result.Message) {
                UnlockWatch.answered(unlock, ((Result.Message) segment).message(), sql, session.reporter(), settings,
                        callSite);
            }
            return true;
        }));
    }

    /**
     * A statement without advisory calls that is ours only because the owner holds emulated locks or keeps a
     * transaction in the lock table, a leak check may be due, or the sample took it: the core says what it needs
     * ({@link StatementStep#decide}), this sends it. Savepoint texts and ends the server reports are followed in
     * the lock table.
     */
    private Flux<Result> withoutCalls(GuardedStatement st, ScanResult scan, Situation where) {
        String sql = st.sql;
        boolean inTransaction = where.statementRunsInTransaction();
        StatementStep step;
        try {
            step = StatementStep.decide(session, sql, scan, where, st.sampled);
        } catch (SQLException e) {
            return Flux.error(R2dbcErrors.of(e));
        }
        Flux<Result> run;
        switch (step.kind()) {
            case WRAPPED:
            case FENCED:
                return ends.wrapped(st, sql);
            case ENDS_BY_TEXT:
                return endedByText(sql);
            case LETS_GO_AFTER:
                return plain(st, sql, where).concatWith(Blocking.run(emulation::discardedAll).then(Mono.empty()));
            case CHECKED_TEXT:
                run = ends.checkedText(st, sql, scan, step.checkWhy());
                break;
            case ENDS_UNCHECKED:
                // said when it ended the transaction (its server is no longer the connection's), as JDBC says it
                return plain(st, sql, where).concatWith(Mono.fromRunnable(() -> {
                    if (!driver.serverInTransaction()) {
                        session.transactionEndedUnchecked();
                    }
                }).then(Mono.empty()));
            case FENCED_TEXT:
                run = fencedText(st, sql, scan, inTransaction);
                break;
            default:
                run = null;
                break;
        }
        if (run == null) {
            run = plain(st, sql, where);
        }
        if (emulation != null && scan.hasTransactionControl() && inTransaction) {
            // followed only when it took effect: R2DBC delivers a failed SAVEPOINT, RELEASE or ROLLBACK TO inside a
            // Result, so the execution completes either way; the server's status says (a failed one leaves the
            // transaction failed, a ROLLBACK TO that worked leaves it open)
            run = run.concatWith(Mono.defer(() -> driver.serverTransactionFailed() || !emulation.transactionActive()
                    ? Mono.<Void>empty() : Blocking.run(() -> emulation.followSavepoints(scan, sql))).then(Mono.empty()));
        }
        if (emulation != null && inTransaction) {
            // decided from what the server reports: a text that ended the transaction some other way (COMMIT
            // AND CHAIN aside, a text of several statements) leaves nothing of it in the lock table
            // AND CHAIN ended it too, though the next one is open on the server
            run = run.concatWith(Mono.defer(() -> (!driver.serverInTransaction()
                    || (scan.chainsTransaction() && !driver.serverTransactionFailed())) && emulation.transactionPending()
                    ? R2dbcErrors.fromCore(reactive::ended) : Mono.<Void>empty()).then(Mono.empty()));
        }
        return run;
    }

    /** The text with the owner's fences in it ({@link R2dbcEnds#fencedText}), or null; a failure it met is followed. */
    private Flux<Result> fencedText(GuardedStatement st, String sql, ScanResult scan, boolean inTransaction) {
        Flux<Result> run = ends.fencedText(st, sql, scan, inTransaction);
        // an error aborted the transaction it ran in (PostgreSQL skipped the rest): followed
        return run != null && inTransaction ? followingFailure(run) : run;
    }

    /** The statement as sent (the application's text, or rewrite's); under emulate a failure that aborted its transaction is followed. */
    Flux<Result> plain(GuardedStatement st, String sent, Situation where) {
        Flux<Result> run = begin.now().thenMany(Flux.defer(() -> Flux.<Result>from(st.real(proxy, sent).execute())));
        if (emulation == null || !where.statementRunsInTransaction()) {
            return run;
        }
        return followingFailure(run);
    }

    /**
     * {@code run} inside a transaction: an error the server reported aborts the transaction, followed when the
     * statement's results end (and at the next statement, for an application that stopped reading them).
     */
    private Flux<Result> followingFailure(Flux<Result> run) {
        return run.onErrorResume(e -> followFailure().then(Mono.error(e)))
                .concatWith(Mono.defer(this::followFailure).then(Mono.empty()));
    }

    /**
     * The application's transaction end sent as text, sent as commitTransaction() and rollbackTransaction() send
     * theirs (the fence and the leak check in its round trip when due, the lock table following it); the
     * application reads an empty result, as from the end itself.
     */
    private Flux<Result> endedByText(String sql) {
        return begin.now().then(ends.endByText(sql)).thenMany(Flux.just(LocalResult.none()));
    }

    /** emulate: every call decided in the lock table, the answer made here, one per binding. */
    private Flux<Result> emulated(GuardedStatement st, LockShape shape, NumberedParameters dollars, Situation where) {
        boolean inTransaction = where.statementRunsInTransaction();
        List<R2dbcBinds> bindings = st.bindings();
        return Flux.fromIterable(bindings)
                .concatMap(b -> ServerKeyQuery.of(this, shape, b.readAs(dollars)).map(Optional::of)
                        .defaultIfEmpty(Optional.empty())
                        .flatMap(keys -> Blocking.call(() -> emulation.execute(shape, b, inTransaction, 0, st.callSite,
                                keys.orElse(null))))
                        .doOnCancel(emulation::cancel)
                        .map(outcome -> {
                            try {
                                return (Result) LocalResult.of(outcome.rows());
                            } finally {
                                outcome.finish();
                            }
                        }))
                .onErrorResume(e -> {
                    Throwable shown = e instanceof SQLException ? R2dbcErrors.of((SQLException) e) : e;
                    // in PostgreSQL a failed call (a deadlock, a timeout) aborts the transaction it ran in
                    return inTransaction ? ends.abortTransaction().then(Mono.error(shown)) : Mono.error(shown);
                });
    }

    void closed() {
        session.closed();
    }
}
