package io.lockhygiene.it.emulate;

import static io.lockhygiene.it.bed.Sql.bool;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 33: PostgreSQL releases a closed session's locks when it ends, so a closed connection's locks are
 * gone when {@code close()} returns: 8 threads, each taking a lock of its own, closing without unlocking,
 * and asking at once (another session, directly on PostgreSQL) whether the key is free. Under emulate the
 * release goes to the server before close() returns, also when another thread's round trip carries it
 * (the close waits for that round trip). Control: plain pgjdbc through the pooler leaves every one held.
 */
@ExtendWith(TestBedExtension.class)
class CloseReleasesTest {
    private static final int THREADS = 8;
    private static final int TRIES = 25;
    private final TestBed bed = TestBed.shared();

    /** How many closes returned while their key was still held elsewhere than in their own (closed) session. */
    private int stillHeldAfterClose(boolean emulate, long base) throws Exception {
        AtomicInteger held = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(THREADS);
        for (int t = 0; t < THREADS; t++) {
            long key = base + t;
            new Thread(() -> {
                try (Connection observer = bed.connect(Route.DIRECT); Statement o = observer.createStatement()) {
                    start.await();
                    for (int i = 0; i < TRIES; i++) {
                        Connection c = emulate ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")
                                : bed.connect(Route.TRANSACTION_POOL);
                        boolean got;
                        try (Statement s = c.createStatement()) {
                            got = bool(s, "SELECT pg_try_advisory_lock(" + key + ")"); // a leaked one may be in the way
                            s.execute("SELECT 1");
                        }
                        c.close(); // without unlocking: the lock ends with the session
                        if (!got || !bool(o, "SELECT pg_try_advisory_lock(" + key + ")")) {
                            held.incrementAndGet();
                        } else {
                            o.execute("SELECT pg_advisory_unlock(" + key + ")");
                        }
                    }
                    done.incrementAndGet();
                } catch (SQLException | InterruptedException e) {
                    errors.add(e.toString());
                } finally {
                    ended.countDown();
                }
            }, "closer-" + t).start();
        }
        start.countDown();
        assertTrue(ended.await(120, TimeUnit.SECONDS), "every thread ended");
        assertEquals(List.of(), errors);
        assertEquals(THREADS, done.get(), "every thread went through its tries");
        return held.get();
    }

    @Test
    void aClosedConnectionsLocksAreGoneWhenCloseReturns() throws Exception {
        int plain = stillHeldAfterClose(false, 933_200);
        for (int t = 0; t < THREADS; t++) {
            bed.admin().terminateHoldersOf(933_200 + t);
        }
        int guarded = stillHeldAfterClose(true, 933_300);
        System.out.println("[close releases] " + THREADS + " threads x " + TRIES + " closes without unlocking, key still"
                + " held when close() returned: plain pgjdbc through the pooler " + plain + ", emulate " + guarded);
        assertTrue(plain > 0, "control: the pooled server keeps the lock after the client's close");
        assertEquals(0, guarded);
    }
}
