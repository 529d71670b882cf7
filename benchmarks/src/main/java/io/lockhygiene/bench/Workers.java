package io.lockhygiene.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;


/** The workers' loops of the throughput benchmarks: threads started together, jobs counted, per second. */
final class Workers {

    /** One worker's loop: {@code worker} its number, {@code start} to await before timing, {@code done} to count jobs. */
    @FunctionalInterface
    interface Worker {
        void run(int worker, CountDownLatch start, AtomicInteger done)
                throws Exception;
    }

    /** Jobs per second of {@code workers} threads running {@code body}, timed from their common start. */
    static double perSecond(int workers, Worker body) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        AtomicInteger done = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        for (int w = 0; w < workers; w++) {
            int worker = w;
            Thread t = new Thread(() -> {
                try {
                    body.run(worker, start, done);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            threads.add(t);
            t.start();
        }
        long t0 = System.nanoTime();
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        return done.get() * 1e9 / (System.nanoTime() - t0);
    }

    private Workers() {
    }
}
