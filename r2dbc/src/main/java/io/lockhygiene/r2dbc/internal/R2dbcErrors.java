package io.lockhygiene.r2dbc.internal;

import java.sql.SQLException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import io.lockhygiene.internal.session.ReactiveSession;

import io.r2dbc.spi.R2dbcBadGrammarException;
import io.r2dbc.spi.R2dbcDataIntegrityViolationException;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import io.r2dbc.spi.R2dbcPermissionDeniedException;
import io.r2dbc.spi.R2dbcRollbackException;
import io.r2dbc.spi.R2dbcTransientResourceException;
import reactor.core.publisher.Mono;

/**
 * What the core says as a {@link SQLException} (its SQLState, PostgreSQL's words first), as the R2DBC exception
 * r2dbc-postgresql raises for the same SQLState, so that an application's error handling treats ours as the
 * server's: a deadlock is transient, a lost lock a resource failure, a refusal a non-transient one.
 */
final class R2dbcErrors {
    private R2dbcErrors() {
    }

    static R2dbcException of(SQLException e) {
        String state = e.getSQLState() == null ? "99000" : e.getSQLState();
        String message = e.getMessage();
        int code = e.getErrorCode();
        switch (state) {
            case "42501":
                return new R2dbcPermissionDeniedException(message, state, code, e);
            case "40000":
            case "40001":
                return new R2dbcRollbackException(message, state, code, e);
            default:
                break;
        }
        switch (state.substring(0, 2)) {
            case "03":
            case "42":
            case "22":
            case "26":
                return new R2dbcBadGrammarException(message, state, code, e);
            case "21":
            case "23":
            case "27":
                return new R2dbcDataIntegrityViolationException(message, state, code, e);
            case "28":
                return new R2dbcPermissionDeniedException(message, state, code, e);
            case "40":
                return new R2dbcTransientResourceException(message, state, code, e);
            default:
                return new R2dbcNonTransientResourceException(message, state, code, e);
        }
    }

    /** The SQLState of an R2DBC error, or null. */
    static String state(Throwable t) {
        return t instanceof R2dbcException ? ((R2dbcException) t).getSqlState() : null;
    }

    /** The error as the core reads a server's error: SQLState and message kept. */
    static SQLException toSql(Throwable t) {
        if (t instanceof SQLException) {
            return (SQLException) t;
        }
        return new SQLException(t.getMessage(), state(t), t);
    }

    /**
     * A stage of the core's ({@link ReactiveSession}), asked for at subscription, as a Mono: the core's own failure
     * (a {@link SQLException}: the loss, a refusal) in R2DBC's words, the driver's error unchanged.
     */
    static <T> Mono<T> fromCore(Supplier<? extends CompletionStage<? extends T>> stage) {
        return Mono.<T>fromCompletionStage(stage).onErrorMap(e -> {
            Throwable cause = ReactiveSession.unwrapped(e);
            return cause instanceof SQLException ? of((SQLException) cause) : cause;
        });
    }
}
