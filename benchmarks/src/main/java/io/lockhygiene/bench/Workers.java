package io.lockhygiene.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;


/** The workers' loops of the throughput benchmarks: threads started together, jobs counted, per second. */
final class Workers {

    /** One worker's loop: {@code worker} its number, {@code start} to await before timing, {@code done} to count jobs. */
    @FunctionalInterface
    interface Worker {
        void run(int worker, CountDownLatch start, AtomicInteger done)
                throws Exception;
    }

    /** Jobs per second of {@code workers} threads running {@code body}, timed from their common start. */
    static double perSecond(int workers, Worker body) throws Exception {
        AtomicInteger done = new AtomicInteger();
        long nanos = run(workers, done, body);
        return done.get() * 1e9 / nanos;
    }

    /**
     * Runs {@code workers} threads of {@code body} counting into {@code done}; returns the nanoseconds from their
     * common start to the last one's end. A worker that failed is thrown here once all have ended (a worker that
     * died would only lower the figure).
     */
    static long run(int workers, AtomicInteger done, Worker body) throws Exception {
        List<Thread> threads = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Exception> failure = new AtomicReference<>();
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Thread t = new Thread(() -> {
                try {
                    body.run(worker, start, done);
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                }
            }, "worker-" + w);
            threads.add(t);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        long took = System.nanoTime() - t0;
        if (failure.get() != null) {
            throw failure.get();
        }
        return took;
    }

    private Workers() {
    }
}
