package io.lockhygiene.internal.leak;

import java.util.List;

import io.lockhygiene.internal.leak.RecentCalls.LockCall;

/**
 * Which call, if any, took a lock found at a leak check. A call with literal keys matches exactly; a
 * call with expression or parameter keys is the likely taker when nothing matches exactly; with no
 * lock call seen at all the lock was inherited from another client of the same server (or taken by a
 * function or DO block the scanner cannot see into).
 */
public final class Attribution {

    private Attribution() {
    }

    /** The call that took {@code lock}, or null when it was inherited. */
    public static LockCall takerOf(HeldLock lock, List<LockCall> calls) {
        LockCall candidate = null;
        for (int i = calls.size() - 1; i >= 0; i--) {
            LockCall c = calls.get(i);
            if (!c.function().isAcquire() || c.function().isShared() != lock.isShared()) {
                continue;
            }
            String args = c.argumentText();
            if (LockCall.isLiteral(args)) {
                if (lock.matchesLiteralArguments(args)) {
                    return c;
                }
            } else if (candidate == null && args.split(",", -1).length == (lock.isBigintKey() ? 1 : 2)) {
                candidate = c;
            }
        }
        return candidate;
    }
}
