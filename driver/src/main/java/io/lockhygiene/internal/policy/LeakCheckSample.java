package io.lockhygiene.internal.policy;

import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Which transaction ends a sampled leak check takes ({@code lockhygiene.leakCheckSample}): one in 1/rate on
 * average, with the gaps between samples drawn at random (geometric, mean 1/rate) so that no rhythm of the
 * workload (every tenth statement is the same job) can line up with them. A leaked session lock stays on its
 * backend, so any later check there finds it: the sample only has to come by often enough. One per connection
 * and kind of end, used by one thread at a time; {@link #next()} is a decrement on the hot path.
 */
public final class LeakCheckSample {
    private final double rate;
    /** null: ThreadLocalRandom (no class of ours to load for it at a first connection) */
    private final DoubleSupplier uniform;
    private long countdown;

    /** @param uniform values in [0, 1) (tests pass a fixed sequence); null for ThreadLocalRandom's */
    LeakCheckSample(double rate, DoubleSupplier uniform) {
        if (!(rate > 0 && rate <= 1)) {
            throw new IllegalArgumentException("a sample rate is in (0, 1], not " + rate);
        }
        this.rate = rate;
        this.uniform = uniform;
        this.countdown = gap(); // connections start at different places of their sequences
    }

    /** The sample for these settings, or null when no end is ever sampled (the hot path then tests one field). */
    public static LeakCheckSample of(io.lockhygiene.settings.Settings settings) {
        double rate = settings.leakCheckSample();
        if (rate <= 0 || LockPolicy.off(settings) || settings.leakCheck() != io.lockhygiene.settings.Settings.LeakCheck.TRACKED) {
            return null;
        }
        return new LeakCheckSample(rate, null);
    }

    /** Counts one end; true when this one is sampled (then the next gap is drawn). */
    public boolean next() {
        if (--countdown > 0) {
            return false;
        }
        countdown = gap();
        return true;
    }

    /** 1 + a geometric count of misses: P(gap = k) = (1 - rate)^(k-1) * rate, mean 1/rate. */
    long gap() {
        if (rate >= 1) {
            return 1;
        }
        double u = 1 - (uniform == null ? ThreadLocalRandom.current().nextDouble() : uniform.getAsDouble()); // (0, 1]
        double misses = Math.floor(Math.log(u) / Math.log1p(-rate));
        return 1 + (misses > 1e12 ? (long) 1e12 : (long) misses);
    }
}
