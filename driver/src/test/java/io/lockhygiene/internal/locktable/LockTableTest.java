package io.lockhygiene.internal.locktable;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** PostgreSQL's advisory semantics among owners of one process (server state included). */
class LockTableTest {
    private final LockTable table = new LockTable();
    private final Object a = "a";
    private final Object b = "b";
    private final AdvisoryKey k = AdvisoryKey.bigint(7);

    private final Object backend = "main";

    private void take(Object owner, AdvisoryKey key, boolean shared, Object tx, int level) {
        if (table.serverNeeds(key, shared)) {
            table.serverTook(key, shared, backend);
        }
        table.grant(owner, key, shared, tx, level);
    }

    @Test
    void exclusiveConflictsWithAnyOtherOwnerNeverWithItself() {
        take(a, k, false, null, 0);
        assertNull(table.blocker(a, k, false));
        assertNull(table.blocker(a, k, true));
        assertSame(a, table.blocker(b, k, true));
        assertSame(a, table.blocker(b, k, false));
    }

    @Test
    void sharedAllowsSharedOnly() {
        take(a, k, true, null, 0);
        assertNull(table.blocker(b, k, true));
        assertSame(a, table.blocker(b, k, false));
    }

    @Test
    void sessionHoldsStackAndUnlockOneAtATime() {
        take(a, k, false, null, 0);
        take(a, k, false, null, 0);
        assertTrue(table.unlock(a, k, false));
        assertTrue(table.surplus().isEmpty(), "still held once: the server keeps it");
        assertTrue(table.unlock(a, k, false));
        assertFalse(table.unlock(a, k, false), "PostgreSQL: you don't own a lock");
        List<ServerLock> surplus = table.surplus();
        assertEquals(1, surplus.size());
        assertTrue(table.serverHoldsNothing());
    }

    @Test
    void keySpacesNeverMeet() {
        take(a, AdvisoryKey.bigint(7), false, null, 0);
        assertNull(table.blocker(b, AdvisoryKey.pair(0, 7), false));
        assertEquals(AdvisoryKey.pair(0, 7), AdvisoryKey.pair(0, 7));
        assertFalse(AdvisoryKey.pair(0, 7).equals(AdvisoryKey.bigint(7)));
    }

    @Test
    void unlockNeverReleasesTransactionHolds() {
        Object tx = new Object();
        take(a, k, false, tx, 0);
        assertFalse(table.unlock(a, k, false));
        table.unlockAll(a);
        assertSame(a, table.blocker(b, k, true));
        table.releaseTransaction(tx, 0);
        assertNull(table.blocker(b, k, true));
        assertEquals(1, table.surplus().size());
    }

    @Test
    void rollbackToSavepointReleasesDeeperLevelsOnlyAndReleaseMerges() {
        Object tx = new Object();
        AdvisoryKey k2 = AdvisoryKey.bigint(8);
        take(a, k, false, tx, 0);
        take(a, k2, false, tx, 1);
        table.releaseTransaction(tx, 1);
        assertSame(a, table.blocker(b, k, false));
        assertNull(table.blocker(b, k2, false));
        take(a, k2, false, tx, 2);
        table.mergeTransactionLevel(tx, 2);
        table.releaseTransaction(tx, 2);
        assertSame(a, table.blocker(b, k2, false), "merged into level 1: survives a rollback to level 2");
        table.releaseTransaction(tx, 1);
        assertNull(table.blocker(b, k2, false));
    }

    @Test
    void serverHoldsEachModeSomeOwnerHolds() {
        take(a, k, false, null, 0);
        assertTrue(table.serverNeeds(k, true));
        assertSame(backend, table.serverHolder(k, false));
        take(a, k, true, null, 0);
        assertTrue(table.unlock(a, k, false));
        List<ServerLock> surplus = table.surplus();
        assertEquals(1, surplus.size());
        assertFalse(surplus.get(0).shared, "the exclusive goes, the shared stays");
        assertFalse(table.serverHoldsNothing());
    }

    @Test
    void goneOwnerReleasesEverythingAndReportsSessionHolds() {
        take(a, k, false, null, 0);
        take(a, k, false, null, 0);
        take(a, AdvisoryKey.pair(1, 2), true, new Object(), 0);
        List<SessionHold> held = table.releaseOwner(a);
        assertEquals(1, held.size());
        assertEquals(2, held.get(0).count);
        assertEquals(2, table.surplus().size());
        assertTrue(table.serverHoldsNothing());
    }

    @Test
    void aWaitCycleIsADeadlockAndAReleasedLockEndsIt() {
        Object c = "c";
        AdvisoryKey k2 = AdvisoryKey.bigint(8);
        AdvisoryKey k3 = AdvisoryKey.bigint(9);
        take(b, k, false, null, 0);
        take(c, k2, false, null, 0);
        take(a, k3, false, null, 0);
        assertFalse(table.enqueue(a, k, false, b));
        assertFalse(table.enqueue(b, k2, false, c));
        assertTrue(table.enqueue(c, k3, false, a), "c waits for a, who waits for b, who waits for c");
        table.unlock(c, k2, false); // b's turn now: it waits for nobody
        assertNull(table.waitingFor(b));
        assertFalse(table.enqueue(c, k3, false, a), "no cycle left: who waits for whom is read from the table as it is");
    }

    @Test
    void aReleasedLockWithAQueuedOwnerStaysOnTheServerForIt() {
        take(a, k, false, null, 0);
        assertSame(a, table.blocker(b, k, false));
        assertFalse(table.enqueue(b, k, false, a));
        assertTrue(table.unlock(a, k, false));
        assertTrue(table.surplus().isEmpty(), "handed over, no round trip");
        assertNull(table.blockerInQueue(b, k, false));
        assertFalse(table.serverNeeds(k, false));
        table.dequeue(b, k);
        assertEquals(1, table.surplus().size(), "the waiter gave up: the server lock goes");
    }

    @Test
    void aRequestConflictingWithAQueuedOneWaitsBehindItAsInPostgreSql() {
        take(a, k, true, null, 0);
        assertFalse(table.enqueue(b, k, false, a)); // b waits for the exclusive mode
        Object c = "c";
        assertSame(b, table.blocker(c, k, true), "a shared request queues behind the exclusive one (waitMask)");
        assertSame(b, table.queuedConflict(c, k, true), "so a shared try is refused");
        assertNull(table.blocker(a, k, true), "a holds a mode b waits for: it goes first, as PostgreSQL lets it");
        assertSame(a, table.blockerInQueue(b, k, false));
        table.unlock(a, k, true);
        assertNull(table.blockerInQueue(b, k, false), "b's turn");
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
}
