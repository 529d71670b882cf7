package io.lockhygiene.internal.log;

import io.lockhygiene.internal.locktable.AdvisoryKey;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * emulate's sentences as a user reads them, whole. A split or a rename that damages one ("This
 * holder.connection has been closed.") fails here by its text.
 */
class EmulateMessagesTest {
    private static final AdvisoryKey KEY = AdvisoryKey.bigint(42);

    @Test
    void errorsThatStandForPostgreSqlsKeepItsWordsFirst() {
        assertEquals("This connection has been closed.", EmulateMessages.CLOSED);
        assertEquals("canceling statement due to user request", EmulateMessages.CANCELLED);
        assertEquals("canceling statement due to lock timeout (LockHygiene: lockhygiene.lockTimeout=500ms)",
                EmulateMessages.lockTimeout(500));
        assertEquals("deadlock detected (LockHygiene, lockhygiene.mode=emulate: connection lh-1 waits for advisory lock"
                + " 42 held by connection lh-2, which waits for it)",
                EmulateMessages.deadlockHere("connection lh-1", KEY, "connection lh-2"));
        assertEquals("deadlock detected (LockHygiene, lockhygiene.mode=emulate: connection lh-1 waits for advisory lock"
                + " 42 held by another process, which waits for a lock this process holds for connection lh-1"
                + " (advisory lock 7))", EmulateMessages.deadlockAcrossProcesses("connection lh-1", KEY,
                "connection lh-1 (advisory lock 7)"));
    }

    @Test
    void refusalNamesTheShapeTheFixAndTheSql() {
        assertEquals("LockHygiene (lockhygiene.mode=emulate) refused a statement with advisory calls: session-level"
                + " advisory calls in a batch. Behind a transaction pooler its calls cannot be answered exactly as"
                + " PostgreSQL would, so nothing was sent. Fix: compute the key first and take the lock in a statement"
                + " of its own (SELECT id FROM jobs WHERE ...; then SELECT pg_try_advisory_lock(?)), with the key a"
                + " literal, a bind parameter or an expression of them; or use pg_advisory_xact_lock inside a"
                + " transaction, which needs no emulation. SQL: SELECT pg_advisory_lock(1)",
                EmulateMessages.refused("session-level advisory calls in a batch", "SELECT pg_advisory_lock(1)"));
    }

    @Test
    void aLostHolderSaysWhatIsGoneAndWhatToDo() {
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the process's lock holder for db:5432/app lost its server"
                + " connection (java.sql.SQLException: gone); the advisory locks it held are released, so other clients"
                + " may now take them. Whatever they protected is no longer exclusive: stop that work, take the locks"
                + " again, and start it over.", EmulateMessages.holderLost("db:5432/app", "java.sql.SQLException: gone"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder of connection lh-3 lost its server"
                + " connection; the advisory locks it held for it are gone. Take them again.",
                EmulateMessages.lockLost("connection lh-3"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder lost its server connection; the advisory"
                + " locks it held are gone. Take them again.", EmulateMessages.lockLost(null));
    }

    @Test
    void placementMessagesGiveTheArithmeticAndTheFix() {
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app connects to the server itself at"
                + " 10.0.0.5:5432 (lockhygiene.holderUrl=auto, with HikariCP's configuration), so it takes none of the"
                + " pooler's servers",
                EmulateMessages.holderOnServer("app", "10.0.0.5", "5432", "HikariCP's configuration", true));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app connects to the server itself at"
                + " 10.0.0.5:5432 (lockhygiene.holderUrl=auto, with pgjdbc's PGSimpleDataSource), so it takes none of"
                + " the application's pooled connections",
                EmulateMessages.holderOnServer("app", "10.0.0.5", "5432", "pgjdbc's PGSimpleDataSource", false));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app keeps one connection of the"
                + " application's own pool: nothing tells how the application connects. That connection is the pool's"
                + " one fewer for as long as the process runs, and if it is lost while the application's threads hold"
                + " every other one, the next lock waits for the pool's connection timeout and fails (08001). Fix:"
                + " lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/<database> (the application's user and"
                + " password are used unless the URL names its own), or tell the wrapper how the pool connects: new"
                + " LockHygieneDataSource(pool, settings).connectsTo(url, user, password).",
                EmulateMessages.holderSharesPool("app", "nothing tells how the application connects"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app shares the application's pool"
                + " and got no connection from it (timed out): every connection was in use, some by threads waiting for"
                + " this lock. Fix: lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/<database>, so that the"
                + " holder connects on its own, or tell the wrapper how the pool connects"
                + " (LockHygieneDataSource.connectsTo).", EmulateMessages.holderCannotBorrow("app", "timed out"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app goes through the application's"
                + " pooler: the application's URL: jdbc:postgresql://10.0.0.5:5432/app did not accept the holder's"
                + " connection (refused)."
                + " Then each process's holder takes one pooled server while it holds locks, so N processes holding"
                + " locks at once need N servers of the pool beyond the application's own; with a pool of S servers,"
                + " N >= S stops everything. Fix: give the holder its own endpoint,"
                + " lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/<database>, or a PgBouncer database entry"
                + " with pool_mode=session (sized one server per process); lockhygiene.holderUrl=pooler silences this.",
                EmulateMessages.holderThroughPooler("app", "the application's URL: jdbc:postgresql://10.0.0.5:5432/app"
                        + " did not accept the holder's connection (refused)"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder for app waited 5012 ms for a server of"
                + " the application's transaction pooler. Every process's holder takes one pooled server while it holds"
                + " locks, so with N processes holding locks at once and a pool of S servers, N >= S leaves nothing for"
                + " the application's own statements (they time out with query_wait_timeout). Fix:"
                + " lockhygiene.holderUrl pointing at the PostgreSQL server itself, or at a PgBouncer database entry"
                + " with pool_mode=session sized one server per process.", EmulateMessages.holderStarved("app", 5012));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): lockhygiene.holderUrl=jdbc:postgresql://other/app reaches"
                + " another database than the application (cluster 1, database 16384; the application's is cluster 2,"
                + " database 16384), where its locks would exclude nobody. Point it at the application's own"
                + " PostgreSQL server and database, or at a PgBouncer entry with pool_mode=session for them.",
                EmulateMessages.holderUrlOtherDatabase("jdbc:postgresql://other/app", "cluster 1, database 16384",
                        "cluster 2, database 16384"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): lockhygiene.holderUrl=jdbc:postgresql://bouncer/app is a"
                + " transaction pooler (its backend changed between two statements): a lock holder needs a session of"
                + " its own. Use the PostgreSQL server itself, or a PgBouncer database entry with pool_mode=session.",
                EmulateMessages.holderUrlTransactionPooler("jdbc:postgresql://bouncer/app"));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the lock holder cannot connect to"
                + " lockhygiene.holderUrl=jdbc:postgresql://db:1/app: Connection refused. Fix the URL, or its user and"
                + " password (in the URL; otherwise the application's own are used).",
                EmulateMessages.holderUrlUnreachable("jdbc:postgresql://db:1/app", "Connection refused"));
    }

    @Test
    void aFencedCommitSaysItRolledBackAndWhichLocksWent() {
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the transaction was rolled back, not committed: the"
                + " advisory lock (42) of lh-3 ended with its lock holder's session before the commit, so another client"
                + " may hold it now. Take the lock again and redo the work.",
                EmulateMessages.commitFenced("lh-3", List.of(KEY)));
        assertEquals("LockHygiene (lockhygiene.mode=emulate): the transaction was rolled back, not committed: the"
                + " advisory locks (42, 1, 2) of thread \"w\" ended with its lock holder's session before the commit, so"
                + " another client may hold them now. Take the lock again and redo the work.",
                EmulateMessages.commitFenced("thread \"w\"", List.of(KEY, "1, 2")));
    }

    @Test
    void anUnlockOfNothingSaysWhoseLockItIsAndTheFixForThatOwner() {
        String head = "an advisory unlock at Jobs.run(Jobs.java:42) returned false (lockhygiene.mode=emulate answers it"
                + " as PostgreSQL answers a session that does not hold the lock: \"you don't own a lock of type"
                + " ExclusiveLock\"): ";
        assertEquals(head + "thread \"worker-1\" does not hold it. Behind this pool a lock belongs to the thread that"
                + " took it, so an unlock on another thread, or a second unlock, finds nothing to release. Fix: unlock on"
                + " the thread that locked, once per lock.",
                EmulateMessages.unlockNotHeld("Jobs.run(Jobs.java:42)", "you don't own a lock of type ExclusiveLock",
                        "thread \"worker-1\"", true));
        assertEquals(head + "lh-7 does not hold it. Here a lock belongs to the connection that took it, as on"
                + " PostgreSQL, so an unlock on another connection (a pool's next borrow, say) or a second unlock finds"
                + " nothing to release. Fix: lock and unlock on one connection; or, where a pool lends the connections,"
                + " wrap the pool's DataSource in LockHygieneDataSource (the Spring Boot starter and the agent do it for"
                + " you), and a lock belongs to the thread across borrows.",
                EmulateMessages.unlockNotHeld("Jobs.run(Jobs.java:42)", "you don't own a lock of type ExclusiveLock",
                        "lh-7", false));
    }

    /** No sentence carries a Java field path (what a mechanical rename leaves behind: "holder.released"). */
    @Test
    void noSentenceCarriesACodePath() {
        List<String> all = List.of(EmulateMessages.CLOSED, EmulateMessages.CANCELLED, EmulateMessages.lockTimeout(1),
                EmulateMessages.deadlockHere("a", KEY, "b"), EmulateMessages.deadlockAcrossProcesses("a", KEY, "b"),
                EmulateMessages.refused("why", "SQL"), EmulateMessages.holderLost("e", "c"), EmulateMessages.lockLost("o"),
                EmulateMessages.holderStarved("e", 1), EmulateMessages.holderOnServer("e", "h", "1", "s", true),
                EmulateMessages.holderThroughPooler("e", "r"), EmulateMessages.holderSharesPool("e", "r"),
                EmulateMessages.holderCannotBorrow("e", "x"), EmulateMessages.holderUrlUnreachable("u", "x"),
                EmulateMessages.holderUrlNoDriver("u"), EmulateMessages.holderUrlOtherDatabase("u", "a", "b"),
                EmulateMessages.holderUrlTransactionPooler("u"), EmulateMessages.holderUrlPoolingUnknown("u", 5, "x"),
                EmulateMessages.unlockNotHeld("s", "w", "o", true),
                EmulateMessages.unlockNotHeld("s", "w", "o", false), EmulateMessages.commitFenced("o", List.of(KEY)));
        Pattern codePath = Pattern.compile("\\b([a-z]+)\\.([a-z][A-Za-z]*)\\b");
        for (String m : all) {
            Matcher x = codePath.matcher(m);
            while (x.find()) {
                String word = x.group(1);
                assertFalse(!word.equals("lockhygiene") && !word.equals("pg_catalog"),
                        "a code path in a user's sentence: '" + x.group() + "' in: " + m);
            }
        }
    }
}
