package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockhygiene.events.EventType;
import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.holder.MainSession.LockRequest;
import io.lockhygiene.internal.leak.LeakReporter;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.log.Log;

/**
 * A lock holder's life beside its work: its loss (every server session ends, the table is cleared, every
 * owner that held something is told), the events that says (queued, and published by the thread that lets
 * go of its locks last), the watchdog's rounds, and its users (the last one gone closes its idle sessions).
 */
final class HolderLife {
    /** How long an idle session goes unlooked-at while the holder holds anything (a look costs no round trip). */
    static final long PEEK_IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final HolderEndpoint endpoint;
    private final LockTable table;
    private final HolderSession[] mains;
    private final ConcurrentLinkedQueue<Runnable> pendingEvents = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean starvationTold = new AtomicBoolean();
    private final AtomicBoolean roundFailureTold = new AtomicBoolean();
    private final AtomicInteger users = new AtomicInteger();
    private final HolderWatchdog.Watched watch = new HolderWatchdog.Watched() {
        @Override
        public boolean round() {
            return HolderLife.this.round();
        }

        @Override
        public boolean usedSinceRoundBegan() {
            return uses.get() != usesAtRound;
        }
    };
    /** Uses so far, and as the current (or last) watchdog round began: see {@link HolderWatchdog.Watched}. */
    private final java.util.concurrent.atomic.AtomicLong uses = new java.util.concurrent.atomic.AtomicLong();
    private volatile long usesAtRound;
    /**
     * The holder whose life this is: asked for its main sessions' queues, its waits in the server's queue and its
     * gone threads' locks (the one object that owns them), never wired part by part.
     */
    private final Holder holder;
    /** Set at the first loss that told owners: from then on, statements ask their owner. */
    private long lastFullRound = System.nanoTime();
    /** When an owner last used the holder (a lock asked for, a release): the linger counts from there. */
    private volatile long lastUse = System.nanoTime();
    private final long lingerNanos;

    HolderLife(HolderEndpoint endpoint, LockTable table, HolderSession[] mains, Holder holder) {
        this.holder = holder;
        this.endpoint = endpoint;
        this.table = table;
        this.mains = mains;
        this.lingerNanos = TimeUnit.MILLISECONDS.toNanos(endpoint.lingerMillis());
    }

    /**
     * An owner uses the holder (asks for a lock, lets one go): the idle linger starts again, and the watchdog
     * watches, so that sessions that end up holding nothing are closed once the linger has passed.
     */
    void used() {
        uses.incrementAndGet();
        lastUse = System.nanoTime();
        HolderWatchdog.watch(watch);
    }

    /**
     * Any failure of a holder statement ends all its server sessions: a connection loss took the locks with
     * it already, and any other error is no state to go on from. Closing makes PostgreSQL (or the pooler)
     * release everything. Every owner that held a lock is told on its next statement (the batch's owners and
     * the caller get this failure now); events are published after the caller lets go of its locks.
     *
     * @param caller the owner whose own statement met the loss (it gets the failure, not the later notice), or null
     */
    SQLException lost(Exception cause, List<LockRequest> batch, LockOwner caller) {
        // owners are marked before the table forgets them: a statement that finds its owner holding nothing
        // any more finds it marked lost, so no commit slips through unfenced in between
        List<LockOwner> before = table.owners();
        mark(before, batch, caller);
        for (HolderSession main : mains) {
            main.close(); // every one: a holder that lost one session's locks is lost as a whole
        }
        if (waits() != null) {
            waits().closeAll();
        }
        List<LockOwner> owners = table.clear();
        mark(owners, batch, caller); // those that took something meanwhile
        for (LockOwner o : before) {
            if (!owners.contains(o)) {
                owners.add(o);
            }
        }
        HolderWatchdog.forget(watch);
        if (!owners.isEmpty()) {
            String message = EmulateMessages.holderLost(endpoint, cause);
            List<LeakReporter> told = new ArrayList<>();
            for (LockOwner owner : owners) {
                if (owner.reporter() != null) {
                    told.add(owner.reporter());
                }
            }
            pendingEvents.add(() -> {
                Log.error("{}", message);
                for (LeakReporter r : told) {
                    r.publish(EventType.LOCK_LOST, null, null, null, null, message, null);
                }
            });
        }
        SQLException failure = cause instanceof SQLException ? (SQLException) cause : Holder.lostException(null, cause);
        for (LockRequest t : batch) {
            t.fail(failure);
        }
        holder.failQueued(failure);
        return failure;
    }

    private void mark(List<LockOwner> owners, List<LockRequest> batch, LockOwner caller) {
        if (owners.isEmpty()) {
            return;
        }
        table.lossTold();
        for (LockOwner owner : owners) {
            if (owner != caller && !inBatch(owner, batch)) {
                owner.markLost();
            }
        }
    }

    private static boolean inBatch(LockOwner owner, List<LockRequest> batch) {
        for (LockRequest t : batch) {
            if (t.owner == owner) {
                return true;
            }
        }
        return false;
    }

    /** The holder's waits in the server's queue; null for an endpoint through the application's pooler. */
    private ServerQueue waits() {
        return holder.serverQueue();
    }

    /** Publishes what was queued; called with no lock of ours held. */
    void publishPending() {
        for (Runnable r; (r = pendingEvents.poll()) != null; ) {
            try {
                r.run();
            } catch (RuntimeException e) {
                Log.debug("LockHygiene: a listener failed: {}", e.toString());
            }
        }
    }

    /** Said once: a holder through the pooler waited long for a server. */
    void toldStarved(long nanos) {
        if (!starvationTold.compareAndSet(false, true)) {
            return;
        }
        String message = EmulateMessages.holderStarved(endpoint, TimeUnit.NANOSECONDS.toMillis(nanos));
        pendingEvents.add(() -> {
            Log.warn("{}", message);
            // about the process's lock holder, not one connection: no connection id (the message names the holder)
            io.lockhygiene.internal.events.Events.publish(io.lockhygiene.internal.events.EventFactory.make(
                    EventType.HOLDER_STARVED, null, null, null, null, null, message, null));
        });
    }

    void watchNow() {
        HolderWatchdog.watch(watch);
    }

    /**
     * A look at once (a fenced commit found a seal free, or a caller suspects the session): the main
     * session is pinged, bounded; a failure is the loss. No lock is waited for longer than a moment.
     */
    void checkNow(LockOwner caller) {
        for (HolderSession main : mains) {
            if (!checkNow(main, caller)) {
                break;
            }
        }
        if (waits() != null) {
            waits().peekIdle(this);
        }
        publishPending();
    }

    /** False when the look found the loss (or was interrupted): the other sessions need no look then. */
    private boolean checkNow(HolderSession main, LockOwner caller) {
        SessionTurn turn;
        try {
            turn = main.tryTurn(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        if (turn == null) {
            return true; // in use: that use finds out itself
        }
        try (turn) {
            try {
                if (main.isOpen() || main.brokeUnseen()) {
                    main.link().ping(HolderWatchdog.PING_TIMEOUT_MILLIS);
                }
                return true;
            } catch (SQLException | RuntimeException e) {
                lost(e, new ArrayList<>(0), caller); // under the turn, as every loss found on a session
                return false;
            }
        }
    }

    /**
     * The watchdog's round (every few tens of milliseconds while the holder holds anything or waits): idle
     * sessions are looked at without a round trip, so a terminated backend is noticed at once. Once a second
     * also: the locks of pooled threads that ended are released and reported; each wait in PostgreSQL's queue
     * is checked for a deadlock with another process, an interrupt and a session the server no longer has;
     * the main session is pinged (bounded), so that a silent network is noticed too.
     *
     * @return false when there is nothing left to watch
     */
    boolean round() {
        usesAtRound = uses.get();
        try {
            long now = System.nanoTime();
            boolean full = now - lastFullRound >= TimeUnit.MILLISECONDS.toNanos(HolderWatchdog.INTERVAL_MILLIS);
            if (full) {
                lastFullRound = now;
                holder.reapGoneThreads();
                if (waits() != null) {
                    waits().watchdogChecks(this);
                }
            }
            boolean holds = !table.serverHoldsNothing();
            for (HolderSession main : mains) {
                SessionTurn turn = holds ? main.tryTurn() : null;
                if (turn != null) {
                    try {
                        if (main.brokeUnseen()) {
                            throw new SQLException("LockHygiene: the lock holder's main connection broke", "08006");
                        }
                        if (main.isOpen() && !table.serverHoldsNothing()) {
                            if (full) {
                                main.ping(HolderWatchdog.PING_TIMEOUT_MILLIS);
                            } else if (main.idleNanos() > PEEK_IDLE_NANOS) {
                                main.peek();
                            }
                        }
                    } catch (SQLException | RuntimeException e) {
                        if (table.backendHolds(main)) {
                            lost(e, new ArrayList<>(0), null); // pgjdbc may have closed it already (a terminated backend)
                        } else {
                            // one of several main sessions that holds nothing broke (its backend was ended while
                            // the others hold locks taken since): nothing is lost on it, as MainSession.send has it
                            main.close();
                        }
                    } finally {
                        turn.close();
                        publishPending();
                    }
                }
            }
            if (holds && waits() != null) {
                waits().peekIdle(this);
                publishPending();
            }
            if (!idle()) {
                return true;
            }
            // nothing held, nothing waited for: the sessions linger, then close; watched until they are closed,
            // and through the linger after a use even with none open (the use may be opening one right now)
            if (System.nanoTime() - lastUse < lingerNanos) {
                return true;
            }
            if (!anySessionOpen()) {
                return false;
            }
            return !closeIdle();
        } catch (RuntimeException e) {
            if (roundFailureTold.compareAndSet(false, true)) {
                Log.warn("LockHygiene: the watchdog of the lock holder for {} failed ({}); it keeps watching. Please"
                        + " report this with the stack trace at DEBUG.", endpoint, e.toString());
            }
            Log.debug("LockHygiene: watchdog round of {} failed", endpoint, e);
            return true;
        }
    }

    /** An application connection (a connection owner) of this holder opened, or a DataSource placed it. */
    void userOpened() {
        users.incrementAndGet();
    }

    /**
     * One user gone (after its locks were released). With none left and nothing held, the holder's idle
     * sessions are closed too; the next lock opens them again.
     */
    void userClosed() {
        if (users.decrementAndGet() > 0) {
            return;
        }
        closeIdle();
    }

    /** Nothing held (in the table or on the server) and nothing waited for in PostgreSQL's queue. */
    private boolean idle() {
        return table.serverHoldsNothing() && !table.anyoneHolds() && (waits() == null || !waits().anyWaiting());
    }

    private boolean anySessionOpen() {
        for (HolderSession main : mains) {
            if (main.isOpen()) {
                return true;
            }
        }
        return waits() != null && waits().anyIdleSession();
    }

    /**
     * Closes the holder's sessions when it holds nothing and waits for nothing: every main session's turn is
     * tried without waiting (one in use is not idle: nothing closes), the state is looked at again under them,
     * then the main sessions close (their seals go with them) and so do the idle waiting sessions; a waiting
     * session lent out is left alone. An owner that asks meanwhile waits for the turn and then finds its session
     * closed: it opens a fresh one (MainSession decides again), so no request is lost. This is no loss: nothing
     * was held, nobody is told.
     *
     * @return true when everything was closed
     */
    boolean closeIdle() {
        if (!idle()) {
            return false;
        }
        SessionTurn[] turns = new SessionTurn[mains.length];
        int taken = 0;
        try {
            for (HolderSession main : mains) {
                turns[taken] = main.tryTurn();
                if (turns[taken] == null) {
                    return false; // in use: not idle
                }
                taken++;
            }
            if (!idle()) {
                return false; // looked at again under every main session's turn
            }
            for (HolderSession main : mains) {
                main.close();
            }
            if (waits() != null) {
                waits().closeIdle();
            }
            return true;
        } finally {
            for (int i = 0; i < taken; i++) {
                turns[i].close();
            }
        }
    }

    /** Closes every session (tests, and the end of a holder nobody uses). */
    void shutdown() {
        for (HolderSession main : mains) {
            try (SessionTurn turn = main.turn()) {
                main.close();
            }
        }
        if (waits() != null) {
            waits().closeAll();
        }
        HolderWatchdog.forget(watch);
    }

    /** A failure that means the connection is gone (class 08, an administrator's termination, closed). */
    static boolean brokenConnection(Exception e) {
        String state = e instanceof SQLException ? ((SQLException) e).getSQLState() : null;
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
                || state.equals("57P03"));
    }
}
