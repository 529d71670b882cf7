package io.lockhygiene.r2dbc.internal;

import java.time.Duration;

import io.lockhygiene.internal.sql.TransactionControl;
import io.r2dbc.spi.Batch;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionMetadata;
import io.r2dbc.spi.IsolationLevel;
import io.r2dbc.spi.Statement;
import io.r2dbc.spi.TransactionDefinition;
import io.r2dbc.spi.ValidationDepth;
import io.r2dbc.spi.Wrapped;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * The application's R2DBC connection: r2dbc-proxy's connection (its listeners see every statement, ours
 * included), with the calls LockHygiene must carry out itself routed to the connection's guard: statements,
 * batches, transaction ends, savepoints (emulate follows them) and close. Everything else is the driver's.
 */
final class GuardedConnection implements Connection, Wrapped<Connection> {
    private final Connection proxy;
    private final R2dbcGuard guard;

    GuardedConnection(Connection proxy, R2dbcGuard guard) {
        this.proxy = proxy;
        this.guard = guard;
    }

    @Override
    public Statement createStatement(String sql) {
        return guard.createStatement(sql);
    }

    @Override
    public Batch createBatch() {
        return new GuardedBatch(guard, proxy.createBatch());
    }

    @Override
    public Publisher<Void> commitTransaction() {
        return guard.gate.after(guard.ends.commit());
    }

    @Override
    public Publisher<Void> rollbackTransaction() {
        return guard.gate.after(guard.ends.rollback());
    }

    @Override
    public Publisher<Void> close() {
        return guard.gate.after(guard.ends.close());
    }

    @Override
    public Publisher<Void> createSavepoint(String name) {
        return guard.gate.after(followed(proxy.createSavepoint(name), TransactionControl.Kind.SAVEPOINT, name));
    }

    @Override
    public Publisher<Void> releaseSavepoint(String name) {
        return guard.gate.after(followed(proxy.releaseSavepoint(name), TransactionControl.Kind.RELEASE, name));
    }

    @Override
    public Publisher<Void> rollbackTransactionToSavepoint(String name) {
        return guard.gate.after(followed(proxy.rollbackTransactionToSavepoint(name), TransactionControl.Kind.ROLLBACK_TO,
                name));
    }

    /** emulate: the lock table follows the savepoint once the server did it. */
    private Publisher<Void> followed(Publisher<Void> done, TransactionControl.Kind kind, String name) {
        if (guard.emulation == null) {
            return done;
        }
        return guard.begin.now().then(Mono.from(done)).then(Mono.defer(() -> guard.emulation.transactionActive()
                ? Blocking.run(() -> guard.emulation.followSavepoint(kind, "text:" + name)) : Mono.empty()));
    }

    /** emulate: the BEGIN waits for the first statement that needs the server (see {@link DeferredBegin}). */
    @Override
    public Publisher<Void> beginTransaction() {
        return guard.gate.after(guard.emulation != null ? guard.begin.later(null) : Mono.from(proxy.beginTransaction()));
    }

    @Override
    public Publisher<Void> beginTransaction(TransactionDefinition definition) {
        return guard.gate.after(guard.emulation != null ? guard.begin.later(definition)
                : Mono.from(proxy.beginTransaction(definition)));
    }

    @Override
    public boolean isAutoCommit() {
        return !guard.driver.inTransaction() || guard.transactionOfOurs; // a transaction of ours is not the application's
    }

    @Override
    public ConnectionMetadata getMetadata() {
        return proxy.getMetadata();
    }

    @Override
    public IsolationLevel getTransactionIsolationLevel() {
        return proxy.getTransactionIsolationLevel();
    }

    /**
     * r2dbc-postgresql's autocommit is the transaction status: off sends BEGIN, on sends COMMIT. Both go the
     * guard's ways here, so a commit is checked and fenced as {@link #commitTransaction} is.
     */
    @Override
    public Publisher<Void> setAutoCommit(boolean autoCommit) {
        return guard.gate.after(Mono.defer(() -> {
            if (!autoCommit) {
                return guard.emulation != null ? guard.begin.later(null) : Mono.from(proxy.setAutoCommit(false));
            }
            return guard.driver.inTransaction() ? guard.ends.commit().then(Mono.from(proxy.setAutoCommit(true)))
                    : Mono.from(proxy.setAutoCommit(true));
        }));
    }

    /**
     * r2dbc-postgresql sends a SET: inside the application's transaction it goes after that transaction's BEGIN,
     * deferred or not, as without LockHygiene (sent before it, through a transaction pooler it would land on another
     * server, and the transaction's waits would read another server's bound).
     */
    @Override
    public Publisher<Void> setLockWaitTimeout(Duration timeout) {
        return guard.gate.after(guard.begin.now().then(Mono.from(proxy.setLockWaitTimeout(timeout))));
    }

    @Override
    public Publisher<Void> setStatementTimeout(Duration timeout) {
        return guard.gate.after(guard.begin.now().then(Mono.from(proxy.setStatementTimeout(timeout))));
    }

    @Override
    public Publisher<Void> setTransactionIsolationLevel(IsolationLevel level) {
        return guard.gate.after(guard.begin.now().then(Mono.from(proxy.setTransactionIsolationLevel(level))));
    }

    @Override
    public Publisher<Boolean> validate(ValidationDepth depth) {
        return guard.gate.after(proxy.validate(depth));
    }

    @Override
    public Connection unwrap() {
        return proxy;
    }

    @Override
    public String toString() {
        return "LockHygiene " + guard.session.id() + " over " + proxy;
    }
}
