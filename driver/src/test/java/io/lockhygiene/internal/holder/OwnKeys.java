package io.lockhygiene.internal.holder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.internal.holder.EmulatedWait.Limits;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.LockOwner;

/** The holder tests' workers that each take a key of their own, all at once. */
final class OwnKeys {
    private OwnKeys() {
    }

    /**
     * Owner {@code i} takes key {@code firstKey + i} on a thread of its own, the threads released together; returns
     * how many were granted (a thread that failed or did not finish in 10 s counts as not granted).
     */
    static int acquireAtOnce(Holder h, List<LockOwner> owners, long firstKey, boolean tryLock) throws InterruptedException {
        CyclicBarrier start = new CyclicBarrier(owners.size());
        AtomicInteger granted = new AtomicInteger();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < owners.size(); i++) {
            AdvisoryKey key = AdvisoryKey.bigint(firstKey + i);
            LockOwner o = owners.get(i);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    if (h.acquire(o, key, false, tryLock, null, 0, Limits.none())) {
                        granted.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            all.add(t);
            t.start();
        }
        for (Thread t : all) {
            t.join(10_000);
        }
        return granted.get();
    }
}
