package io.lockhygiene.internal.jdbc;

import io.lockhygiene.internal.policy.Situation;

/**
 * emulate: where one connection's open transaction runs its advisory calls, fixed by its first one.
 * A transaction whose venue is the shared holder is counted there, so the holder stays pinned until it
 * ends (see {@link SharedHolder#venueStarted}); after close nothing is counted any more (a statement
 * racing the close).
 */
final class TransactionVenue {
    private final SharedHolder shared;
    /** Null before the transaction's first advisory call. */
    private Situation.Venue venue;
    private boolean counted;
    private boolean closed;

    TransactionVenue(SharedHolder shared) {
        this.shared = shared;
    }

    Situation.Venue get() {
        return venue;
    }

    boolean decided() {
        return venue != null;
    }

    boolean isHolder() {
        return venue == Situation.Venue.HOLDER;
    }

    /** The transaction's first advisory call runs on the holder, or on the application's server. */
    void note(boolean onHolder) {
        venue = onHolder ? Situation.Venue.HOLDER : Situation.Venue.APPLICATION;
        if (onHolder) {
            count();
        }
    }

    private synchronized void count() {
        if (!counted && !closed) {
            counted = true;
            shared.venueStarted();
        }
    }

    /** The venue is forgotten (the transaction's end, a loss, a close). */
    void gone() {
        venue = null;
        uncount();
    }

    private synchronized void uncount() {
        if (counted) {
            counted = false;
            shared.venueEnded();
        }
    }

    /** Marks the connection closed; true the first time. */
    synchronized boolean close() {
        boolean first = !closed;
        closed = true;
        return first;
    }
}
