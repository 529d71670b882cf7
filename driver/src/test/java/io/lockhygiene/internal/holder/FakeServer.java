package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PostgreSQL stand-in for the advisory functions the lock holder sends, behind {@link HolderLink}: sessions
 * with session-level locks (exclusive and shared, stacking), tries refused by other sessions' holds, blocking
 * calls that wait (with lock_timeout, query timeout and cancel), unlock and unlock_all; plus a record of every
 * statement and a switch that makes the next statement fail as a lost connection. Enough to unit-test the
 * holder's batching, hand-overs, waits and loss; the real semantics are proved against PostgreSQL.
 */
final class FakeServer {
    private static final Pattern CALL = Pattern.compile("pg_catalog\\.(pg_\\w+)\\(([^)]*)\\)");
    private static final Pattern LOCK_TIMEOUT = Pattern.compile("SET lock_timeout = (\\d+)");

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    /** key -> session pid -> {exclusive, shared} counts. */
    private final Map<String, Map<Integer, int[]>> locks = new HashMap<>();
    private final AtomicInteger pids = new AtomicInteger(100);
    final List<String> statements = java.util.Collections.synchronizedList(new ArrayList<>());
    volatile boolean failNext;

    /** A session of another process (pid), for tests that take keys "elsewhere". */
    int otherProcessSession() {
        return pids.incrementAndGet();
    }

    /** Sessions opened and not closed. */
    final java.util.Set<HolderLink> open = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final AtomicInteger opened = new AtomicInteger();

    HolderLink open() {
        Link l = new Link(pids.incrementAndGet());
        open.add(l);
        opened.incrementAndGet();
        return l;
    }

    /** Takes {@code key} for session {@code pid} as another process would; false when it conflicts. */
    boolean take(int pid, String key, boolean shared) {
        lock.lock();
        try {
            if (conflicts(pid, key, shared)) {
                return false;
            }
            counts(pid, key)[shared ? 1 : 0]++;
            return true;
        } finally {
            lock.unlock();
        }
    }

    void release(int pid, String key, boolean shared) {
        lock.lock();
        try {
            int[] c = counts(pid, key);
            if (c[shared ? 1 : 0] > 0) {
                c[shared ? 1 : 0]--;
            }
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Sessions holding {@code key} in any mode. */
    /** The sessions that hold anything now (a holder's link holds its seal from its opening on). */
    java.util.Set<Integer> holdingSessions() {
        lock.lock();
        try {
            java.util.Set<Integer> pidsHolding = new java.util.HashSet<>();
            for (Map<Integer, int[]> byPid : locks.values()) {
                for (Map.Entry<Integer, int[]> e : byPid.entrySet()) {
                    if (e.getValue()[0] > 0 || e.getValue()[1] > 0) {
                        pidsHolding.add(e.getKey());
                    }
                }
            }
            return pidsHolding;
        } finally {
            lock.unlock();
        }
    }

    /** The session holding {@code key}, or -1. */
    int holderOf(String key) {
        lock.lock();
        try {
            for (Map.Entry<Integer, int[]> e : locks.getOrDefault(key, new HashMap<>()).entrySet()) {
                if (e.getValue()[0] > 0 || e.getValue()[1] > 0) {
                    return e.getKey();
                }
            }
            return -1;
        } finally {
            lock.unlock();
        }
    }

    int holders(String key) {
        lock.lock();
        try {
            int n = 0;
            for (int[] c : locks.getOrDefault(key, new HashMap<>()).values()) {
                n += c[0] + c[1] > 0 ? 1 : 0;
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    private int[] counts(int pid, String key) {
        return locks.computeIfAbsent(key, k -> new HashMap<>()).computeIfAbsent(pid, p -> new int[2]);
    }

    private boolean conflicts(int pid, String key, boolean shared) {
        for (Map.Entry<Integer, int[]> e : locks.getOrDefault(key, new HashMap<>()).entrySet()) {
            if (e.getKey() != pid && (e.getValue()[0] > 0 || (!shared && e.getValue()[1] > 0))) {
                return true;
            }
        }
        return false;
    }

    private final class Link implements HolderLink {
        private final int pid;
        private volatile boolean closed;
        private volatile boolean cancelled;

        Link(int pid) {
            this.pid = pid;
        }

        @Override
        public String[] query(String sql, int columns) throws SQLException {
            return run(sql, columns, 0);
        }

        @Override
        public String[] await(String sql, int columns, int timeoutSeconds) throws SQLException {
            return run(sql, columns, timeoutSeconds);
        }

        @Override
        public List<String[]> rows(String sql, int columns) throws SQLException {
            run("", 0, 0);
            return new ArrayList<>();
        }

        private String[] run(String sql, int columns, int timeoutSeconds) throws SQLException {
            if (closed) {
                throw new SQLException("This connection has been closed.", "08003");
            }
            statements.add(sql);
            if (failNext) {
                failNext = false;
                close();
                throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
            }
            cancelled = false;
            Matcher t = LOCK_TIMEOUT.matcher(sql);
            long lockTimeout = t.find() ? Long.parseLong(t.group(1)) : 0;
            List<String> out = new ArrayList<>();
            Matcher m = CALL.matcher(sql);
            boolean and = sql.contains(" AND ");
            Boolean previous = null;
            while (m.find()) {
                String f = m.group(1);
                String key = m.group(2).replace(" ", "");
                boolean shared = f.endsWith("_shared");
                String answer;
                if (and && previous != null && !previous) {
                    break; // AND stops at a false
                }
                switch (f) {
                    case "pg_try_advisory_lock":
                    case "pg_try_advisory_lock_shared":
                        answer = String.valueOf(take(pid, key, shared));
                        break;
                    case "pg_advisory_lock":
                    case "pg_advisory_lock_shared":
                        block(key, shared, lockTimeout, timeoutSeconds);
                        answer = "";
                        break;
                    case "pg_advisory_unlock":
                    case "pg_advisory_unlock_shared":
                        answer = String.valueOf(unlock(key, shared));
                        break;
                    case "pg_advisory_unlock_all":
                        unlockAll();
                        answer = "";
                        break;
                    default:
                        answer = "";
                }
                previous = "true".equals(answer) ? Boolean.TRUE : "false".equals(answer) ? Boolean.FALSE : previous;
                out.add(answer);
            }
            if (and && previous != null) {
                return new String[] {previous.toString()};
            }
            String[] row = new String[Math.max(columns, out.size())];
            for (int i = 0; i < row.length; i++) {
                row[i] = i < out.size() ? out.get(i) : null;
            }
            return row;
        }

        private void block(String key, boolean shared, long lockTimeoutMillis, int timeoutSeconds) throws SQLException {
            long start = System.nanoTime();
            lock.lock();
            try {
                while (conflicts(pid, key, shared)) {
                    if (cancelled) {
                        throw new SQLException("canceling statement due to user request", "57014");
                    }
                    long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    if (lockTimeoutMillis > 0 && waited >= lockTimeoutMillis) {
                        throw new SQLException("canceling statement due to lock timeout", "55P03");
                    }
                    if (timeoutSeconds > 0 && waited >= timeoutSeconds * 1000L) {
                        throw new SQLException("canceling statement due to user request", "57014");
                    }
                    if (closed) {
                        throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
                    }
                    released.await(5, TimeUnit.MILLISECONDS);
                }
                counts(pid, key)[shared ? 1 : 0]++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted", "57014");
            } finally {
                lock.unlock();
            }
        }

        private boolean unlock(String key, boolean shared) {
            lock.lock();
            try {
                int[] c = counts(pid, key);
                if (c[shared ? 1 : 0] == 0) {
                    return false;
                }
                c[shared ? 1 : 0]--;
                released.signalAll();
                return true;
            } finally {
                lock.unlock();
            }
        }

        private void unlockAll() {
            lock.lock();
            try {
                for (Map<Integer, int[]> byPid : locks.values()) {
                    byPid.remove(pid);
                }
                released.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            lock.lock();
            try {
                released.signalAll();
            } finally {
                lock.unlock();
            }
        }

        @Override
        public int backendPid() {
            return pid;
        }

        @Override
        public int seal() {
            return pid; // one per session, as a real seal
        }

        @Override
        public int newSeal() {
            return io.lockhygiene.internal.sql.Seals.fresh();
        }

        @Override
        public void peek() throws SQLException {
            if (closed) {
                throw new SQLException("FATAL: terminating connection due to administrator command", "57P01");
            }
        }

        @Override
        public void ping(long timeoutMillis) throws SQLException {
            run("SELECT 1", 1, 0);
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                open.remove(this);
                unlockAll(); // a backend that goes releases everything
            }
        }
    }
}
