package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import io.lockhygiene.internal.util.LockOrder;
import io.lockhygiene.internal.util.OrderedLock;

/**
 * The holder's waiting connections on a dedicated endpoint: lent to one blocking call at a time, kept while
 * a key it took is held, then idle for the next wait (a few are kept idle; more are closed).
 */
final class WaitingSessions {
    static final int MAX_IDLE = 2;

    private final HolderEndpoint endpoint;
    /** Guards the lists only; never held across a round trip. */
    private final OrderedLock lists = new OrderedLock(LockOrder.WAITING_SESSION_LISTS);
    private final ArrayDeque<HolderSession> idle = new ArrayDeque<>();
    private final List<HolderSession> all = new ArrayList<>();

    WaitingSessions(HolderEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** An idle waiting connection, or a new one (opened outside every lock). */
    HolderSession borrow() throws SQLException {
        lists.lock();
        try {
            HolderSession w = idle.poll();
            if (w != null && !w.isClosed()) {
                return w;
            }
            if (w != null) {
                all.remove(w);
            }
        } finally {
            lists.unlock();
        }
        HolderSession w = HolderSession.waiting(endpoint.open());
        lists.lock();
        try {
            all.add(w);
        } finally {
            lists.unlock();
        }
        return w;
    }

    /** Back from a wait or a release: idle when it holds nothing (or closed beyond a few), else it stays out. */
    void giveBack(HolderSession w, boolean holdsSomething) {
        if (holdsSomething) {
            return;
        }
        boolean close = false;
        lists.lock();
        try {
            if (w.isClosed()) {
                all.remove(w);
            } else if (!idle.contains(w)) {
                if (idle.size() >= MAX_IDLE) {
                    all.remove(w);
                    close = true;
                } else {
                    idle.push(w);
                }
            }
        } finally {
            lists.unlock();
        }
        if (close) {
            w.close();
        }
    }

    /** The waiting sessions lent out: each holds a key, or waits for one (the watchdog looks at them). */
    List<HolderSession> holdingKeys() {
        lists.lock();
        try {
            List<HolderSession> out = new ArrayList<>(all);
            out.removeAll(idle);
            return out;
        } finally {
            lists.unlock();
        }
    }

    boolean anyIdle() {
        lists.lock();
        try {
            return !idle.isEmpty();
        } finally {
            lists.unlock();
        }
    }

    /** The idle ones close (a borrow meanwhile gets one first, or opens a new one); the lent ones stay. */
    void closeIdle() {
        List<HolderSession> closing;
        lists.lock();
        try {
            closing = new ArrayList<>(idle);
            idle.clear();
            all.removeAll(closing);
        } finally {
            lists.unlock();
        }
        for (HolderSession w : closing) {
            w.close();
        }
    }

    /** The holder lost its server: every waiting connection goes (their locks are gone anyway). */
    void closeAll() {
        List<HolderSession> closing;
        lists.lock();
        try {
            closing = new ArrayList<>(all);
            all.clear();
            idle.clear();
        } finally {
            lists.unlock();
        }
        for (HolderSession w : closing) {
            w.close();
        }
    }
}
