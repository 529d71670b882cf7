package io.lockhygiene.r2dbc.internal;

import java.util.function.Supplier;

import org.reactivestreams.Publisher;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An end of ours that runs on its own ({@link #until}: subscribed here, cached, so that no cancel stops it half
 * way): until it completes, every operation of the connection that goes through {@link #after} waits for it,
 * so nothing decides from a transaction status about to change.
 */
final class PendingEnd {
    /** The end still on its way; null when none. */
    private volatile Mono<Void> pending;

    void until(Mono<Void> end) {
        Mono<Void> gate = end.onErrorResume(e -> Mono.empty()).doFinally(s -> pending = null).cache();
        pending = gate;
        gate.subscribe();
    }

    boolean pending() {
        return pending != null;
    }

    /** {@code operation}, subscribed once no end of ours is still on its way (asked at subscription). */
    <T> Mono<T> after(Publisher<T> operation) {
        return Mono.defer(() -> {
            Mono<Void> p = pending;
            return p == null ? Mono.from(operation) : p.then(Mono.from(operation));
        });
    }

    /** The same for an operation with many results. */
    <T> Flux<T> afterMany(Publisher<T> operation) {
        return Flux.defer(() -> {
            Mono<Void> p = pending;
            return p == null ? Flux.from(operation) : p.thenMany(operation);
        });
    }

    /**
     * The same for an operation made when it is subscribed ({@code operation} asked then, after the end when one is
     * on its way): one deferred subscription, not two, for a statement's execution (the hot path under emulate).
     */
    <T> Flux<T> afterMany(Supplier<? extends Publisher<T>> operation) {
        return Flux.defer(() -> {
            Mono<Void> p = pending;
            return p == null ? Flux.from(operation.get()) : p.thenMany(Flux.defer(operation));
        });
    }
}
