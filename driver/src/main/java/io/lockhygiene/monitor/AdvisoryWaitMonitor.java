package io.lockhygiene.monitor;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ObjectName;
import javax.sql.DataSource;

import io.lockhygiene.internal.leak.HeldLock;
import io.lockhygiene.internal.leak.PgLocks;
import io.lockhygiene.internal.log.Log;
import io.lockhygiene.settings.Settings;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * Finds advisory-lock waits nobody sees: ungranted advisory locks joined to pg_stat_activity and to the
 * backend holding the lock, waiting longer than a threshold. On a schedule it logs one WARN per blocked
 * backend per episode (not every poll), with both pids, the wait, state, wait event and both queries;
 * the current count and the longest wait are on JMX. One short query per poll on a fresh connection, so it
 * works through a pooler and survives the server going away and coming back.
 *
 * <pre>
 * AdvisoryWaitMonitor m = AdvisoryWaitMonitor.forDataSource(ds).threshold(Duration.ofSeconds(30)).start();
 * </pre>
 */
public final class AdvisoryWaitMonitor implements AdvisoryWaitMonitorMXBean, AutoCloseable {
    private final ConnectionSource source;
    private final Duration threshold;
    private final Duration interval;
    private final Integer classId;
    private final Settings.LogSql logSql;
    private final String name;
    private final Set<String> episodes = new HashSet<>();
    private final AtomicLong reported = new AtomicLong();
    private volatile int currentWaits;
    private volatile long longestWaitMillis;
    private boolean unreachable;
    /** Guards the episodes and start/close; never held across a borrow or a round trip (the poll queries before it). */
    private final OrderedLock lock = new OrderedLock(LockOrder.WAIT_MONITOR);
    private ScheduledExecutorService scheduler;
    private ObjectName jmxName;

    /** Where a poll gets its connection. */
    @FunctionalInterface
    public interface ConnectionSource {
        Connection open() throws SQLException;
    }

    private AdvisoryWaitMonitor(Builder b) {
        this.source = b.source;
        this.threshold = b.threshold;
        this.interval = b.interval;
        this.classId = b.classId;
        this.logSql = b.logSql;
        this.name = b.name;
    }

    public static Builder forDataSource(DataSource ds) {
        return new Builder(ds::getConnection);
    }

    /** Any way of opening a connection (the command-line tools bring their own pgjdbc). */
    public static Builder forSource(ConnectionSource source) {
        return new Builder(source);
    }

    public static Builder forUrl(String url, Properties info) {
        return new Builder(() -> DriverManager.getConnection(url, info));
    }

    /** Configuration; defaults: threshold 30 s, interval 10 s, every class id, SQL truncated. */
    public static final class Builder {
        private final ConnectionSource source;
        private Duration threshold = Duration.ofSeconds(30);
        private Duration interval = Duration.ofSeconds(10);
        private Integer classId;
        private Settings.LogSql logSql = Settings.LogSql.TRUNCATE;
        private String name = "default";

        private Builder(ConnectionSource source) {
            this.source = source;
        }

        public Builder threshold(Duration d) {
            this.threshold = d;
            return this;
        }

        public Builder interval(Duration d) {
            this.interval = d;
            return this;
        }

        /** Only locks with this class id (the first of two int keys, the high half of a bigint key). */
        public Builder classId(Integer id) {
            this.classId = id;
            return this;
        }

        public Builder logSql(Settings.LogSql l) {
            this.logSql = l;
            return this;
        }

        /** The JMX name part, for more than one monitor in a JVM. */
        public Builder name(String n) {
            this.name = n;
            return this;
        }

        /** Not yet started: call {@link AdvisoryWaitMonitor#poll()} yourself, or {@link #start()}. */
        public AdvisoryWaitMonitor build() {
            return new AdvisoryWaitMonitor(this);
        }

        public AdvisoryWaitMonitor start() {
            return build().start();
        }
    }

    /** Polls on a daemon thread every interval, and registers the MXBean. */
    public AdvisoryWaitMonitor start() {
        lock.lock();
        try {
            return startLocked();
        } finally {
            lock.unlock();
        }
    }

    private AdvisoryWaitMonitor startLocked() {
        if (scheduler == null) {
            scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "lockhygiene-advisory-wait-monitor-" + name);
                t.setDaemon(true);
                return t;
            });
            scheduler.scheduleWithFixedDelay(this::pollQuietly, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
            try {
                jmxName = new ObjectName("io.lockhygiene:type=AdvisoryWaitMonitor,name=" + ObjectName.quote(name));
                ManagementFactory.getPlatformMBeanServer().registerMBean(this, jmxName);
            } catch (Exception e) {
                Log.debug("LockHygiene wait monitor {} not on JMX: {}", name, e.toString());
                jmxName = null;
            }
        }
        return this;
    }

    private void pollQuietly() {
        try {
            poll();
            if (unreachable) {
                unreachable = false;
                Log.info("LockHygiene wait monitor {}: the server answers again", name);
            }
        } catch (SQLException | RuntimeException e) {
            if (!unreachable) {
                unreachable = true;
                Log.warn("LockHygiene wait monitor {}: cannot query the server ({}); retrying every {} ms", name,
                        e.toString(), interval.toMillis());
            }
        }
    }

    /**
     * One poll: the waits over the threshold now, those PostgreSQL shows and, under emulate, those of this
     * JVM it cannot show. Logs each new episode once; forgets episodes that ended.
     */
    public List<AdvisoryWait> poll() throws SQLException {
        // the query borrows from the application's DataSource: under no lock of ours (a borrow may wait long)
        List<AdvisoryWait> waits = query();
        waits.addAll(emulatedWaits());
        List<AdvisoryWait> fresh;
        lock.lock();
        try {
            fresh = record(waits);
        } finally {
            lock.unlock();
        }
        for (AdvisoryWait w : fresh) {
            say(w); // logged after the lock is let go: a log sink is the user's code
        }
        return waits;
    }

    /**
     * emulate: this JVM's waits over the threshold that pg_locks does not show (one owner waiting for
     * another in the JVM, or polling for another process through a pooler); waits in PostgreSQL's queue are
     * the query's already.
     */
    private List<AdvisoryWait> emulatedWaits() {
        List<AdvisoryWait> out = new ArrayList<>();
        for (io.lockhygiene.internal.holder.EmulatedWait w : io.lockhygiene.internal.holder.EmulatedWait.snapshot()) {
            if (w.where() == io.lockhygiene.internal.holder.EmulatedWait.Where.SERVER || w.waitedMillis() < threshold.toMillis()) {
                continue;
            }
            String key = w.key().toString();
            if (classId != null && (w.key().classid() != (classId & 0xFFFFFFFFL))) {
                continue;
            }
            out.add(new AdvisoryWait(0, 0, key, w.shared() ? "ShareLock" : "ExclusiveLock", w.waitedMillis(),
                    w.where() == io.lockhygiene.internal.holder.EmulatedWait.Where.LOCAL ? "waiting in the JVM"
                            : "polling through the pooler", null, null, null, null, w.owner(), w.heldBy()));
        }
        return out;
    }

    /** The waits of this poll into the episodes; returns the episodes that are new (to be said once each). */
    private List<AdvisoryWait> record(List<AdvisoryWait> waits) {
        Set<String> seen = new HashSet<>();
        long longest = 0;
        Set<String> blocked = new HashSet<>();
        List<AdvisoryWait> fresh = new ArrayList<>();
        for (AdvisoryWait w : waits) {
            String who = w.isEmulated() ? w.owner() : Integer.toString(w.blockedPid());
            String episode = who + "/" + w.key() + "/" + w.mode();
            seen.add(episode);
            blocked.add(who);
            longest = Math.max(longest, w.waitMillis());
            if (episodes.add(episode)) {
                reported.incrementAndGet();
                fresh.add(w);
            }
        }
        episodes.retainAll(seen);
        currentWaits = blocked.size();
        longestWaitMillis = longest;
        return fresh;
    }

    private void say(AdvisoryWait w) {
        if (w.isEmulated()) {
            Log.warn("LockHygiene: {} has waited {} ms (threshold {} ms) for advisory lock {} ({}) held by {}"
                            + " (lockhygiene.mode=emulate, {}: pg_locks does not show this wait)", w.owner(),
                    w.waitMillis(), threshold.toMillis(), w.key(), w.mode(), w.holder(), w.state());
        } else {
            Log.warn("LockHygiene: backend {} has waited {} ms (threshold {} ms) for advisory lock {} ({}) held by"
                            + " backend {}; state {}, wait event {}:{}. Waiting query: {} Holding query: {}",
                    w.blockedPid(), w.waitMillis(), threshold.toMillis(), w.key(), w.mode(), w.blockingPid(),
                    w.state(), w.waitEventType(), w.waitEvent(), w.blockedQuery(), w.blockingQuery());
        }
    }

    private List<AdvisoryWait> query() throws SQLException {
        List<AdvisoryWait> waits = new ArrayList<>();
        try (Connection c = source.open()) {
            String since = "coalesce(w.waitstart, wa.query_start)";
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW server_version_num")) {
                rs.next();
                if (Integer.parseInt(rs.getString(1)) < 140000) {
                    since = "wa.query_start"; // pg_locks.waitstart is new in PostgreSQL 14
                }
            }
            String sql = PgLocks.waitsLongerThan(since, classId != null);
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setLong(1, threshold.toMillis());
                if (classId != null) {
                    ps.setLong(2, classId & 0xFFFFFFFFL);
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        HeldLock lock = HeldLock.fromListing(rs);
                        waits.add(new AdvisoryWait(lock.backendPid(), rs.getInt(6), lock.key(), lock.mode(), rs.getLong(7),
                                rs.getString(8), rs.getString(9), rs.getString(10), logSql.cut(rs.getString(11)),
                                logSql.cut(rs.getString(12))));
                    }
                }
            }
        }
        return waits;
    }

    @Override
    public int getCurrentWaits() {
        return currentWaits;
    }

    @Override
    public long getLongestWaitMillis() {
        return longestWaitMillis;
    }

    @Override
    public long getEpisodesReported() {
        return reported.get();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            closeLocked();
        } finally {
            lock.unlock();
        }
    }

    private void closeLocked() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            scheduler = null;
        }
        if (jmxName != null) {
            try {
                ManagementFactory.getPlatformMBeanServer().unregisterMBean(jmxName);
            } catch (Exception ignored) {
                // already gone
            }
            jmxName = null;
        }
    }
}
