package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import io.lockhygiene.internal.session.ReactiveConnection;
import io.r2dbc.spi.ColumnMetadata;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.R2dbcRollbackException;
import io.r2dbc.spi.RowMetadata;
import io.r2dbc.spi.Statement;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One R2DBC connection as the core's port ({@link ReactiveConnection}): where its transaction stands, as the server
 * reported it (r2dbc-postgresql's last ReadyForQuery, read through {@link PostgresClient}) and with the application's
 * deferred BEGIN ({@link DeferredBegin}), and how the core's statements of its own are sent (its ends through
 * r2dbc-proxy's connection, as the application's are; its catalog and pid queries on the driver's own). The core's
 * {@link io.lockhygiene.internal.session.ReactiveSession} sequences them; the guard reads the status here too.
 */
final class DriverConnection implements ReactiveConnection {
    /** The driver's own connection: its transaction status and BackendKeyData, and the core's queries. */
    private final Connection raw;
    /** r2dbc-proxy's connection over it: what the application sends, and the core's ends, go through it. */
    private final Connection proxy;
    /** emulate: the application's BEGIN, sent with its first statement that needs the server. */
    final DeferredBegin begin;
    /** r2dbc-postgresql's client under {@link #raw}: the transaction status the server reported. */
    private PostgresClient client;

    DriverConnection(Connection raw, Connection proxy) {
        this.raw = raw;
        this.proxy = proxy;
        this.begin = new DeferredBegin(proxy, this::serverInTransaction);
    }

    /**
     * True when the application's transaction is open: on the server (r2dbc-postgresql: autocommit is "the server
     * is idle"), or begun here and not sent yet.
     */
    @Override
    public boolean inTransaction() {
        return begin.pending() || !raw.isAutoCommit();
    }

    /** True when the server has a transaction open. */
    @Override
    public boolean serverInTransaction() {
        return !raw.isAutoCommit();
    }

    /** True when the server reported the open transaction failed (every statement until its end gets 25P02). */
    @Override
    public boolean serverTransactionFailed() {
        if (raw.isAutoCommit()) {
            return false;
        }
        return client().transactionFailed();
    }

    /** {@inheritDoc} Through r2dbc-proxy's connection, whose listeners see the application's statements. */
    @Override
    public CompletionStage<List<Row>> send(String text) {
        return rows(proxy.createStatement(text));
    }

    /** {@inheritDoc} On the driver's own connection, unseen by r2dbc-proxy's listeners. */
    @Override
    public CompletionStage<List<Row>> query(String sql, Object... parameters) {
        Statement s = raw.createStatement(sql);
        for (int i = 0; i < parameters.length; i++) {
            s.bind("$" + (i + 1), parameters[i]);
        }
        return rows(s);
    }

    private static CompletionStage<List<Row>> rows(Statement s) {
        return Flux.from(s.execute()).concatMap(r -> r.map(DriverConnection::row)).collectList().toFuture();
    }

    /** One row as the core reads it ({@link ReactiveConnection.Row}): names and values read without a type. */
    static Row row(io.r2dbc.spi.Row row, RowMetadata meta) {
        List<? extends ColumnMetadata> columns = meta.getColumnMetadatas();
        List<String> names = new ArrayList<>(columns.size());
        Object[] values = new Object[columns.size()];
        for (int i = 0; i < values.length; i++) {
            names.add(columns.get(i).getName());
            values[i] = row.get(i);
        }
        return new Row(names, values);
    }

    @Override
    public CompletionStage<Void> driverEnd(boolean commit) {
        return Mono.from(commit ? proxy.commitTransaction() : proxy.rollbackTransaction()).toFuture();
    }

    @Override
    public boolean dropUnsentBegin() {
        return begin.endUnsent();
    }

    /** {@inheritDoc} r2dbc-postgresql's, read by {@link PostgresClient}. */
    @Override
    public Integer announcedPid() {
        return client().processId();
    }

    @Override
    public Executor blocking() {
        return Blocking.EXECUTOR;
    }

    /** {@inheritDoc} r2dbc-postgresql's words (and SQLState) for the commit of a transaction that had failed. */
    @Override
    public Throwable failedCommit() {
        return new R2dbcRollbackException("The database returned ROLLBACK, so the transaction cannot be committed."
                + " Transaction failure is not known (check server logs?)", "99999");
    }

    @Override
    public SQLException toSql(Throwable driverError) {
        return R2dbcErrors.toSql(driverError);
    }

    /** r2dbc-postgresql's client under {@link #raw}, read once. */
    private PostgresClient client() {
        if (client == null) {
            client = PostgresClient.of(raw);
        }
        return client;
    }
}
