package io.lockhygiene.internal.events;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.lockhygiene.events.EventType;
import io.lockhygiene.LockHygieneMXBean;

/**
 * Process-wide counters; LongAdder so that increments never contend. Statements seen, the one per-statement
 * count, are tallied per connection ({@link StatementTally}) and summed here when read.
 */
public final class Counters implements LockHygieneMXBean {
    /** Statements of closed connections. */
    final LongAdder statementsSeen = new LongAdder();
    /** Tallies of open connections (a connection never closed stays here: a few bytes). */
    private final Set<StatementTally> openTallies = ConcurrentHashMap.newKeySet();
    final LongAdder flagged = new LongAdder();
    final LongAdder rewritten = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder emulated = new LongAdder();
    final LongAdder leaksReleased = new LongAdder();
    final LongAdder inheritedReleased = new LongAdder();
    final LongAdder checksFailed = new LongAdder();
    final LongAdder skipLockedFlagged = new LongAdder();
    final LongAdder skipLockedUnparseable = new LongAdder();

    Counters() {
    }

    /** A new connection's tally, counted from now on. */
    public StatementTally openTally() {
        StatementTally t = new StatementTally();
        openTallies.add(t);
        return t;
    }

    /** The connection closed: its statements join the total (once, however often it is called). */
    public void closeTally(StatementTally t) {
        if (openTallies.remove(t)) {
            statementsSeen.add(t.count);
        }
    }

    @Override
    public long getStatementsSeen() {
        long sum = statementsSeen.sum();
        for (StatementTally t : openTallies) {
            sum += t.count;
        }
        return sum;
    }

    @Override
    public long getStatementsFlagged() {
        return flagged.sum();
    }

    @Override
    public long getStatementsRewritten() {
        return rewritten.sum();
    }

    @Override
    public long getStatementsRejected() {
        return rejected.sum();
    }

    @Override
    public long getStatementsEmulated() {
        return emulated.sum();
    }

    @Override
    public long getLeaksReleased() {
        return leaksReleased.sum();
    }

    @Override
    public long getInheritedReleased() {
        return inheritedReleased.sum();
    }

    @Override
    public long getSkipLockedFlagged() {
        return skipLockedFlagged.sum();
    }

    @Override
    public long getSkipLockedUnparseable() {
        return skipLockedUnparseable.sum();
    }

    /** A SKIP LOCKED statement JSqlParser could not read (passed through). */
    public void skipLockedUnparseable() {
        skipLockedUnparseable.increment();
    }

    @Override
    public long getChecksFailed() {
        return checksFailed.sum();
    }

    void count(EventType type) {
        switch (type) {
            case SESSION_LOCK_CALL:
                flagged.increment();
                break;
            case REWRITTEN:
                flagged.increment();
                rewritten.increment();
                break;
            case EMULATED:
                flagged.increment();
                emulated.increment();
                break;
            case REJECTED:
                flagged.increment();
                rejected.increment();
                break;
            case LEAK_RELEASED:
                leaksReleased.increment();
                break;
            case INHERITED_RELEASED:
                inheritedReleased.increment();
                break;
            case SKIP_LOCKED_SINGLE_KEY:
                skipLockedFlagged.increment();
                break;
            default:
                checksFailed.increment();
        }
    }

    @Override
    public String toString() {
        return "statementsSeen=" + getStatementsSeen() + ", flagged=" + getStatementsFlagged() + ", rewritten="
                + getStatementsRewritten() + ", rejected=" + getStatementsRejected() + ", emulated=" + getStatementsEmulated() + ", leaksReleased="
                + getLeaksReleased() + ", inheritedReleased=" + getInheritedReleased() + ", checksFailed="
                + getChecksFailed() + ", skipLockedFlagged=" + getSkipLockedFlagged();
    }
}
