package io.lockhygiene.it.emulate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.Sql;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A session lock taken inside a transaction on the application's own server moves to the lock holder at
 * the transaction's end (released with the COMMIT, taken again by the holder). For PostgreSQL the owner
 * held it all along: another connection of the process, trying the key as fast as it can meanwhile, must
 * never get it. (Four Flyway migrators hit that window once in about twenty full-suite runs before the
 * hand-over was registered.)
 */
@ExtendWith(TestBedExtension.class)
class HandOverTest {
    private final TestBed bed = TestBed.shared();

    /** Rounds of: A takes the key inside a write transaction, commits, keeps it a moment, unlocks. */
    private int stolenWhileHeld(Supplier<Connection> open, long key, int rounds) throws Exception {
        AtomicBoolean aHolds = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger stolen = new AtomicInteger();
        try (Connection setup = bed.connect(Route.DIRECT); Statement s = setup.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS handover_t (i int)");
        }
        try (Connection a = open.get(); Connection b = open.get(); Statement as = a.createStatement()) {
            Thread contender = new Thread(() -> {
                try (Statement bs = b.createStatement()) {
                    while (!stop.get()) {
                        if (Sql.bool(bs, "SELECT pg_try_advisory_lock(" + key + ")")) {
                            if (aHolds.get()) {
                                stolen.incrementAndGet();
                            }
                            Sql.bool(bs, "SELECT pg_advisory_unlock(" + key + ")");
                        }
                    }
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }, "handover-contender");
            contender.start();
            try {
                for (int i = 0; i < rounds; i++) {
                    a.setAutoCommit(false);
                    as.execute("INSERT INTO handover_t VALUES (" + i + ")"); // the transaction is open on A's server
                    if (!Sql.bool(as, "SELECT pg_try_advisory_lock(" + key + ")")) {
                        a.rollback();
                        a.setAutoCommit(true);
                        continue;
                    }
                    aHolds.set(true);
                    a.commit(); // emulate: the lock moves to the holder here
                    a.setAutoCommit(true);
                    Thread.sleep(1);
                    aHolds.set(false);
                    as.execute("SELECT pg_advisory_unlock(" + key + ")");
                }
            } finally {
                stop.set(true);
                contender.join(30_000);
            }
        }
        return stolen.get();
    }

    @Test
    void anotherOwnerNeverGetsAKeyOnItsWayToTheHolder() throws Exception {
        int plain = stolenWhileHeld(() -> connect(false), 997_001, 40);
        System.out.println("[hand-over] plain pgjdbc: the key was taken while held " + plain + " times in 40 rounds");
        assertTrue(plain > 0, "control: through the pooler plain pgjdbc loses exclusion");
        for (var l : bed.admin().heldAdvisoryLocks()) {
            bed.admin().terminateHoldersOf(l.key());
        }
        int emulate = stolenWhileHeld(() -> connect(true), 997_002, 200);
        System.out.println("[hand-over] emulate: the key was taken while held " + emulate + " times in 200 rounds");
        assertEquals(0, emulate);
    }

    private Connection connect(boolean lockHygiene) {
        try {
            return lockHygiene ? bed.connectLockHygiene(Route.TRANSACTION_POOL, "lockhygiene.mode=emulate")
                    : bed.connect(Route.TRANSACTION_POOL);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
