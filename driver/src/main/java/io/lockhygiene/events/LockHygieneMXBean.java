package io.lockhygiene.events;

/** The counters, over JMX as {@code io.lockhygiene:type=LockHygiene}. */
public interface LockHygieneMXBean {
    long getStatementsSeen();

    long getStatementsFlagged();

    long getStatementsRewritten();

    long getStatementsRejected();

    long getStatementsEmulated();

    long getLeaksReleased();

    long getInheritedReleased();

    long getChecksFailed();

    long getSkipLockedFlagged();

    long getSkipLockedUnparseable();
}
