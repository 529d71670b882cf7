package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

import io.lockhygiene.internal.session.TransactionEnd;
import io.lockhygiene.internal.sql.Seals;
import io.lockhygiene.internal.sql.SqlScanner.ScanResult;
import io.lockhygiene.internal.sql.TransactionControl;
import io.lockhygiene.internal.policy.TextFences;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.policy.LockPolicy;
import io.r2dbc.spi.ColumnMetadata;
import io.r2dbc.spi.R2dbcRollbackException;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Row;
import io.r2dbc.spi.RowMetadata;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The ends of one R2DBC connection's transactions and the connection's close, as the JDBC guard's: the leak
 * check goes in the end's own round trip ({@code COMMIT; <list and release>}, one simple-query text, so a
 * transaction pooler keeps the server until all of it ran), and an owner holding emulated locks has its
 * COMMIT fenced in that round trip ({@code <fence>; COMMIT}). An autocommit statement that needs either runs
 * in a transaction of ours ({@link #wrapped}). Never ends a transaction the application opened.
 */
final class R2dbcEnds {
    private final R2dbcGuard guard;

    R2dbcEnds(R2dbcGuard guard) {
        this.guard = guard;
    }

    /** commitTransaction(): plain, or with the fence and the check when due. */
    Mono<Void> commit() {
        return end(true, null);
    }

    /**
     * The application's own end as text (COMMIT, END, ROLLBACK, ABORT): sent as it is (a failed transaction's
     * COMMIT is PostgreSQL's rollback, not the driver's error), with the fence and the check in its round trip.
     */
    Mono<Void> endByText(String text) {
        String command = text.trim().replaceAll(";+\\s*$", "").trim();
        return end(TransactionControl.commits(command), command);
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
        int[] points = TextFences.points(scan, inTransaction, inTransaction && guard.serverTransactionFailed());
        if (points.length == 0) {
            return null;
        }
        Mono<TransactionEnd> decided = Blocking.call(() -> TransactionEnd.decide(guard.session, "COMMIT", true, null));
        return guard.begin.now().then(decided)
                .onErrorResume(SQLException.class,
                        lost -> rollbackQuietly().then(ended()).then(Mono.error(R2dbcErrors.of(lost))))
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
                        : Flux.from(r.getT2().map(R2dbcEnds::heldLock)).filter(Optional::isPresent).map(Optional::get)
                        .collectList()
                        .flatMap(held -> onTable(() -> {
                            guard.session.checkedAtTransactionEnd(held, command, why, null);
                            guard.session.transactionEnded(true);
                        }))
                        .then(Mono.<Result>empty()));
    }

    /** The fence's result, read and not shown: nothing when it passed, the loss when it failed. */
    private Mono<Result> fenceResult(TransactionEnd end, Result fence) {
        return Flux.from(fence.flatMap(segment -> segment instanceof Result.Message
                        && !isNotice((Result.Message) segment)
                        ? Mono.just(((Result.Message) segment).exception()) : Mono.<io.r2dbc.spi.R2dbcException>empty()))
                .next()
                .flatMap(failed -> Blocking.call(() -> Optional.ofNullable(end.lossOf(R2dbcErrors.toSql(failed))))
                        .flatMap(lost -> lost.isPresent()
                                ? rollbackQuietly().then(ended()).then(Mono.<Result>error(R2dbcErrors.of(lost.get())))
                                : Mono.<Result>error(failed)));
    }

    private static boolean isNotice(Result.Message m) {
        String state = m.sqlState() == null ? "" : m.sqlState();
        return state.startsWith("00") || state.startsWith("01");
    }

    /** rollbackTransaction(): plain, or with the check when due. */
    Mono<Void> rollback() {
        return end(false, null);
    }

    /** @param text the application's own end text, or null for the driver's commitTransaction()/rollbackTransaction() */
    private Mono<Void> end(boolean commit, String text) {
        return Mono.defer(() -> {
            if (guard.begin.endUnsent()) {
                return ended(); // emulate: the transaction never reached the server (see DeferredBegin)
            }
            if (!guard.serverInTransaction() && text == null) {
                // nothing open on the server: the driver's own end (it sends nothing either)
                return Mono.from(commit ? guard.proxy.commitTransaction() : guard.proxy.rollbackTransaction())
                        .then(ended());
            }
            // the same rule as JDBC's: recorded calls, the sample of explicit ends, leakCheck=always
            String why = guard.assumesPooling() ? guard.session.checkAtTransactionEnd(true) : null;
            String command = text != null ? text : commit ? "COMMIT" : "ROLLBACK";
            // a failed transaction's COMMIT is a rollback: nothing to fence (a fence would only fail with 25P02)
            boolean commitsOpen = commit && !guard.serverTransactionFailed();
            Callable<TransactionEnd> decide = () -> TransactionEnd.decide(guard.session, command, commitsOpen, why);
            // an owner that holds something has its seals read under the lock table's lock: off the event loop
            Mono<TransactionEnd> decided = guard.emulation != null && guard.emulation.ownerHolds()
                    ? Blocking.call(decide) : Mono.fromCallable(decide);
            return decided
                    .onErrorResume(SQLException.class,
                            lost -> rollbackQuietly().then(ended()).then(Mono.error(R2dbcErrors.of(lost))))
                    .flatMap(end -> send(end, commit, text == null, commit && !commitsOpen));
        });
    }

    /**
     * @param failedCommit a COMMIT of a transaction the server reported failed: PostgreSQL rolls it back, and
     *                     r2dbc-postgresql's commitTransaction() says so with an error, which the API's end here says
     *                     too when it carried the check (R2dbcDifferentialTest's seed 20261223)
     */
    private Mono<Void> send(TransactionEnd end, boolean commit, boolean api, boolean failedCommit) {
        if (end.plain() && api) {
            // a failed end (r2dbc-postgresql's "the database returned ROLLBACK" for a failed transaction's commit, a
            // serialization failure) ended the transaction on the server too: the table lets go of it either way
            return Mono.from(commit ? guard.proxy.commitTransaction() : guard.proxy.rollbackTransaction())
                    .onErrorResume(e -> ended().then(Mono.error(e)))
                    .then(ended());
        }
        return listing(end.text())
                .flatMap(held -> onTable(() -> end.succeeded(held, guard.assumesPooling(), null)))
                .onErrorResume(e -> failed(end, e))
                .then(api && failedCommit ? Mono.error(new R2dbcRollbackException(ROLLED_BACK, "99999"))
                        : Mono.<Void>empty());
    }

    /** r2dbc-postgresql's words (and SQLState) for the commit of a transaction that had failed. */
    private static final String ROLLED_BACK = "The database returned ROLLBACK, so the transaction cannot be committed."
            + " Transaction failure is not known (check server logs?)";

    /**
     * An end that carried the fence or the check failed: when the fence did (a session the owner's locks lived on is
     * gone), the application gets 08006 naming the keys, as a dead session's client gets an error; any other failure
     * is the end's own. Either way a transaction the failure left open is rolled back: a fence sent into a
     * transaction that had failed meanwhile (the application stopped reading a statement whose error aborted it,
     * before the server's status said so) fails with 25P02 and skips the end, and the connection must not stay in
     * that failed transaction, as it does not in autocommit on PostgreSQL.
     */
    private Mono<Void> failed(TransactionEnd end, Throwable serverError) {
        Callable<Optional<SQLException>> lost = () -> Optional.ofNullable(end.failed(R2dbcErrors.toSql(serverError),
                guard.assumesPooling()));
        // the holder looks at its sessions at once when a fence failed: off the event loop
        return (end.fenced() ? Blocking.call(lost) : Mono.fromCallable(lost))
                .flatMap(l -> rollbackQuietly().then(ended()).then(Mono.<Void>error(l.isPresent()
                        ? R2dbcErrors.of(l.get()) : serverError)));
    }

    /**
     * The transaction is over (an end of ours, or a statement of the application that ended it on the server):
     * recorded calls cleared, its transaction-level locks in the table gone.
     */
    Mono<Void> ended() {
        return onTable(() -> guard.session.transactionEnded(guard.assumesPooling()));
    }

    /**
     * {@code work} on the connection's transaction in the lock table: off the event loop while the table keeps the
     * transaction (its locks are let go under the table's lock), else at once (it only forgets the venue).
     */
    private Mono<Void> onTable(Runnable work) {
        return Mono.defer(() -> guard.emulation != null && guard.emulation.transactionActive() ? Blocking.run(work::run)
                : Mono.fromRunnable(work));
    }

    /** ROLLBACK when a transaction is open; errors dropped (a broken connection says so on its next use). */
    Mono<Void> rollbackQuietly() {
        return Mono.defer(() -> guard.begin.endUnsent() || !guard.serverInTransaction() ? Mono.<Void>empty()
                        : Mono.from(guard.proxy.rollbackTransaction()))
                .onErrorResume(e -> Mono.empty());
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
     * Close: under session pooling or direct, the session's locks still held were never unlocked (listed,
     * released and reported); emulate lets go of the owner's locks (reported); then the driver's close.
     */
    Mono<Void> close() {
        return Mono.defer(() -> {
            Mono<Void> check = Mono.empty();
            // under transaction pooling every transaction end was checked instead; inside an open transaction
            // session locks cannot be told from transaction-level ones
            if (guard.session.checkDueAtReturn() && !guard.inTransaction() && !guard.assumesPooling()) {
                check = listing(PgLocks.atReturn(true))
                        .doOnNext(held -> guard.session.checkedAtReturn(held,
                                "when the connection was closed (checked at the close)", null))
                        .then()
                        .onErrorResume(e -> {
                            guard.session.reporter().checkFailed("at close", e instanceof Exception ? (Exception) e
                                    : new RuntimeException(e));
                            return Mono.empty();
                        });
            }
            Mono<Void> letGo = guard.emulation == null ? Mono.empty() : Blocking.run(() -> guard.emulation.letGo(true));
            return check.then(letGo).then(Mono.from(guard.proxy.close())).doFinally(s -> guard.closed());
        });
    }

    /** Runs {@code text} (one simple-query text) and returns the rows of its lock listing (none when it has none). */
    private Mono<List<HeldLock>> listing(String text) {
        return Flux.from(guard.proxy.createStatement(text).execute())
                .concatMap(r -> r.map(R2dbcEnds::heldLock))
                .filter(Optional::isPresent)
                .map(Optional::get)
                .collectList();
    }

    /** A row of the listing ({@link PgLocks#LIST_AND_RELEASE}); any other result's rows are not ours to read. */
    private static Optional<HeldLock> heldLock(Row row, RowMetadata meta) {
        List<? extends ColumnMetadata> columns = meta.getColumnMetadatas();
        if (columns.size() < 5 || !"classid".equalsIgnoreCase(columns.get(0).getName())) {
            return Optional.empty();
        }
        return Optional.of(new HeldLock(number(row.get(0)), number(row.get(1)), (int) number(row.get(2)),
                row.get(3, String.class), (int) number(row.get(4))));
    }

    private static long number(Object v) {
        return v == null ? 0 : ((Number) v).longValue();
    }
}
