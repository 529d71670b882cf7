package io.lockhygiene.internal.session;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import io.lockhygiene.internal.emulate.Emulation;
import io.lockhygiene.internal.holder.SessionBounds;
import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;

/**
 * The statements of LockHygiene's own that a reactive connection sends, written once for every reactive front end
 * (R2DBC's now, Vert.x's {@code SqlClient} next) over the port it implements, {@link ReactiveConnection}:
 * <ul>
 *   <li>the application's transaction end ({@link #end}), as {@link TransactionEnd} decides it: the fence and the
 *       leak check in the end's own round trip, what a failure of it means, the rollback of what a failure left
 *       open, and the lock table told the transaction is over;</li>
 *   <li>the leak check and the release of emulated locks before a close ({@link #beforeClose});</li>
 *   <li>the pooler's detection ({@link #detectPooling}), the SKIP LOCKED catalog ({@link #skipLockedChecked}) and
 *       the session's bounds on a wait ({@link #sessionBounds}), the queries the core asks for and reads the answers
 *       of.</li>
 * </ul>
 * What stays with a front end is what streams the application's own results (a text with a fence or the check
 * inside it, a statement in a transaction of ours) and its driver's API.
 *
 * <p>Each method returns a stage at once and never blocks the calling thread (often an event loop): the lock
 * table's work that may wait runs on the port's {@link ReactiveConnection#blocking() executor}. A stage fails with
 * a {@link SQLException} when the failure is the core's to say (the loss of the owner's locks, a refusal), which the
 * front end shows in its driver's words, and with the driver's own error otherwise, unchanged. The blocking front
 * end (JDBC) does not use this: it sends the same decisions at once ({@code TransactionEnds}) and pays nothing for
 * stages. One operation at a time, as the connection is used.
 */
public final class ReactiveSession {
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    private final OwnerSession session;
    private final ReactiveConnection connection;
    private final TransactionPooling pooling;

    public ReactiveSession(OwnerSession session, ReactiveConnection connection, TransactionPooling pooling) {
        this.session = session;
        this.connection = connection;
        this.pooling = pooling;
    }

    /**
     * The application's transaction end: the driver's commit or rollback ({@code text} null), or its own end text
     * (COMMIT, END, ROLLBACK, ABORT: sent as it is, since a failed transaction's COMMIT is PostgreSQL's rollback, not
     * the driver's error), with the fence and the leak check in its round trip when due.
     */
    public CompletionStage<Void> end(boolean commit, String text) {
        if (connection.dropUnsentBegin()) {
            return ended(); // emulate: the transaction never reached the server
        }
        if (!connection.serverInTransaction() && text == null) {
            // nothing open on the server: the driver's own end (it sends nothing either)
            return connection.driverEnd(commit).thenCompose(v -> ended());
        }
        // the same rule as JDBC's: recorded calls, the sample of explicit ends, leakCheck=always
        String why = pooling.assumed() ? session.checkAtTransactionEnd(true) : null;
        String command = text != null ? text : commit ? "COMMIT" : "ROLLBACK";
        // a failed transaction's COMMIT is a rollback: nothing to fence (a fence would only fail with 25P02)
        boolean commitsOpen = commit && !connection.serverTransactionFailed();
        Callable<TransactionEnd> decide = () -> TransactionEnd.decide(session, command, commitsOpen, why);
        Emulation emulation = session.emulation();
        // an owner that holds something has its seals read under the lock table's lock: off the event loop
        CompletionStage<TransactionEnd> decided = emulation != null && emulation.ownerHolds() ? onWorker(decide)
                : now(decide);
        return after(decided, end -> send(end, commit, text == null, commit && !commitsOpen),
                error -> error instanceof SQLException ? abandoned(error) // the loss, known before anything was sent
                        : failure(error));
    }

    /**
     * @param failedCommit a COMMIT of a transaction the server reported failed: PostgreSQL rolls it back, and the
     *                     driver's own commit says so with an error, which the API's end here says too when it
     *                     carried the check (R2dbcDifferentialTest's seed 20261223)
     */
    private CompletionStage<Void> send(TransactionEnd end, boolean commit, boolean api, boolean failedCommit) {
        if (end.plain() && api) {
            // a failed end (the driver's error for a failed transaction's commit, a serialization failure) ended the
            // transaction on the server too: the table lets go of it either way
            return after(connection.driverEnd(commit), v -> ended(),
                    error -> ended().thenCompose(v -> failure(error)));
        }
        CompletionStage<Void> sent = connection.send(end.text())
                .thenCompose(rows -> onTable(() -> end.succeeded(listing(rows), pooling.assumed(), null)));
        return after(sent, v -> api && failedCommit ? failure(connection.failedCommit()) : DONE,
                error -> failed(end, error));
    }

    /**
     * An end that carried the fence or the check failed: when the fence did (a session the owner's locks lived on is
     * gone), the application gets 08006 naming the keys, as a dead session's client gets an error; any other failure
     * is the end's own. Either way a transaction the failure left open is rolled back: a fence sent into a
     * transaction that had failed meanwhile (the application stopped reading a statement whose error aborted it,
     * before the server's status said so) fails with 25P02 and skips the end, and the connection must not stay in
     * that failed transaction, as it does not in autocommit on PostgreSQL.
     */
    private CompletionStage<Void> failed(TransactionEnd end, Throwable serverError) {
        Callable<SQLException> lost = () -> end.failed(connection.toSql(serverError), pooling.assumed());
        // the holder looks at its sessions at once when a fence failed: off the event loop
        return (end.fenced() ? onWorker(lost) : now(lost))
                .thenCompose(loss -> abandoned(loss != null ? loss : serverError));
    }

    /**
     * A transaction given up on (an end that failed, the loss of the owner's locks): what is open on the server
     * rolled back, errors dropped, the transaction over ({@link #ended}), then {@code error}.
     */
    public <T> CompletionStage<T> abandoned(Throwable error) {
        return rollbackQuietly().thenCompose(v -> ended()).thenCompose(v -> failure(error));
    }

    /**
     * The transaction is over (an end of ours, or a statement of the application that ended it on the server):
     * recorded calls cleared, its transaction-level locks in the table gone.
     */
    public CompletionStage<Void> ended() {
        return onTable(() -> session.transactionEnded(pooling.assumed()));
    }

    /**
     * {@code work} on the connection's transaction in the lock table: on the worker while the table keeps the
     * transaction (its locks are let go under the table's lock), else at once (it only forgets the venue).
     */
    public CompletionStage<Void> onTable(Runnable work) {
        Emulation emulation = session.emulation();
        Callable<Void> call = () -> {
            work.run();
            return null;
        };
        return emulation != null && emulation.transactionActive() ? onWorker(call) : now(call);
    }

    /** The driver's rollback when a transaction is open on the server; its errors dropped (a broken connection says so on its next use). */
    public CompletionStage<Void> rollbackQuietly() {
        if (connection.dropUnsentBegin() || !connection.serverInTransaction()) {
            return DONE;
        }
        return connection.driverEnd(false).handle((v, error) -> null);
    }

    /**
     * Before the driver's close: under session pooling or direct, the session's locks still held were never
     * unlocked (listed, released and reported); emulate lets go of the owner's locks (reported). A failed check is
     * reported, never the close's error.
     */
    public CompletionStage<Void> beforeClose() {
        CompletionStage<Void> check = DONE;
        // under transaction pooling every transaction end was checked instead; inside an open transaction session
        // locks cannot be told from transaction-level ones
        if (session.checkDueAtReturn() && !connection.inTransaction() && !pooling.assumed()) {
            check = connection.send(PgLocks.atReturn(true))
                    .thenAccept(rows -> session.checkedAtReturn(listing(rows),
                            "when the connection was closed (checked at the close)", null))
                    .handle((v, error) -> {
                        if (error != null) {
                            Throwable e = unwrapped(error);
                            session.reporter().checkFailed("at close", e instanceof Exception ? (Exception) e
                                    : new RuntimeException(e));
                        }
                        return null;
                    });
        }
        Emulation emulation = session.emulation();
        return emulation == null ? check : check.thenCompose(v -> onWorker(() -> {
            emulation.letGo(true);
            return null;
        }));
    }

    /**
     * Transaction pooling: known without asking, or asked of the server once (the announced pid against
     * {@link TransactionPooling#BACKEND_PID_QUERY}); a server that cannot be asked leaves "a pooler" for now.
     */
    public CompletionStage<Boolean> detectPooling() {
        Boolean known = pooling.known();
        if (known != null) {
            return CompletableFuture.completedFuture(known);
        }
        Integer announced = connection.announcedPid();
        if (announced == null) {
            return CompletableFuture.completedFuture(pooling.detected(null, 0));
        }
        return connection.query(TransactionPooling.BACKEND_PID_QUERY).handle((rows, error) -> {
            if (error != null) {
                return pooling.undetected(unwrapped(error));
            }
            Object pid = rows.isEmpty() ? null : rows.get(0).value(0);
            return pid == null ? pooling.undetected("no answer") : pooling.detected(announced, ((Number) pid).intValue());
        });
    }

    /**
     * The SKIP LOCKED trap's check of {@code sql} ({@link SkipLockedCheck}), after what it needs is read: the
     * connection's scope at its first such text, a table's unique keys at its first. Strict refuses (a
     * {@link SQLException}, nothing sent); a catalog that cannot be read leaves the statement unchecked, as JDBC's.
     */
    public CompletionStage<Void> skipLockedChecked(SkipLockedCheck check, String sql, Throwable callSite) {
        CompletionStage<Void> scope = check.knowsScope() ? DONE
                : connection.query(SkipLockedCheck.SCOPE_QUERY).thenAccept(rows -> {
                    if (!rows.isEmpty()) {
                        check.scopeRead((String) rows.get(0).value(0));
                    }
                }).handle((v, error) -> null); // a failed transaction: the statement fails itself
        return scope.thenCompose(v -> {
            String table = check.keysToRead(sql);
            if (table == null) {
                return DONE;
            }
            return connection.query(SkipLockedCheck.KEYS_QUERY, table).thenAccept(rows -> {
                List<String[]> keys = new ArrayList<>(rows.size());
                for (ReactiveConnection.Row row : rows) {
                    keys.add((String[]) row.value(0));
                }
                check.keysRead(table, keys);
            }).handle((x, error) -> {
                if (error != null) {
                    check.keysUnread(table, unwrapped(error));
                }
                return null;
            });
        }).thenCompose(v -> now(() -> {
            check.check(sql, callSite);
            return null;
        }));
    }

    /**
     * The connection's own {@code lock_timeout} and {@code statement_timeout} as its server shows them now (two SHOWs
     * in one simple query, {@link SessionBounds#QUERY}), read by an emulated wait when it begins: the
     * {@link SessionBounds.Source} of a reactive front end's {@link OwnerSession}. It blocks, for at most
     * {@code SESSION_BOUNDS_TIMEOUT}: the emulation runs it on the worker, never on an event loop. A transaction whose
     * BEGIN is still deferred has no SET LOCAL yet, so the session's values are the ones that apply.
     */
    public static SessionBounds sessionBounds(ReactiveConnection connection) throws SQLException {
        List<ReactiveConnection.Row> shown;
        try {
            shown = connection.query(SessionBounds.QUERY).toCompletableFuture()
                    .get(SESSION_BOUNDS_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw connection.toSql(unwrapped(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("LockHygiene: interrupted while reading the session's lock_timeout", "57014", e);
        } catch (TimeoutException e) {
            throw new SQLException("LockHygiene: the session's lock_timeout and statement_timeout were not shown within "
                    + SESSION_BOUNDS_TIMEOUT_SECONDS + " s", "57014", e);
        }
        if (shown.size() != 2) {
            throw new SQLException("LockHygiene: SHOW gave " + shown.size() + " rows for the session's lock_timeout and"
                    + " statement_timeout", "XX000");
        }
        return SessionBounds.of((String) shown.get(0).value(0), (String) shown.get(1).value(0));
    }

    /** How long reading the session's bounds may take (one round trip on an idle connection). */
    private static final long SESSION_BOUNDS_TIMEOUT_SECONDS = 30;

    /** The rows of a lock listing ({@link PgLocks#LIST_AND_RELEASE}) in a text's results; any other result's rows are not ours to read. */
    public static List<HeldLock> listing(List<ReactiveConnection.Row> rows) {
        List<HeldLock> held = new ArrayList<>();
        for (ReactiveConnection.Row row : rows) {
            List<String> columns = row.columns();
            if (columns.size() >= 5 && "classid".equalsIgnoreCase(columns.get(0))) {
                held.add(new HeldLock(number(row.value(0)), number(row.value(1)), (int) number(row.value(2)),
                        (String) row.value(3), (int) number(row.value(4))));
            }
        }
        return held;
    }

    private static long number(Object v) {
        return v == null ? 0 : ((Number) v).longValue();
    }

    /** The error a stage failed with, without the wrapper a dependent stage puts around it. */
    public static Throwable unwrapped(Throwable error) {
        Throwable e = error;
        while (e instanceof CompletionException && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** {@code stage}, then {@code next} with its value, or {@code recover} with its error (unwrapped). */
    private static <T, U> CompletionStage<U> after(CompletionStage<T> stage, Function<T, CompletionStage<U>> next,
                                                   Function<Throwable, CompletionStage<U>> recover) {
        return stage.handle((value, error) -> error == null ? next.apply(value) : recover.apply(unwrapped(error)))
                .thenCompose(Function.identity());
    }

    private static <T> CompletableFuture<T> failure(Throwable error) {
        return CompletableFuture.failedFuture(error);
    }

    private static <T> CompletionStage<T> now(Callable<T> work) {
        try {
            return CompletableFuture.completedFuture(work.call());
        } catch (Exception e) {
            return failure(e);
        }
    }

    private <T> CompletionStage<T> onWorker(Callable<T> work) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return work.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        }, connection.blocking());
    }
}
