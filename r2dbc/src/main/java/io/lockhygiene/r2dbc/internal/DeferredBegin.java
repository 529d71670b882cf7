package io.lockhygiene.r2dbc.internal;

import java.util.function.BooleanSupplier;

import io.r2dbc.spi.Connection;
import io.r2dbc.spi.TransactionDefinition;
import reactor.core.publisher.Mono;

/**
 * emulate: the application begins a transaction. Its BEGIN is sent with the first statement that needs the
 * server ({@link #now}), not when it is asked for ({@link #later}): a transaction whose statements the lock
 * table answers (r2dbc-migrate retrying its try-lock inside a transaction while another migrator holds the
 * lock) then holds none of a transaction pooler's servers, which a BEGIN would pin for as long as it waits.
 * PostgreSQL takes a transaction's snapshot at its first statement, not at BEGIN, so nothing the transaction
 * reads changes; {@code now()} is the time of the BEGIN sent. One operation at a time, as the connection.
 */
final class DeferredBegin {
    private final Connection proxy;
    private final BooleanSupplier serverInTransaction;
    /** A BEGIN asked for and not sent yet, with the definition it was asked with (null: the default). */
    private boolean pending;
    private TransactionDefinition definition;

    DeferredBegin(Connection proxy, BooleanSupplier serverInTransaction) {
        this.proxy = proxy;
        this.serverInTransaction = serverInTransaction;
    }

    boolean pending() {
        return pending;
    }

    Mono<Void> later(TransactionDefinition asked) {
        return Mono.defer(() -> {
            if (pending || serverInTransaction.getAsBoolean()) {
                return Mono.empty(); // already open: as the driver, nothing to send
            }
            pending = true;
            definition = asked;
            return Mono.empty();
        });
    }

    /** The application's BEGIN, sent now when it is still pending (before a statement that needs the server). */
    Mono<Void> now() {
        return Mono.defer(() -> {
            if (!pending) {
                return Mono.empty();
            }
            pending = false;
            TransactionDefinition d = definition;
            definition = null;
            return Mono.from(d == null ? proxy.beginTransaction() : proxy.beginTransaction(d));
        });
    }

    /** True (once) when the application's transaction ends before its BEGIN was ever sent: nothing to send. */
    boolean endUnsent() {
        if (!pending) {
            return false;
        }
        pending = false;
        definition = null;
        return true;
    }
}
