package io.lockhygiene.internal.locktable;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

/** PostgreSQL's advisory semantics among owners of one process (server state included), exactly. */
class LockTableTest {
    private static final Predicate<LockTable.Backend> ANY_BACKEND = b -> true;
    private final LockTable table = new LockTable();
    private final LockOwner a = LockOwner.ofConnection("a", null);
    private final LockOwner b = LockOwner.ofConnection("b", null);
    private final LockOwner c = LockOwner.ofConnection("c", null);
    private final AdvisoryKey k = AdvisoryKey.bigint(7);
    private final Backend main = new Backend("main", 11);
    private final Backend waiting = new Backend("waiting", 22);

    private static final class Backend implements LockTable.Backend {
        final String name;
        final int seal;

        Backend(String name, int seal) {
            this.name = name;
            this.seal = seal;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    /** A take as the holder makes it: the table's verdict, then the server's (on {@code on}) when it asks for one. */
    private void take(LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level, Backend on) {
        Answer answer = table.request(owner, key, shared, true, tx, level, false, false);
        if (answer.verdict == Answer.Verdict.SERVER) {
            assertTrue(table.serverTook(owner, key, shared, on, on.seal, tx, level, false));
        } else {
            assertEquals(Answer.Verdict.GRANTED, answer.verdict, answer.verdict + " for " + owner);
        }
    }

    private void take(LockOwner owner, AdvisoryKey key, boolean shared, TransactionId tx, int level) {
        take(owner, key, shared, tx, level, main);
    }

    private Answer.Verdict tryNow(LockOwner owner, AdvisoryKey key, boolean shared) {
        Answer answer = table.request(owner, key, shared, true, null, 0, false, false);
        if (answer.verdict == Answer.Verdict.GRANTED) {
            table.unlock(owner, key, shared); // asked, not kept
        }
        return answer.verdict;
    }

    @Test
    void exclusiveConflictsWithAnyOtherOwnerNeverWithItself() {
        take(a, k, false, null, 0);
        assertEquals(Answer.Verdict.GRANTED, tryNow(a, k, false), "its own lock stacks");
        assertEquals(Answer.Verdict.SERVER, tryNow(a, k, true), "its own exclusive does not stop its shared");
        Answer other = table.request(b, k, true, true, null, 0, false, false);
        assertEquals(Answer.Verdict.REFUSED, other.verdict);
        assertSame(a, other.blocker);
        assertEquals(Answer.Verdict.REFUSED, tryNow(b, k, false));
    }

    @Test
    void sharedAllowsSharedOnly() {
        take(a, k, true, null, 0);
        assertEquals(Answer.Verdict.GRANTED, tryNow(b, k, true), "the server holds the shared mode already");
        assertEquals(Answer.Verdict.REFUSED, tryNow(b, k, false));
    }

    @Test
    void sessionHoldsStackAndUnlockOneAtATime() {
        take(a, k, false, null, 0);
        take(a, k, false, null, 0);
        assertTrue(table.unlock(a, k, false));
        assertFalse(table.surplusDue(ANY_BACKEND));
        assertTrue(table.surplus(ANY_BACKEND).isEmpty(), "still held once: the server keeps it");
        assertTrue(table.unlock(a, k, false));
        assertFalse(table.unlock(a, k, false), "PostgreSQL: you don't own a lock");
        assertTrue(table.surplusDue(ANY_BACKEND));
        List<ServerLock> surplus = table.surplus(ANY_BACKEND);
        assertEquals(1, surplus.size());
        assertSame(main, surplus.get(0).on);
        assertTrue(table.serverHoldsNothing());
        assertFalse(table.holdsAnything(a));
        assertFalse(table.anyoneHolds());
    }

    @Test
    void keySpacesNeverMeet() {
        take(a, AdvisoryKey.bigint(7), false, null, 0);
        assertEquals(Answer.Verdict.SERVER, tryNow(b, AdvisoryKey.pair(0, 7), false));
        assertEquals(AdvisoryKey.pair(0, 7), AdvisoryKey.pair(0, 7));
        assertFalse(AdvisoryKey.pair(0, 7).equals(AdvisoryKey.bigint(7)));
    }

    @Test
    void unlockNeverReleasesTransactionHolds() {
        TransactionId tx = new TransactionId();
        take(a, k, false, tx, 0);
        assertFalse(table.unlock(a, k, false));
        table.unlockAll(a);
        assertEquals(Answer.Verdict.REFUSED, tryNow(b, k, true));
        table.releaseTransaction(tx, 0);
        assertEquals(1, table.surplus(ANY_BACKEND).size());
        assertEquals(Answer.Verdict.SERVER, tryNow(b, k, true));
    }

    @Test
    void rollbackToSavepointReleasesDeeperLevelsOnlyAndReleaseMerges() {
        TransactionId tx = new TransactionId();
        AdvisoryKey k2 = AdvisoryKey.bigint(8);
        take(a, k, false, tx, 0);
        take(a, k2, false, tx, 1);
        table.releaseTransaction(tx, 1);
        assertEquals(Answer.Verdict.REFUSED, tryNow(b, k, false));
        table.surplus(ANY_BACKEND);
        assertEquals(Answer.Verdict.SERVER, tryNow(b, k2, false));
        take(a, k2, false, tx, 2);
        table.mergeTransactionLevel(tx, 2);
        table.releaseTransaction(tx, 2);
        assertEquals(Answer.Verdict.REFUSED, tryNow(b, k2, false), "merged into level 1: survives a rollback to level 2");
        table.releaseTransaction(tx, 1);
        assertEquals(Answer.Verdict.GRANTED, tryNow(b, k2, false), "free here, and the server still has it");
        table.surplus(ANY_BACKEND);
        assertEquals(Answer.Verdict.SERVER, tryNow(b, k2, false), "released there too");
        table.releaseTransaction(tx, 0);
        assertFalse(table.holdsAnything(a));
    }

    @Test
    void serverHoldsEachModeSomeOwnerHoldsOnTheBackendThatTookIt() {
        take(a, k, false, null, 0);
        assertSame(main, table.request(a, k, true, true, null, 0, false, false).home, "the other mode's session");
        take(a, k, true, null, 0, main);
        assertTrue(table.unlock(a, k, false));
        List<ServerLock> surplus = table.surplus(ANY_BACKEND);
        assertEquals(1, surplus.size());
        assertFalse(surplus.get(0).shared, "the exclusive goes, the shared stays");
        assertFalse(table.serverHoldsNothing());
        assertTrue(table.backendHolds(main));
        assertFalse(table.backendHolds(waiting));
    }

    @Test
    void aSecondCopyOfAModeOnTheServerIsReleasedWithTheSurplus() {
        take(a, k, true, null, 0, main);
        assertTrue(table.serverTook(b, k, true, waiting, waiting.seal, null, 0, false), "b gets it");
        List<ServerLock> surplus = table.surplus(ANY_BACKEND);
        assertEquals(1, surplus.size(), "the copy on the waiting session is not needed: the main session has it");
        assertSame(waiting, surplus.get(0).on);
        assertFalse(table.backendHolds(waiting));
    }

    @Test
    void goneOwnerReleasesEverythingAndReportsSessionHolds() {
        take(a, k, false, null, 0);
        take(a, k, false, null, 0);
        take(a, AdvisoryKey.pair(1, 2), true, new TransactionId(), 0);
        List<SessionHold> held = table.releaseOwner(a, true);
        assertEquals(1, held.size());
        assertEquals(2, held.get(0).count);
        assertTrue(a.isClosed(), "for good: it takes nothing any more");
        assertEquals(2, table.surplus(ANY_BACKEND).size());
        assertTrue(table.serverHoldsNothing());
        assertEquals(List.of(), table.owners());
    }

    @Test
    void aWaitCycleIsADeadlockAndAReleasedLockEndsIt() {
        AdvisoryKey k2 = AdvisoryKey.bigint(8);
        AdvisoryKey k3 = AdvisoryKey.bigint(9);
        take(b, k, false, null, 0);
        take(c, k2, false, null, 0);
        take(a, k3, false, null, 0);
        assertEquals(Answer.Verdict.WAIT, table.request(a, k, false, false, null, 0, false, false).verdict);
        assertEquals(Answer.Verdict.WAIT, table.request(b, k2, false, false, null, 0, false, false).verdict);
        Answer cycle = table.request(c, k3, false, false, null, 0, false, false);
        assertEquals(Answer.Verdict.DEADLOCK, cycle.verdict, "c waits for a, who waits for b, who waits for c");
        assertSame(a, cycle.blocker);
        assertSame(b, table.waitingFor(a));
        table.unlock(c, k2, false); // b's turn now: it waits for nobody
        assertNull(table.waitingFor(b));
        assertEquals(Answer.Verdict.WAIT, table.request(c, k3, false, false, null, 0, false, false).verdict,
                "no cycle left: who waits for whom is read from the table as it is");
    }

    @Test
    void aReleasedLockWithAQueuedOwnerStaysOnTheServerForIt() {
        take(a, k, false, null, 0);
        assertEquals(Answer.Verdict.WAIT, table.request(b, k, false, false, null, 0, false, false).verdict);
        assertTrue(table.unlock(a, k, false));
        assertTrue(table.surplus(ANY_BACKEND).isEmpty(), "handed over, no round trip");
        assertEquals(Answer.Verdict.GRANTED, table.request(b, k, false, false, null, 0, true, false).verdict);
        assertTrue(table.unlock(b, k, false));
        assertEquals(1, table.surplus(ANY_BACKEND).size(), "nobody needs it any more");
    }

    @Test
    void anOwnerThatGivesUpItsPlaceLetsTheServerLockGo() {
        take(a, k, false, null, 0);
        table.request(b, k, false, false, null, 0, false, false);
        assertTrue(table.unlock(a, k, false));
        assertTrue(table.surplus(ANY_BACKEND).isEmpty());
        table.leaveQueue(b, k);
        assertEquals(1, table.surplus(ANY_BACKEND).size(), "the waiter gave up: the server lock goes");
    }

    @Test
    void aRequestConflictingWithAQueuedOneWaitsBehindItAsInPostgreSql() {
        take(a, k, true, null, 0);
        assertEquals(Answer.Verdict.WAIT, table.request(b, k, false, false, null, 0, false, false).verdict);
        Answer shared = table.request(c, k, true, true, null, 0, false, false);
        assertEquals(Answer.Verdict.REFUSED, shared.verdict, "a shared try is refused behind a queued exclusive");
        assertSame(b, shared.blocker);
        assertEquals(Answer.Verdict.GRANTED, table.request(a, k, true, false, null, 0, false, false).verdict,
                "a holds a mode b waits for: it goes first, as PostgreSQL lets it");
        assertSame(a, table.waitingFor(b));
        table.unlock(a, k, true);
        table.unlock(a, k, true);
        assertNull(table.waitingFor(b), "b's turn");
        Answer turn = table.request(b, k, false, false, null, 0, true, false);
        assertEquals(Answer.Verdict.SERVER, turn.verdict, "its exclusive mode is taken on the shared mode's session");
        assertSame(main, turn.home);
    }

    @Test
    void aSharedModeTheServerHoldsIsCheckedAgainstPostgresQueueOnDedicatedEndpoints() {
        take(a, k, true, null, 0);
        Answer check = table.request(b, k, true, false, null, 0, false, true);
        assertEquals(Answer.Verdict.SERVER, check.verdict);
        assertTrue(check.queueCheckOnly);
        assertSame(main, check.home);
        assertTrue(table.grantShared(b, k, null, 0), "PostgreSQL's queue let it through");
        assertTrue(table.holdsAnything(b));
    }

    @Test
    void sealsAreThoseOfTheSessionsTheOwnersLocksLiveOn() {
        assertNull(table.commitSeals(a), "a commit of an owner holding nothing checks nothing");
        take(a, k, false, null, 0, main);
        take(a, AdvisoryKey.bigint(8), false, null, 0, waiting);
        take(b, AdvisoryKey.bigint(9), true, null, 0, waiting);
        assertArrayEquals(new int[] {11, 22}, java.util.stream.IntStream.of(table.commitSeals(a)).sorted().toArray());
        assertArrayEquals(new int[] {22}, table.commitSeals(b));
        assertEquals(List.of(k, AdvisoryKey.bigint(8)).size(), table.keysOf(a).size());
        table.unlockAll(a);
        assertNull(table.commitSeals(a), "nothing left to check");
        assertTrue(table.anyoneHolds(), "b still holds");
        table.unlockAll(b);
        assertNull(table.commitSeals(b), "nobody holds anything");
    }

    @Test
    void aLossIsSeenOnceToldAndNeverBefore() {
        assertFalse(table.lossSeen());
        table.lossTold();
        assertTrue(table.lossSeen());
    }

    @Test
    void aChangeBetweenTheDecisionAndTheWaitIsNotMissed() throws Exception {
        take(a, k, false, null, 0);
        Answer w = table.request(b, k, false, false, null, 0, false, false);
        assertEquals(Answer.Verdict.WAIT, w.verdict);
        table.unlock(a, k, false); // before b sleeps: its generation moved on
        long start = System.nanoTime();
        table.awaitChange(w.generation, TimeUnit.SECONDS.toNanos(30));
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(25), "returned at once, not after 30 s");
        CountDownLatch asleep = new CountDownLatch(1);
        Thread waker = new Thread(() -> {
            try {
                asleep.await();
                table.wakeAll();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waker.start();
        Answer again = table.request(b, k, false, false, null, 0, true, false);
        asleep.countDown();
        table.awaitChange(again.generation, TimeUnit.SECONDS.toNanos(30));
        waker.join(10_000);
        assertFalse(waker.isAlive());
    }

    @Test
    void clearForgetsEverythingAndSaysWhoHeld() {
        take(a, k, false, null, 0);
        take(b, AdvisoryKey.bigint(8), true, new TransactionId(), 0);
        List<LockOwner> owners = table.clear();
        assertEquals(2, owners.size());
        assertTrue(table.serverHoldsNothing());
        assertFalse(table.anyoneHolds());
        assertEquals(Answer.Verdict.SERVER, tryNow(c, k, false));
    }

    @Test
    void pgLocksColumnsOfKeys() {
        AdvisoryKey big = AdvisoryKey.bigint(-1);
        assertEquals(0xFFFFFFFFL, big.classid());
        assertEquals(0xFFFFFFFFL, big.objid());
        assertEquals(1, big.objsubid());
        AdvisoryKey pair = AdvisoryKey.pair(-2, 3);
        assertEquals(0xFFFFFFFEL, pair.classid());
        assertEquals(3, pair.objid());
        assertEquals(2, pair.objsubid());
        assertEquals("-2, 3", pair.sqlArguments());
    }

    @Test
    void eachMainSessionTakesOnlyItsOwnSurplusAndTheOthersStaysDue() {
        Backend second = new Backend("second main", 33);
        AdvisoryKey k2 = AdvisoryKey.bigint(8);
        take(a, k, false, null, 0, main);
        take(b, k2, false, null, 0, second);
        table.unlock(a, k, false);
        table.unlock(b, k2, false);
        java.util.function.Predicate<LockTable.Backend> mainOnly = x -> x == main;
        java.util.function.Predicate<LockTable.Backend> secondOnly = x -> x == second;
        assertTrue(table.surplusDue(mainOnly));
        List<ServerLock> mine = table.surplus(mainOnly);
        assertEquals(1, mine.size());
        assertSame(main, mine.get(0).on);
        assertFalse(table.surplusDue(mainOnly), "the main session's own is gone");
        assertTrue(table.surplusDue(secondOnly), "the other session's stays due for its own turn");
        List<ServerLock> theirs = table.surplus(secondOnly);
        assertEquals(1, theirs.size());
        assertSame(second, theirs.get(0).on);
        assertTrue(table.serverHoldsNothing());
    }

    @Test
    void keysSpreadEvenlyAndAlwaysToTheSamePlace() {
        int[] counts = new int[4];
        for (long v = 1000; v < 2000; v++) {
            int at = AdvisoryKey.bigint(v).spread(4);
            assertEquals(at, AdvisoryKey.bigint(v).spread(4), "stable");
            counts[at]++;
        }
        for (int i = 0; i < 4; i++) {
            assertTrue(counts[i] > 200 && counts[i] < 300, "consecutive keys spread: " + java.util.Arrays.toString(counts));
        }
        assertEquals(0, AdvisoryKey.pair(1, 2).spread(1));
    }
}
