package io.lockhygiene.internal.holder;

import java.util.concurrent.atomic.LongAdder;

/**
 * Where a holder's main session spends its time, counted per round trip (never per statement of the
 * application): the benchmarks' profile of the holder (BENCHMARKS.md) and the diagnosis of a slow emulate.
 */
public final class HolderStats {
    private final LongAdder roundTrips = new LongAdder();
    private final LongAdder takes = new LongAdder();
    private final LongAdder releases = new LongAdder();
    private final LongAdder requests = new LongAdder();
    private final LongAdder carriedByOthers = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();
    private final LongAdder roundTripNanos = new LongAdder();

    /** A counted moment: what was seen so far. */
    public static final class Snapshot {
        /** Batches sent on the main session. */
        public final long roundTrips;
        /** Takes (and probes) those batches carried. */
        public final long takes;
        /** Releases of server locks those batches carried. */
        public final long releases;
        /** Threads that needed the main session (a take, or releases to wait for). */
        public final long requests;
        /** Of those, served by another thread's round trip. */
        public final long carriedByOthers;
        /** Time those threads waited for their turn or for their answer, in total. */
        public final long waitNanos;
        /** Time the batches took on the wire, in total. */
        public final long roundTripNanos;

        Snapshot(HolderStats s) {
            roundTrips = s.roundTrips.sum();
            takes = s.takes.sum();
            releases = s.releases.sum();
            requests = s.requests.sum();
            carriedByOthers = s.carriedByOthers.sum();
            waitNanos = s.waitNanos.sum();
            roundTripNanos = s.roundTripNanos.sum();
        }

        /** Requests carried per round trip. */
        public double batchSize() {
            return roundTrips == 0 ? 0 : (takes + releases) / (double) roundTrips;
        }

        @Override
        public String toString() {
            return String.format(java.util.Locale.ROOT, "%d round trips (%.2f takes and releases each, %.0f us each),"
                    + " %d requests (%d carried by another thread's round trip, %.0f us waited each)", roundTrips,
                    batchSize(), roundTrips == 0 ? 0.0 : roundTripNanos / 1e3 / roundTrips, requests, carriedByOthers,
                    requests == 0 ? 0.0 : waitNanos / 1e3 / requests);
        }
    }

    public Snapshot snapshot() {
        return new Snapshot(this);
    }

    void sent(int takeCount, int releaseCount, long nanos) {
        roundTrips.increment();
        takes.add(takeCount);
        releases.add(releaseCount);
        roundTripNanos.add(nanos);
    }

    void requested(boolean carried, long waitedNanos) {
        requests.increment();
        if (carried) {
            carriedByOthers.increment();
        }
        waitNanos.add(waitedNanos);
    }
}
