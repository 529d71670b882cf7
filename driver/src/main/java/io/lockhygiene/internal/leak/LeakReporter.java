package io.lockhygiene.internal.leak;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.events.EventFactory;
import io.lockhygiene.internal.events.Events;
import io.lockhygiene.internal.leak.RecentCalls.LockCall;
import io.lockhygiene.internal.leak.RecentCalls.RecentStatements;
import io.lockhygiene.settings.Settings;

/**
 * Reads the listing of a leak check and says what it found: a leak (with where the lock was taken) or
 * an inherited lock. One per connection; holds no state of its own.
 */
public final class LeakReporter {
    private final String connectionId;
    private final Settings settings;

    public LeakReporter(String connectionId, Settings settings) {
        this.connectionId = connectionId;
        this.settings = settings;
    }

    /** Walks the piggyback's results ([COMMIT], LIST, RELEASE, [COMMIT]) to the listing (5 or 6 columns). */
    public static List<HeldLock> readHeldLocks(Statement s, boolean isResultSet) throws SQLException {
        List<HeldLock> held = new ArrayList<>();
        while (isResultSet || s.getUpdateCount() != -1) {
            if (isResultSet) {
                try (ResultSet rs = s.getResultSet()) {
                    if (rs.getMetaData().getColumnCount() >= 5 && "classid".equals(rs.getMetaData().getColumnLabel(1))) {
                        while (rs.next()) {
                            held.add(HeldLock.fromListing(rs));
                        }
                        return held;
                    }
                }
            }
            isResultSet = s.getMoreResults();
        }
        return held;
    }

    /** Reports each released lock, attributed to the call among {@code calls} that took it. */
    public void report(List<HeldLock> held, RecentCalls calls, String when) {
        report(held, calls, when, null);
    }

    /**
     * As {@link #report(List, RecentCalls, String)}; for a lock no recorded call took, the report also says
     * what is known: the backend, that PostgreSQL does not record when a lock was granted, and the last
     * statements of this connection ({@code recent}, may be null).
     */
    public void report(List<HeldLock> held, RecentCalls calls, String when, RecentStatements recent) {
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, calls.list());
            if (taker != null) {
                String message = "released leaked session advisory lock " + lock.key() + " (" + lock.mode()
                        + times(lock) + ") held by backend " + lock.backendPid() + " " + when + ". It was taken by "
                        + taker.function().sqlName() + " at " + CallSite.describe(taker.takenAt())
                        + " and never unlocked on that backend; the next client of this server would have inherited it."
                        + " Fix: pg_advisory_xact_lock inside a transaction, or lockhygiene.mode=emulate.";
                String site = CallSite.describe(taker.takenAt());
                ReportLog.error("leak@" + site, "leaked session locks released, taken at " + site, lock.key(),
                        "LockHygiene: {} SQL: {}", message, settings.loggable(taker.sql()), taker.takenAt());
                publish(EventType.LEAK_RELEASED, taker.function().sqlName(), lock.key(), lock.mode(), taker.sql(),
                        message, taker.takenAt());
            } else {
                String message = "released inherited session advisory lock " + lock.key() + " (" + lock.mode()
                        + times(lock) + ") held by backend " + lock.backendPid() + " " + when + ": this connection never took it,"
                        + " so another client of the same server left it there (or a function or DO block took it)."
                        + " Find that client; LockHygiene in front of it reports where it takes the lock."
                        + (calls.dropped() > 0 ? " (This connection also sent " + calls.dropped() + " older lock calls"
                        + " that are no longer kept for attribution: the last " + RecentCalls.MAX
                        + " are.)" : "") + known(lock, recent);
                ReportLog.error("inherited@" + when, "inherited session locks released " + when, lock.key(),
                        "LockHygiene: {}", message);
                publish(EventType.INHERITED_RELEASED, null, lock.key(), lock.mode(), null, message, null);
            }
        }
    }

    /**
     * emulate: a connection that owned locks closed, and its locks went with it, as PostgreSQL ends a
     * session's locks with the session: what happened, and where each was taken, at WARN without a stack (a
     * pool that closes its connections at shutdown ends a leader's lock so, as it should). The event is published
     * as for any released lock.
     */
    public void reportSessionEnded(List<HeldLock> held, RecentCalls calls, String connection) {
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, calls.list());
            String site = taker == null ? "an unknown place (older than the last " + RecentCalls.MAX
                    + " calls kept)" : CallSite.describe(taker.takenAt());
            String message = "session advisory lock " + lock.key() + " (" + lock.mode() + times(lock) + "), taken at "
                    + site + ", ended with " + connection + ", as PostgreSQL ends a session's locks when the session"
                    + " ends (lockhygiene.mode=emulate). Nothing to do if the lock was meant to last as long as the"
                    + " connection; otherwise unlock it when the work it guards is done.";
            ReportLog.warn("ended@" + site, "session locks ended with their connection, taken at " + site, lock.key(),
                    "LockHygiene: {}", message);
            publish(EventType.LEAK_RELEASED, taker == null ? null : taker.function().sqlName(), lock.key(), lock.mode(),
                    taker == null ? null : taker.sql(), message, taker == null ? null : taker.takenAt());
        }
    }

    /**
     * emulate: locks the lock holder held for an owner that is gone and cannot unlock them any more ({@code
     * why}: its thread ended, its connection went back to a pool) are released; each is reported with the call
     * that took it, stack and all.
     */
    public void reportOwnerGone(List<HeldLock> held, RecentCalls calls, String why) {
        for (HeldLock lock : held) {
            LockCall taker = Attribution.takerOf(lock, calls.list());
            String site = taker == null ? "an unknown place (older than the last " + RecentCalls.MAX
                    + " calls kept)" : CallSite.describe(taker.takenAt());
            String message = "released session advisory lock " + lock.key() + " (" + lock.mode() + times(lock)
                    + ") that " + why + " still held (lockhygiene.mode=emulate). It was taken at " + site
                    + " and never unlocked. Fix: unlock it when the work it guards is done (in a finally block).";
            ReportLog.error("gone@" + site, "session locks released because their owner was gone, taken at " + site,
                    lock.key(), "LockHygiene: {} SQL: {}", message, taker == null ? "?" : settings.loggable(taker.sql()),
                    taker == null ? null : taker.takenAt());
            publish(EventType.LEAK_RELEASED, taker == null ? null : taker.function().sqlName(), lock.key(), lock.mode(),
                    taker == null ? null : taker.sql(), message, taker == null ? null : taker.takenAt());
        }
    }

    /** What a report can say of a lock whose acquisition was not seen. */
    private String known(HeldLock lock, RecentStatements recent) {
        StringBuilder sb = new StringBuilder(" It was held by backend ").append(lock.backendPid())
                .append(" when this check ran; PostgreSQL does not record when a lock was granted, so it was taken"
                        + " at some time before, by any transaction that ran on that backend (a function, trigger or DO"
                        + " block of this application hides the call from its SQL).");
        if (recent != null) {
            List<String> last = recent.describe(settings);
            if (!last.isEmpty()) {
                sb.append(" This connection's last ").append(last.size()).append(" statement(s) before the check: ")
                        .append(String.join(" | ", last)).append('.');
            }
        }
        return sb.toString();
    }

    private static String times(HeldLock lock) {
        return lock.count() > 1 ? ", taken " + lock.count() + " times" : "";
    }

    /** A check that could not run: logged and published, never thrown (the application's work goes on). */
    public void checkFailed(String when, Exception e) {
        String message = "LockHygiene could not check " + connectionId + " for leaked advisory locks " + when + ": " + e;
        ReportLog.warn("check-failed@" + when, "checks that could not run " + when, connectionId, "{}", message);
        publish(EventType.CHECK_FAILED, null, null, null, null, message, null);
    }

    public void publish(EventType type, String function, String key, String mode, String sql, String message,
                 Throwable stack) {
        if (!Events.anyListener()) {
            Events.countOnly(type); // the counters (JMX) still see it; nothing else would read the event
            return;
        }
        Events.publish(EventFactory.make(type, connectionId, function, key, mode,
                sql == null ? null : settings.loggable(sql), message, stack));
    }
}
