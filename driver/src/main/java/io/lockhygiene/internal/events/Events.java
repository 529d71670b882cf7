package io.lockhygiene.internal.events;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.MBeanServer;
import javax.management.ObjectName;

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
    public static void countOnly(io.lockhygiene.events.EventType type) {
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
}
