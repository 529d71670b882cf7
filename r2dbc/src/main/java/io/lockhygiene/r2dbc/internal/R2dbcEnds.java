package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import io.lockhygiene.internal.session.ReactiveConnection;
import io.lockhygiene.internal.session.ReactiveSession;
import io.lockhygiene.internal.session.TransactionEnd;
import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.internal.policy.TextFences;
import io.lockhygiene.internal.leak.PgLocks;
import io.r2dbc.spi.Result;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The ends of one R2DBC connection's transactions and the connection's close, as the JDBC guard's: the leak
 * check goes in the end's own round trip ({@code COMMIT; <list and release>}, one simple-query text, so a
 * transaction pooler keeps the server until all of it ran), and an owner holding emulated locks has its
 * COMMIT fenced in that round trip ({@code <fence>; COMMIT}). The application's ends and the close are the core's,
 * sequenced once for every reactive front end ({@link ReactiveSession}); what is R2DBC's own here streams the
 * application's results: a text with the fence or the check inside it, and an autocommit statement that needs
 * either in a transaction of ours ({@link #wrapped}). Never ends a transaction the application opened.
 */
final class R2dbcEnds {
    private final R2dbcGuard guard;

    R2dbcEnds(R2dbcGuard guard) {
        this.guard = guard;
    }

    /** commitTransaction(): plain, or with the fence and the check when due (the core's {@link ReactiveSession#end}). */
    Mono<Void> commit() {
        return R2dbcErrors.fromCore(() -> guard.reactive.end(true, null));
    }

    /** rollbackTransaction(): plain, or with the check when due. */
    Mono<Void> rollback() {
        return R2dbcErrors.fromCore(() -> guard.reactive.end(false, null));
    }

    /**
     * The application's own end as text (COMMIT, END, ROLLBACK, ABORT): sent as it is (a failed transaction's
     * COMMIT is PostgreSQL's rollback, not the driver's error), with the fence and the check in its round trip.
     */
    Mono<Void> endByText(String text) {
        String command = text.trim().replaceAll(";+\\s*$", "").trim();
        return R2dbcErrors.fromCore(() -> guard.reactive.end(TransactionControl.commits(command), command));
    }

    /**
     * A text of several statements of an owner holding emulated locks that keeps work: its last statement ends the
     * transaction (the one rule's ENDS_TRANSACTION that is not a text's only statement), or it commits before its end
     * (FENCES_IN_TEXT). R2DBC sends a text as one statement, so the fence goes into the text itself, before each end
     * that keeps work and after autocommit statements at its end ({@link TextFences}: {@code INSERT ...; <fence>;
     * COMMIT}, one round trip, as JDBC's {@code <fence>; COMMIT}). A fence's result is not shown; when a fence fails
     * (a session the owner's locks lived on is gone), PostgreSQL skips the rest of the text, the transaction it ran
     * in is rolled back, and the application gets 08006 naming the keys. Null when nothing is to be fenced: the text
     * runs as it is.
     *
     * @param inTransaction the text starts inside a transaction
     */
    Flux<Result> fencedText(GuardedStatement st, String sql, ScanResult scan, boolean inTransaction) {
        if (guard.emulation == null || !guard.emulation.ownerHolds()) {
            return null;
        }
        int[] points = TextFences.points(scan, inTransaction, inTransaction && guard.driver.serverTransactionFailed());
        if (points.length == 0) {
            return null;
        }
        Mono<TransactionEnd> decided = Blocking.call(() -> TransactionEnd.decide(guard.session, "COMMIT", true, null));
        return guard.begin.now().then(decided)
                .onErrorResume(SQLException.class,
                        lost -> R2dbcErrors.<TransactionEnd>fromCore(() -> guard.reactive.abandoned(lost)))
                .flatMapMany(te -> {
                    if (!te.fenced()) {
                        return Flux.from(st.real(guard.proxy, sql).execute());
                    }
                    String sent = TextFences.spliced(sql, scan, points, te.fence());
                    long[] fences = TextFences.resultIndices(points);
                    return Flux.from(st.real(guard.proxy, sent).execute()).index()
                            .concatMap(r -> Arrays.binarySearch(fences, r.getT1()) >= 0 ? fenceResult(te, r.getT2())
                                    : Mono.just(r.getT2()));
                });
    }

    /**
     * A text of several statements whose last one ends the transaction, while the leak check is due under
     * transaction pooling, on a connection without emulation (an owner's goes fenced: {@link #fencedText}): the
     * listing and release ride after the end in the same text ({@code UPDATE ...; COMMIT; <list and release>}), so
     * they run on the server that held the transaction, as JDBC runs such a text's end with the check. The
     * application reads its text's results; the listing's is read here, reported and not shown. When a statement
     * before the end fails, PostgreSQL skips the rest: the transaction stays open and failed, as without us, and its
     * recorded calls go with its later end.
     *
     * @param why why the check is due ({@link io.lockhygiene.internal.session.StatementStep#checkAfterTextEnd})
     */
    Flux<Result> checkedText(GuardedStatement st, String sql, ScanResult scan, String why) {
        TransactionControl end = scan.finalTransactionEnd();
        String command = end.textIn(sql);
        long listing = scan.statementCount(); // one result per statement of the text before it
        // a new line first: a line comment after the end (COMMIT -- done) must not swallow the listing
        String sent = sql.substring(0, end.end()) + "\n; " + PgLocks.LIST_AND_RELEASE;
        return Flux.from(st.real(guard.proxy, sent).execute()).index()
                .concatMap(r -> r.getT1() < listing ? Mono.just(r.getT2())
                        : Flux.from(r.getT2().map(DriverConnection::row)).collectList()
                        .flatMap(rows -> listed(rows, command, why))
                        .then(Mono.<Result>empty()));
    }

    /** A checked text's listing, read: reported, and the transaction over (on the worker while the table keeps it). */
    private Mono<Void> listed(List<ReactiveConnection.Row> rows, String command, String why) {
        return R2dbcErrors.fromCore(() -> guard.reactive.onTable(() -> {
            guard.session.checkedAtTransactionEnd(ReactiveSession.listing(rows), command, why, null);
            guard.session.transactionEnded(true);
        }));
    }

    /** The fence's result, read and not shown: nothing when it passed, the loss when it failed. */
    private Mono<Result> fenceResult(TransactionEnd end, Result fence) {
        return Flux.from(fence.flatMap(segment -> segment instanceof Result.Message
                        && !isNotice((Result.Message) segment)
                        ? Mono.just(((Result.Message) segment).exception()) : Mono.<io.r2dbc.spi.R2dbcException>empty()))
                .next()
                .flatMap(failed -> Blocking.call(() -> Optional.ofNullable(end.lossOf(R2dbcErrors.toSql(failed))))
                        .flatMap(lost -> lost.isPresent()
                                ? R2dbcErrors.<Result>fromCore(() -> guard.reactive.abandoned(lost.get()))
                                : Mono.<Result>error(failed)));
    }

    private static boolean isNotice(Result.Message m) {
        String state = m.sqlState() == null ? "" : m.sqlState();
        return state.startsWith("00") || state.startsWith("01");
    }

    /**
     * A call decided in the table failed inside the application's transaction (a deadlock, a timeout): in
     * PostgreSQL that aborts the transaction, so it is aborted the same way, with a statement that fails on
     * purpose, and the table lets go of the innermost level's transaction-level locks.
     */
    Mono<Void> abortTransaction() {
        // a transaction whose BEGIN is still deferred (DeferredBegin) is begun first: it is the application's, and it
        // is aborted as PostgreSQL would have aborted it
        return guard.begin.now().thenMany(Flux.defer(() -> Flux.from(guard.proxy.createStatement(
                        "ROLLBACK TO SAVEPOINT lockhygiene_statement_failed_in_the_lock_table").execute())))
                .flatMap(Result::getRowsUpdated)
                .onErrorResume(expected -> Mono.empty()) // 3B001: the transaction is aborted now, as PostgreSQL's
                .then(Mono.defer(() -> {
                    guard.emulation.failureToFollow(true, true); // the failure this makes is followed here, once
                    return Blocking.run(guard.emulation::innermostFailed);
                }));
    }

    /**
     * An autocommit statement in a transaction of ours (BEGIN, the statement, then the end): its COMMIT carries
     * the leak check (transaction pooling, session-level calls) and the fence (an owner holding emulated
     * locks); a failure rolls back, with the check.
     *
     * <p>The end runs on its own ({@link PendingEnd#until}): an application that stops reading
     * ({@code Mono.from(statement.execute())} takes the first Result and cancels, possibly while our COMMIT is on
     * its way) must not stop it half way, and every later operation of the connection waits for it. When the
     * application reads to the end, the end's error is its statement's; after a cancel it is reported (a
     * fence's reaches the next statement as the loss).
     */
    Flux<Result> wrapped(GuardedStatement st, String sent) {
        return wrapped(() -> st.real(guard.proxy, sent).execute());
    }

    /** {@code run} (a statement's or a batch's execution) in a transaction of ours; see {@link #wrapped(GuardedStatement, String)}. */
    Flux<Result> wrapped(java.util.function.Supplier<Publisher<? extends Result>> run) {
        return Flux.usingWhen(Mono.from(guard.proxy.beginTransaction()).doOnSuccess(began -> guard.transactionOfOurs = true)
                        .thenReturn(Boolean.TRUE),
                began -> Flux.<Result>from(run.get()),
                began -> onItsOwn(commit()),
                (began, error) -> onItsOwn(rollback()),
                began -> onItsOwn(commit().onErrorResume(this::reportAfterCancel)))
                .onErrorMap(R2dbcEnds::endsOwnError);
    }

    /**
     * Reactor reports a failed end of {@code usingWhen} as a RuntimeException "Async resource cleanup failed
     * after onComplete" around it; the application gets the end's own R2dbcException (a fenced COMMIT's 08006, the
     * server's error), as from a commit it sent itself.
     */
    private static Throwable endsOwnError(Throwable e) {
        if (e.getClass() == RuntimeException.class && e.getCause() instanceof io.r2dbc.spi.R2dbcException
                && String.valueOf(e.getMessage()).startsWith("Async resource cleanup failed")) {
            return e.getCause();
        }
        return e;
    }

    private Mono<Void> onItsOwn(Mono<Void> end) {
        Mono<Void> shared = end.doFinally(signal -> guard.transactionOfOurs = false).cache();
        guard.gate.until(shared);
        return shared;
    }

    private Mono<Void> reportAfterCancel(Throwable e) {
        SQLException failure = R2dbcErrors.toSql(e);
        if ("25P02".equals(failure.getSQLState())) {
            return Mono.empty(); // the statement's own error aborted the transaction: the application has it, ours is rolled back
        }
        if (guard.emulation == null || !Seals.isFenceFailure(failure)) {
            guard.session.reporter().checkFailed("at the end of a statement whose results the application stopped reading",
                    e instanceof Exception ? (Exception) e : new RuntimeException(e));
        }
        return Mono.empty();
    }

    /**
     * Close: the core's check and release first ({@link ReactiveSession#beforeClose}: under session pooling or
     * direct, the session's locks still held were never unlocked; emulate lets go of the owner's locks), then the
     * driver's close.
     */
    Mono<Void> close() {
        return R2dbcErrors.fromCore(guard.reactive::beforeClose).then(Mono.defer(() -> Mono.from(guard.proxy.close())))
                .doFinally(s -> guard.closed());
    }
}
