package io.lockhygiene.r2dbc.internal;

import java.util.concurrent.Callable;
import java.util.concurrent.Executor;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where the core's blocking work runs for a reactive caller: the lock holder's decisions and waits, its
 * placement and its releases are JDBC round trips (pgjdbc sessions of its own) and may wait for a lock. They
 * run on Reactor's bounded elastic scheduler, made for blocking work, never on the thread that subscribed
 * (often a Netty event loop's). {@link #call} also refuses outright to run on a thread Reactor marks as
 * non-blocking, so a mistake of ours fails loudly instead of stalling an event loop.
 */
final class Blocking {
    private static final Scheduler SCHEDULER = Schedulers.boundedElastic();
    /** The same scheduler as an executor, for the core's stages ({@link io.lockhygiene.internal.session.ReactiveSession}). */
    static final Executor EXECUTOR = task -> SCHEDULER.schedule(task);

    private Blocking() {
    }

    /** {@code work} on the bounded elastic scheduler; its value, or its error, downstream. */
    static <T> Mono<T> call(Callable<T> work) {
        return Mono.fromCallable(() -> {
            assertMayBlock();
            return work.call();
        }).subscribeOn(SCHEDULER);
    }

    /** {@code work} on the bounded elastic scheduler, for its effect. */
    static Mono<Void> run(ThrowingRunnable work) {
        return call(() -> {
            work.run();
            return Boolean.TRUE;
        }).then();
    }

    /** Fails on a thread Reactor marks as non-blocking (an event loop, a parallel worker). */
    static void assertMayBlock() {
        if (Schedulers.isInNonBlockingThread()) {
            throw new IllegalStateException("LockHygiene: blocking work on the non-blocking thread "
                    + Thread.currentThread().getName() + " (a bug of LockHygiene's: please report it)");
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
