package io.lockhygiene.internal.locktable;

import java.util.concurrent.atomic.AtomicLong;

/**
 * One transaction whose transaction-level holds are in the lock table (an application transaction, or the
 * implicit one of a single statement): compared by identity, numbered for messages only.
 */
public final class TransactionId {
    private static final AtomicLong NUMBERS = new AtomicLong();
    private final long number = NUMBERS.incrementAndGet();

    @Override
    public String toString() {
        return "tx" + number;
    }
}
