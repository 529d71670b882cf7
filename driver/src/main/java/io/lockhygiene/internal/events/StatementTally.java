package io.lockhygiene.internal.events;

/**
 * One connection's count of statements seen: a plain field, because a JDBC connection is used by one thread
 * at a time and an atomic increment (even LongAdder's) cost about 15 ns of the hot path's budget of 20.
 * {@link Counters} sums the open connections' tallies when asked (a reading from another thread may lag by
 * a statement or two) and folds a tally into its total when the connection closes.
 */
public final class StatementTally {
    long count;

    StatementTally() {
    }

    /** Hot path: no atomic, no allocation. */
    public void seen() {
        count++;
    }
}
