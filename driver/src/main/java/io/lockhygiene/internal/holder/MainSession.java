package io.lockhygiene.internal.holder;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.lockhygiene.internal.log.EmulateMessages;
import io.lockhygiene.internal.locktable.AdvisoryKey;
import io.lockhygiene.internal.locktable.Answer;
import io.lockhygiene.internal.locktable.LockOwner;
import io.lockhygiene.internal.locktable.LockTable;
import io.lockhygiene.internal.locktable.ServerLock;
import io.lockhygiene.internal.locktable.TransactionId;

/**
 * The holder's main session at work: takes of all owners that need the server share one round trip (one
 * select list, which PostgreSQL evaluates left to right), together with the releases of server locks nobody
 * needs; through the application's pooler the session pins its server while it holds anything. The thread
 * whose turn it is ({@link SessionTurn}) sends everything queued, its own take and others'; a thread whose
 * take another's round trip carried returns when that one is answered.
 */
final class MainSession {
    /** A round trip through the pooler longer than this while unpinned waited for a server: said once. */
    private static final long STARVED_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final HolderSession link;
    private final LockTable table;
    private final HolderLife life;
    /** Dedicated endpoints only: releases of keys that live on waiting sessions go there. */
    private final ServerQueue waits;
    private final ConcurrentLinkedQueue<LockRequest> takes = new ConcurrentLinkedQueue<>();
    private final HolderStats stats;
    /**
     * The server locks this session releases: its own, and those of waiting sessions (whichever main session
     * flushes first); never another main session's, which only that one can let go.
     */
    private final Predicate<LockTable.Backend> mine;

    MainSession(HolderSession link, LockTable table, HolderLife life, ServerQueue waits, HolderStats stats) {
        this.link = link;
        this.stats = stats;
        this.mine = b -> b == link || HolderSession.isWaitingSession(b);
        this.table = table;
        this.life = life;
        this.waits = waits;
    }

    /**
     * Queues {@code take} and sends it with everything else due, in one round trip; the session is opened
     * first, outside every lock of ours.
     */
    LockRequest.Result take(LockRequest take) throws SQLException {
        if (!link.isOpen()) {
            if (link.brokeUnseen() && table.backendHolds(link)) {
                // pgjdbc found it broken before anybody told us: its locks are gone, say so before a new one
                throw life.lost(new SQLException("the lock holder's main connection broke", "08006"),
                        new ArrayList<>(0), take.owner);
            }
            long start = System.nanoTime();
            link.open(); // through the application's pooler its first statement waits for a server too
            if (link.pins() && System.nanoTime() - start > STARVED_NANOS) {
                life.toldStarved(System.nanoTime() - start);
            }
        }
        takes.add(take);
        long waitFrom = System.nanoTime();
        SessionTurn turn = link.awaitTurn(() -> take.done);
        try {
            if (turn != null && !take.done) {
                stats.requested(false, System.nanoTime() - waitFrom);
                flush(take.owner);
            } else {
                stats.requested(true, System.nanoTime() - waitFrom);
            }
        } finally {
            if (turn != null) {
                turn.close();
            }
            life.publishPending();
        }
        if (take.failure != null) {
            throw take.failure;
        }
        return take.result;
    }

    /**
     * After releases: server locks nobody needs go, in one round trip; returns when any in flight went too,
     * or when a batch that began after the call (and so carried these releases) has ended.
     */
    void settle(LockOwner caller) throws SQLException {
        long ticket = link.releaseTicket();
        long waitFrom = System.nanoTime();
        SessionTurn turn = link.awaitTurn(() -> link.servedUpTo(ticket));
        stats.requested(turn == null, System.nanoTime() - waitFrom);
        try {
            if (turn != null) {
                flush(caller);
            }
        } finally {
            if (turn != null) {
                turn.close();
            }
            life.publishPending();
        }
    }

    /** True when a settle has anything to send now. */
    boolean settleDue() {
        return table.surplusDue(mine) || (link.pins() && table.serverHoldsNothing() && link.isOpen());
    }

    /** True when a round trip is on the wire now (a release in it must be answered before an owner is gone). */
    boolean busy() {
        return link.busy();
    }

    boolean isOpen() {
        return link.isOpen();
    }

    /** The holder is lost: every take still queued fails with it. */
    void failQueued(SQLException failure) {
        for (LockRequest t; (t = takes.poll()) != null; ) {
            t.fail(failure);
        }
        link.wakeAnswered(); // their threads wait for the turn no more: they return with the failure now
    }

    /**
     * Under io: one round trip for everything due: the releases of server locks nobody needs, then every
     * queued take (one per key: a second on the same key decides again after this one). Releases of keys that
     * live on waiting sessions go to those sessions first. A failure fails every take of the batch (their
     * owners are not told again later) and is the holder's loss.
     */
    private void flush(LockOwner caller) throws SQLException {
        for (int round = 0; round < 3; round++) {
            long serves = link.batchBegins(); // releases made before this are in the table's surplus now
            List<LockRequest> batch = new ArrayList<>();
            Set<AdvisoryKey> batchKeys = new HashSet<>();
            for (LockRequest t; (t = takes.poll()) != null; ) {
                if (t.owner.isClosed()) {
                    t.fail(new SQLException(EmulateMessages.CLOSED, "08003"));
                    continue;
                }
                Answer.ServerStep step = batchKeys.add(t.key) ? table.stillNeedsServer(t.owner, t.key, t.shared,
                        t.tryLock, t.queued, t.probe, link) : Answer.ServerStep.NOT_NEEDED;
                if (step == Answer.ServerStep.NOT_NEEDED) {
                    t.decideAgain();
                } else {
                    t.grantedAtOnce = step == Answer.ServerStep.GRANTED_AT_ONCE;
                    batch.add(t);
                }
            }
            List<ServerLock> onMain = new ArrayList<>();
            List<ServerLock> onWaiters = new ArrayList<>();
            for (ServerLock l : table.surplus(mine)) {
                (l.on == link ? onMain : onWaiters).add(l);
            }
            if (!onWaiters.isEmpty()) {
                waits.release(onWaiters, caller); // first: a take in this batch may be for a key a waiting session lets go of
            }
            boolean refusedGrant = false;
            if (!batch.isEmpty() || !onMain.isEmpty()) {
                refusedGrant = send(batch, onMain, caller);
            } else if (link.pins() && link.pinned() && !table.backendHolds(link)) {
                unpin(caller);
            }
            link.batchEnded(serves); // who this round answered goes on now, not after the rounds that follow
            if (!refusedGrant && !table.surplusDue(mine)) {
                return;
            }
        }
    }

    /** True when a server lock taken for an owner could not be granted (it is surplus now). */
    private boolean send(List<LockRequest> batch, List<ServerLock> releases, LockOwner caller) throws SQLException {
        StringBuilder list = new StringBuilder();
        int columns = 0;
        for (ServerLock l : releases) {
            list.append(columns++ == 0 ? "" : ", ").append(l.shared ? "pg_catalog.pg_advisory_unlock_shared("
                    : "pg_catalog.pg_advisory_unlock(").append(l.key.sqlArguments()).append(")::text");
        }
        for (LockRequest t : batch) {
            list.append(columns++ == 0 ? "" : ", ").append(sql(t));
        }
        if (link.pins() && link.pinned() && batch.isEmpty() && !table.backendHolds(link)) {
            unpin(caller); // the last releases: everything goes, and the pooled server with it
            return false;
        }
        String[] answers;
        long start = System.nanoTime();
        boolean neededServer = link.pins() && !link.pinned();
        boolean nothingToLose = releases.isEmpty() && !table.backendHolds(link);
        boolean usedBefore = link.answered();
        try {
            answers = link.select(list.toString(), columns);
            stats.sent(batch.size(), releases.size(), System.nanoTime() - start);
        } catch (SQLException | RuntimeException e) {
            boolean closedByUs = e instanceof HolderSession.ClosedByHolder;
            if (!nothingToLose || (!usedBefore && !closedByUs) || !HolderLife.brokenConnection(e)) {
                throw life.lost(e, batch, caller);
            }
            // an idle main session that died meanwhile (a restart, a terminated backend) or that the holder
            // closed (idle for its linger): it held nothing, so nothing is lost; its takes decide again, and the
            // next opens a fresh one (outside our locks)
            link.close();
            for (LockRequest t : batch) {
                t.decideAgain();
            }
            return false;
        }
        if (neededServer && System.nanoTime() - start > STARVED_NANOS) {
            life.toldStarved(System.nanoTime() - start);
        }
        boolean refused = false;
        int seal = link.seal();
        for (int i = 0; i < batch.size(); i++) {
            LockRequest t = batch.get(i);
            boolean got = t.grantedAtOnce || "true".equals(answers[releases.size() + i]);
            if (t.probe || !got) {
                t.answer(got); // a probe took and let go in one statement: nothing to record
            } else if (table.serverTook(t.owner, t.key, t.shared, link, seal, t.tx, t.level, t.queued)) {
                t.answer(true);
            } else if (t.owner.isClosed()) {
                refused = true;
                t.fail(new SQLException(EmulateMessages.CLOSED, "08003"));
            } else {
                refused = true;
                t.decideAgain();
            }
        }
        try {
            link.afterSelect(table.backendHolds(link));
        } catch (SQLException | RuntimeException e) {
            throw life.lost(e, new ArrayList<>(0), caller);
        }
        return refused;
    }

    private static String sql(LockRequest t) {
        String k = t.key.sqlArguments();
        if (t.probe) {
            String m = t.shared ? "_shared(" : "(";
            return "(pg_catalog.pg_try_advisory_lock" + m + k + ") AND pg_catalog.pg_advisory_unlock" + m + k + "))::text";
        }
        return (t.grantedAtOnce ? "pg_catalog.pg_advisory_lock_shared(" : t.shared
                ? "pg_catalog.pg_try_advisory_lock_shared(" : "pg_catalog.pg_try_advisory_lock(") + k + ")::text";
    }

    private void unpin(LockOwner caller) throws SQLException {
        try {
            link.unpin();
        } catch (SQLException | RuntimeException e) {
            throw life.lost(e, new ArrayList<>(0), caller);
        }
    }

    /**
     * A server acquisition some owner waits for, sent in the next round trip of the holder's main session by
     * whichever thread holds its {@code io} lock then (owners share round trips instead of queueing for them).
     * Written under {@code io}; read by its owner once {@link #done} says it was answered.
     */
    static final class LockRequest {
        /** What the server said to a take, or that the table must decide again (it changed meanwhile). */
        enum Result { GRANTED, REFUSED, DECIDE_AGAIN }

        final LockOwner owner;
        final AdvisoryKey key;
        final boolean shared;
        final boolean tryLock;
        final TransactionId tx;
        final int level;
        /** The owner is in the key's queue (it waited locally before). */
        final boolean queued;
        /** Only asks whether the key is free now (taken and let go in the same statement); nothing is granted. */
        final boolean probe;
        /** A blocking shared request on a backend that holds the key exclusively: PostgreSQL grants it at once. */
        boolean grantedAtOnce;
        /** Written last, after the result or the failure: read by its owner's thread without the turn. */
        volatile boolean done;
        Result result;
        SQLException failure;

        LockRequest(LockOwner owner, AdvisoryKey key, boolean shared, boolean tryLock, TransactionId tx, int level, boolean queued,
             boolean probe) {
            this.owner = owner;
            this.key = key;
            this.shared = shared;
            this.tryLock = tryLock;
            this.tx = tx;
            this.level = level;
            this.queued = queued;
            this.probe = probe;
        }

        void fail(SQLException e) {
            failure = e;
            done = true;
        }

        void decideAgain() {
            result = Result.DECIDE_AGAIN;
            done = true;
        }

        void answer(boolean got) {
            result = got ? Result.GRANTED : Result.REFUSED;
            done = true;
        }
    }
}
