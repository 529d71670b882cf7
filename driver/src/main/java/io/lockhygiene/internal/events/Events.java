package io.lockhygiene.internal.events;

import java.lang.management.ManagementFactory;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.lockhygiene.events.LockHygieneMXBean;
import io.lockhygiene.events.EventType;
import io.lockhygiene.events.LockHygieneEvent;
import io.lockhygiene.events.LockHygieneListener;
import io.lockhygiene.internal.log.Log;


/** The process-wide event hub: counters, listeners and the JMX registration. */
public final class Events {
    public static final String MBEAN_NAME = "io.lockhygiene:type=LockHygiene";
    private static final Counters COUNTERS = new Counters();
    private static final CopyOnWriteArrayList<LockHygieneListener> LISTENERS = new CopyOnWriteArrayList<>();
    private static final AtomicBoolean JMX_REGISTERED = new AtomicBoolean();

    private Events() {
    }

    public static Counters counters() {
        return COUNTERS;
    }

    public static void addListener(LockHygieneListener listener) {
        LISTENERS.add(listener);
    }

    public static void removeListener(LockHygieneListener listener) {
        LISTENERS.remove(listener);
    }

    /** True when some listener (the application's, the report file's) would see an event. */
    public static boolean anyListener() {
        return !LISTENERS.isEmpty();
    }

    /** Counts an event nobody listens to, without making it. */
    public static void countOnly(EventType type) {
        COUNTERS.count(type);
    }

    /** Counts the event and hands it to every listener; a failing listener is logged, never thrown. */
    public static void publish(LockHygieneEvent event) {
        COUNTERS.count(event.type());
        for (LockHygieneListener l : LISTENERS) {
            try {
                l.onEvent(event);
            } catch (RuntimeException e) {
                Log.warn("LockHygiene event listener {} failed on {}: {}", l, event.type(), e.toString());
            }
        }
    }

    /** How long after the first connection the MXBean is registered. */
    static final long JMX_DELAY_MS = 1000;

    /**
     * The process-wide parts, once per class loader: the report file and exit hook (ProcessReportsSwitch), and
     * the MXBean, registered off the caller's thread and {@value #JMX_DELAY_MS} ms later: starting the
     * platform MBean server costs tens of milliseconds of CPU (a few hundred on a slow machine), which must
     * not compete with a service's first query and the rest of its start-up. Failure (a second copy, a
     * locked-down JVM) is DEBUG.
     */
    public static void installProcessWideOnce() {
        if (!JMX_REGISTERED.compareAndSet(false, true)) {
            return;
        }
        ProcessReportsSwitch.installOnce();
        Thread t = new Thread(new MBeanRegistration(), "lockhygiene-jmx-registration");
        t.setDaemon(true);
        t.start();
    }

    /** A class, not a lambda or method reference: a first connection would bootstrap one (start-up cost). */
    private static final class MBeanRegistration implements Runnable {
        @Override
        public void run() {
            try {
                Thread.sleep(JMX_DELAY_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            registerMBean();
        }
    }

    private static void registerMBean() {
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(MBEAN_NAME);
            if (!server.isRegistered(name)) {
                server.registerMBean(COUNTERS, name);
            }
        } catch (Exception | LinkageError e) {
            Log.debug("LockHygiene MBean not registered: {}", e.toString());
        }
    }

    /**
     * Process-wide counters; LongAdder so that increments never contend. Statements seen, the one per-statement
     * count, are tallied per connection ({@link StatementTally}) and summed here when read.
     */
    public static final class Counters implements LockHygieneMXBean {
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

        /**
         * One connection's count of statements seen: a plain field, because a JDBC connection is used by one thread
         * at a time and an atomic increment (even LongAdder's) cost about 15 ns of the hot path's budget of 20.
         * {@link Counters} sums the open connections' tallies when asked (a reading from another thread may lag by
         * a statement or two) and folds a tally into its total when the connection closes.
         */
        public static final class StatementTally {
            long count;

            StatementTally() {
            }

            /** Hot path: no atomic, no allocation. */
            public void seen() {
                count++;
            }
        }
    }
}
