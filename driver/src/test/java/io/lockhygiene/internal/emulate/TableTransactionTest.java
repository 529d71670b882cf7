package io.lockhygiene.internal.emulate;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.lockhygiene.internal.locktable.TransactionHolds;
import io.lockhygiene.internal.locktable.TransactionId;
import io.lockhygiene.internal.sql.TransactionControl.Kind;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The table's view of one application transaction: its depth per savepoint, and what each command releases. */
class TableTransactionTest {
    /** What the transaction asked of its holds, as "release tx@level" and "merge tx@level". */
    private static final class Recorded implements TransactionHolds {
        final List<String> asked = new ArrayList<>();
        TransactionId tx;

        @Override
        public void releaseTransaction(TransactionId t, int level) {
            asked.add("release " + (t == tx ? "tx" : String.valueOf(t)) + "@" + level);
        }

        @Override
        public void mergeTransactionLevel(TransactionId t, int level) {
            asked.add("merge " + (t == tx ? "tx" : String.valueOf(t)) + "@" + level);
        }
    }

    @Test
    void locksAreTakenAtTheDepthOfTheSavepointsSetSinceItBegan() throws Exception {
        TableTransaction t = new TableTransaction();
        Recorded holds = new Recorded();
        assertFalse(t.active());
        holds.tx = t.current();
        assertTrue(t.active());
        assertSame(holds.tx, t.current(), "one transaction until it ends");
        assertEquals(0, t.level());
        t.follow(Kind.SAVEPOINT, "text:a", holds);
        assertEquals(1, t.level());
        t.follow(Kind.SAVEPOINT, "text:b", holds);
        assertEquals(2, t.level());
        t.follow(Kind.ROLLBACK_TO, "text:b", holds);
        assertEquals(2, t.level(), "ROLLBACK TO keeps the savepoint itself");
        t.follow(Kind.ROLLBACK_TO, "text:a", holds);
        assertEquals(1, t.level(), "ROLLBACK TO a destroys the savepoints set after a");
        t.follow(Kind.SAVEPOINT, "text:c", holds);
        t.follow(Kind.RELEASE, "text:a", holds);
        assertEquals(0, t.level(), "RELEASE a also releases the savepoints set after it");
        assertEquals(List.of("release tx@2", "release tx@1", "merge tx@1"), holds.asked);
    }

    @Test
    void aSavepointNameUsedTwiceIsTheLatestOne() throws Exception {
        TableTransaction t = new TableTransaction();
        Recorded holds = new Recorded();
        holds.tx = t.current();
        t.follow(Kind.SAVEPOINT, "text:s", holds);
        t.follow(Kind.SAVEPOINT, "text:s", holds);
        t.follow(Kind.ROLLBACK_TO, "text:s", holds);
        t.follow(Kind.RELEASE, "text:s", holds);
        assertEquals(1, t.level(), "released the second s; the first stays, as in PostgreSQL");
        assertEquals(List.of("release tx@2", "merge tx@2"), holds.asked);
    }

    @Test
    void aSavepointSetBeforeTheFirstLockRollsBackAllOfThem() throws Exception {
        TableTransaction t = new TableTransaction();
        Recorded holds = new Recorded();
        t.follow(Kind.SAVEPOINT, "text:early", holds);
        holds.tx = t.current();
        assertEquals(0, t.level(), "the table's transaction begins after it");
        t.follow(Kind.ROLLBACK_TO, "text:early", holds);
        assertEquals(List.of("release tx@0"), holds.asked);
        t.follow(Kind.RELEASE, "text:unknown", holds);
        assertEquals(List.of("release tx@0"), holds.asked, "releasing a savepoint the table never saw merges nothing");
    }

    @Test
    void endsErrorsAndForgetting() throws Exception {
        TableTransaction t = new TableTransaction();
        Recorded holds = new Recorded();
        t.end(holds);
        t.innermostFailed(holds);
        assertEquals(List.of(), holds.asked, "nothing begun, nothing released");
        holds.tx = t.current();
        t.follow(Kind.SAVEPOINT, "text:a", holds);
        t.innermostFailed(holds);
        assertTrue(t.active(), "an error aborts the innermost level only");
        t.end(holds);
        assertFalse(t.active());
        assertEquals(List.of("release tx@1", "release tx@0"), holds.asked);
        TransactionId next = t.current();
        assertNotSame(holds.tx, next, "a new transaction after the end");
        assertEquals(0, t.level());
        t.forget();
        assertFalse(t.active());
        t.end(holds);
        assertEquals(2, holds.asked.size(), "a forgotten transaction releases nothing (the holder did already)");
    }
}
