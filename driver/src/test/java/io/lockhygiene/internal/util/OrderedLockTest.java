package io.lockhygiene.internal.util;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The run-time check of the lock order: it is on in tests, and it catches an inversion before it can deadlock. */
class OrderedLockTest {
    @Test
    void theCheckIsOnWhereAssertionsAre() {
        assertTrue(OrderedLock.checking(), "Surefire runs with -ea, so every test run checks the lock order");
    }

    @Test
    void outermostFirstIsFine() {
        OrderedLock session = new OrderedLock(LockOrder.HOLDER_MAIN_SESSION);
        OrderedLock table = new OrderedLock(LockOrder.LOCK_TABLE);
        assertDoesNotThrow(() -> {
            session.lock();
            try {
                table.lock();
                table.lock(); // a reentry
                table.unlock();
                table.unlock();
            } finally {
                session.unlock();
            }
        });
    }

    @Test
    void anInversionFailsAtOnceNamingBothLocks() {
        OrderedLock session = new OrderedLock(LockOrder.HOLDER_MAIN_SESSION);
        OrderedLock table = new OrderedLock(LockOrder.LOCK_TABLE);
        table.lock();
        try {
            AssertionError e = assertThrows(AssertionError.class, session::lock);
            assertTrue(e.getMessage().contains("HOLDER_MAIN_SESSION waited for while holding LOCK_TABLE"), e.getMessage());
            assertThrows(AssertionError.class, () -> session.tryLock(1, TimeUnit.MILLISECONDS), "a bounded wait too");
            assertTrue(session.tryLock(), "a try that cannot wait is never refused");
            session.unlock();
        } finally {
            table.unlock();
        }
        assertDoesNotThrow(() -> {
            session.lock(); // released: the order holds again
            session.unlock();
        });
    }

    @Test
    void twoOfOnePlaceMayNotNest() {
        OrderedLock one = new OrderedLock(LockOrder.HOLDER_MAIN_SESSION);
        OrderedLock other = new OrderedLock(LockOrder.HOLDER_MAIN_SESSION);
        one.lock();
        try {
            assertThrows(AssertionError.class, other::lock);
        } finally {
            one.unlock();
        }
    }

    @Test
    void nothingIsWaitedForUnderALeaf() {
        OrderedLock cache = new OrderedLock(LockOrder.KEY_CACHE);
        OrderedLock report = new OrderedLock(LockOrder.PROCESS_REPORT);
        cache.lock();
        try {
            AssertionError e = assertThrows(AssertionError.class, report::lock);
            assertTrue(e.getMessage().contains("a leaf"), e.getMessage());
        } finally {
            cache.unlock();
        }
    }
}
