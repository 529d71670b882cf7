package io.lockhygiene.it.r2dbc;

import static io.lockhygiene.it.r2dbc.R2dbcRoutes.TIMEOUT;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.begin;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.close;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.commit;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.guarded;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.one;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.open;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.plain;
import static io.lockhygiene.it.r2dbc.R2dbcRoutes.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.lockhygiene.events.EventType;
import io.lockhygiene.it.EventRecorder;
import io.lockhygiene.it.bed.R2dbcOptions;
import io.lockhygiene.it.bed.Route;
import io.lockhygiene.it.bed.TestBed;
import io.lockhygiene.it.bed.TestBedExtension;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Result;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * emulate for R2DBC through the transaction poolers: the answers PostgreSQL gives (a script run against direct
 * r2dbc-postgresql and through LockHygiene, compared statement by statement), mutual exclusion for reactive
 * workers (control: plain r2dbc-postgresql overlaps), a blocking lock that waits for another connection's unlock
 * without a thread of the event loop waiting, a lost holder session fencing the owner's commit, a close letting
 * go, and keys only the server can compute. Under BlockHound.
 */
@ExtendWith({TestBedExtension.class, BlockHoundExtension.class})
class R2dbcEmulateTest {
    private final TestBed bed = TestBed.shared();

    @Test
    void blockHoundIsWatching() {
        // a scheduler of its own: the error BlockHound throws can leave its worker unusable
        reactor.core.scheduler.Scheduler own = Schedulers.newParallel("blockhound-check", 1);
        try {
            Throwable e = assertThrows(Throwable.class, () -> Mono.fromCallable(() -> {
                Thread.sleep(1);
                return 1;
            }).subscribeOn(own).block(TIMEOUT), "a blocking call on a non-blocking thread fails here");
            assertTrue(e instanceof BlockingOperationError || e.getCause() instanceof BlockingOperationError, String.valueOf(e));
        } finally {
            own.dispose();
        }
    }

    /** Every shape of the script answered as PostgreSQL answers it: rows as read, update counts, notices. */
    @ParameterizedTest
    @EnumSource(value = Route.class, names = {"TRANSACTION_POOL", "PREPARED_TRANSACTION_POOL"})
    void answersAsPostgreSqlDoes(Route route) throws Exception {
        long k = route == Route.TRANSACTION_POOL ? 1_992_001 : 1_992_501;
        List<String> reference = script(plain(bed, Route.DIRECT), k);
        List<String> ours = script(guarded(bed, route, "lockhygiene.mode=emulate"), k);
        for (int i = 0; i < reference.size(); i++) {
            assertEquals(reference.get(i), ours.get(i), "statement " + (i + 1));
        }
        assertEquals(reference.size(), ours.size());
        assertEquals(List.of(), bed.admin().holdersOf(k));
        assertEquals(List.of(), bed.admin().holdersOf(k + 1));
    }

    /** Two connections of one program, the statements real code sends (r2dbc-migrate's, Kill Bill's isFree, ...). */
    private static List<String> script(ConnectionFactory cf, long k) {
        Connection a = open(cf);
        Connection b = open(cf);
        List<String> out = new ArrayList<>();
        try {
            int hi = (int) (k % 100_000);
            out.add(show(a, "select pg_try_advisory_lock($1, $2) as lock_result", hi, 7));
            out.add(show(b, "select pg_try_advisory_lock($1, $2) as lock_result", hi, 7));
            out.add(show(a, "select pg_advisory_lock($1)", k));
            out.add(show(a, "SELECT pg_try_advisory_lock(" + k + ")"));
            out.add(show(b, "select pg_try_advisory_lock_shared($1)", k));
            out.add(show(a, "select pg_advisory_unlock($1), pg_advisory_unlock($1) as again", k));
            out.add(show(a, "select pg_advisory_unlock($1)", k));
            out.add(show(b, "SELECT CASE WHEN pg_try_advisory_lock($1) THEN pg_advisory_unlock($1) ELSE FALSE END", k));
            out.add(show(b, "select pg_catalog.pg_advisory_lock_shared($1::bigint)", k + 1));
            out.add(show(a, "select pg_try_advisory_lock_shared($1)", k + 1));
            out.add(show(a, "select pg_advisory_unlock($1, $2)", hi, 7));
            out.add(show(b, "select pg_advisory_unlock_all()"));
            out.add(show(a, "select pg_advisory_unlock_all()"));
            out.add(show(a, "select pg_advisory_unlock($1)", k + 1));
            begin(a);
            out.add(show(a, "select pg_advisory_xact_lock($1)", k));
            out.add(show(b, "select pg_try_advisory_lock($1) as got", k));
            R2dbcRoutes.rollback(a);
            out.add(show(b, "select pg_try_advisory_lock($1) as got", k));
            out.add(show(b, "select pg_advisory_unlock($1)", k));
            io.r2dbc.spi.Statement nullKey = a.createStatement("select pg_try_advisory_lock($1)").bindNull(0, Long.class);
            out.add("a NULL key => " + Flux.from(nullKey.execute()).concatMap(r -> r.map((row, meta) -> String.valueOf(row.get(0))))
                    .collectList().block(TIMEOUT));
        } finally {
            close(b);
            close(a);
        }
        return out;
    }

    /** What r2dbc-postgresql shows of one statement: its segments, rows as get() and as text, counts, notices. */
    private static String show(Connection c, String sql, Object... args) {
        io.r2dbc.spi.Statement s = c.createStatement(sql);
        for (int i = 0; i < args.length; i++) {
            s.bind(i, args[i]);
        }
        try {
            return sql + " => " + Flux.from(s.execute()).concatMap(r -> r.flatMap(segment -> {
                if (segment instanceof Result.RowSegment) {
                    io.r2dbc.spi.Row row = ((Result.RowSegment) segment).row();
                    StringBuilder b = new StringBuilder("row");
                    for (io.r2dbc.spi.ColumnMetadata m : row.getMetadata().getColumnMetadatas()) {
                        Object v = row.get(m.getName());
                        b.append(' ').append(m.getName()).append('=').append(v)
                                .append(v == null ? "" : "(" + v.getClass().getSimpleName() + ")")
                                .append('/').append(row.get(m.getName(), String.class))
                                .append(" java ").append(m.getJavaType() == null ? null : m.getJavaType().getSimpleName());
                    }
                    return Mono.just(b.toString());
                }
                if (segment instanceof Result.UpdateCount) {
                    return Mono.just("count " + ((Result.UpdateCount) segment).value());
                }
                if (segment instanceof Result.Message) {
                    return Mono.just("notice " + ((Result.Message) segment).message());
                }
                return Mono.just("segment");
            })).collectList().block(TIMEOUT);
        } catch (R2dbcException e) {
            return sql + " => ERROR " + e.getSqlState();
        }
    }

    /** The workers under emulate: exclusion as PostgreSQL gives it; control: plain through the pooler. */
    @ParameterizedTest
    @EnumSource(value = Route.class, names = {"TRANSACTION_POOL", "PREPARED_TRANSACTION_POOL"})
    void workersGetMutualExclusion(Route route) throws Exception {
        long k = route == Route.TRANSACTION_POOL ? 1_992_002 : 1_992_502;
        ReactiveWorkers.Outcome control = ReactiveWorkers.tryLockJobUnlock(plain(bed, route), k, 6, 10);
        bed.admin().terminateHoldersOf(k);
        ReactiveWorkers.Outcome ours = ReactiveWorkers.tryLockJobUnlock(guarded(bed, route, "lockhygiene.mode=emulate"),
                k, 6, 10);
        System.out.println("[r2dbc emulate workers, " + route.label() + "] plain: " + control + "; emulate: " + ours);
        assertEquals(6, control.workersDone());
        assertEquals(6, ours.workersDone(), String.valueOf(ours));
        assertTrue(control.overlapping() + control.failedUnlocks() > 0, "control: the bug shows");
        assertTrue(ours.jobs() > 0);
        assertEquals(0, ours.overlapping(), "no two jobs at once");
        assertEquals(0, ours.failedUnlocks());
        assertEquals(0, ours.errors());
        assertEquals(List.of(), bed.admin().holdersOf(k), "nothing left");
    }

    /**
     * A blocking lock waits for the other connection's unlock, in the holder's queue, while the event loop keeps
     * serving: the waiting subscription never holds a Netty thread (BlockHound would fail it).
     */
    @Test
    void aBlockingLockWaitsWithoutAnEventLoopThread() throws Exception {
        long k = 1_992_003;
        ConnectionFactory cf = guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.mode=emulate");
        Connection a = open(cf);
        Connection b = open(cf);
        one(a, "select pg_try_advisory_lock($1)", k);
        CountDownLatch granted = new CountDownLatch(1);
        Mono.from(b.createStatement("select pg_advisory_lock($1)").bind(0, k).execute())
                .flatMap(r -> Mono.from(r.getRowsUpdated()))
                .subscribe(n -> granted.countDown());
        assertFalse(granted.await(300, TimeUnit.MILLISECONDS), "b waits while a holds it");
        assertEquals("1", one(a, "select 1"), "a's connection keeps working meanwhile");
        one(a, "select pg_advisory_unlock($1)", k);
        assertTrue(granted.await(10, TimeUnit.SECONDS), "b gets it once a lets go");
        assertEquals("true", one(b, "select pg_advisory_unlock($1)", k));
        close(a);
        close(b);
    }

    /** The holder's session ends while the owner's transaction is open: its COMMIT fails (08006), nothing commits. */
    @Test
    void aLostHolderSessionFencesTheOwnersCommit() throws Exception {
        long k = 1_992_004;
        try (java.sql.Connection direct = bed.connect(Route.DIRECT); java.sql.Statement s = direct.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_r2dbc_fence (id int)");
            s.execute("DELETE FROM lh_r2dbc_fence");
        }
        Connection c = open(guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
        run(c, "select pg_advisory_lock($1)", k);
        begin(c);
        run(c, "insert into lh_r2dbc_fence values (1)");
        List<Integer> holders = bed.admin().holdersOf(k);
        assertEquals(1, bed.admin().terminateHoldersOf(k), "the session that holds the lock ends");
        // pg_terminate_backend returns before the backend lets go of its locks: until then the lock is still
        // held and a commit is still safe, so the commit is sent once the session's locks are gone
        assertTrue(bed.admin().awaitGone(holders.get(0), 10_000), "the holder's backend is gone");
        R2dbcException e = assertThrows(R2dbcException.class, () -> commit(c));
        assertEquals("08006", e.getSqlState(), e.getMessage());
        assertTrue(c.isAutoCommit(), "rolled back");
        try (java.sql.Connection direct = bed.connect(Route.DIRECT); java.sql.Statement s = direct.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM lh_r2dbc_fence")) {
            rs.next();
            assertEquals(0, rs.getInt(1), "nothing committed after the lock was gone");
        }
        close(c);
    }

    /**
     * A reactive chain makes its statements before its BEGIN ran ({@code begin.thenMany(createStatement(...)
     * .execute())}): they still run inside the transaction, so a rollback undoes them (as direct PostgreSQL does).
     */
    @ParameterizedTest
    @EnumSource(value = Route.class, names = {"DIRECT", "TRANSACTION_POOL"})
    void statementsMadeBeforeTheirBeginRunInsideTheTransaction(Route route) throws Exception {
        try (java.sql.Connection direct = bed.connect(Route.DIRECT); java.sql.Statement s = direct.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_r2dbc_atomic (id int)");
            s.execute("DELETE FROM lh_r2dbc_atomic");
        }
        ConnectionFactory cf = route == Route.DIRECT ? plain(bed, route) : guarded(bed, route, "lockhygiene.mode=emulate");
        Connection c = open(cf);
        Mono.from(c.beginTransaction())
                .thenMany(Flux.from(c.createStatement("insert into lh_r2dbc_atomic values (1)").execute())
                        .concatMap(Result::getRowsUpdated))
                .thenMany(Flux.from(c.createStatement("insert into lh_r2dbc_atomic values ($1)").bind(0, 2).execute())
                        .concatMap(Result::getRowsUpdated))
                .then(Mono.from(c.rollbackTransaction()))
                .block(TIMEOUT);
        Mono.from(c.setAutoCommit(false))
                .thenMany(Flux.from(c.createStatement("insert into lh_r2dbc_atomic values (3)").execute())
                        .concatMap(Result::getRowsUpdated))
                .then(Mono.from(c.rollbackTransaction()))
                .block(TIMEOUT);
        close(c);
        try (java.sql.Connection direct = bed.connect(Route.DIRECT); java.sql.Statement s = direct.createStatement();
             java.sql.ResultSet rs = s.executeQuery("SELECT count(*) FROM lh_r2dbc_atomic")) {
            rs.next();
            assertEquals(0, rs.getInt(1), "rolled back: nothing committed (" + route + ")");
        }
    }

    /** A connection closed holding a lock lets it go, reported with where it was taken. */
    @Test
    void aCloseLetsGoAndSaysWhere() throws Exception {
        long k = 1_992_005;
        try (EventRecorder events = EventRecorder.mentioning(Long.toString(k))) {
            Connection c = open(guarded(bed, Route.TRANSACTION_POOL, "lockhygiene.mode=emulate"));
            run(c, "select pg_advisory_lock(" + k + ")");
            assertEquals(1, bed.admin().holdersOf(k).size());
            close(c);
            assertEquals(List.of(), bed.admin().awaitReleased(k, 2_000));
            assertEquals(1, events.of(EventType.LEAK_RELEASED).size(), events.types().toString());
            assertTrue(java.util.Arrays.stream(events.of(EventType.LEAK_RELEASED).get(0).takenAt().getStackTrace())
                    .anyMatch(f -> f.getClassName().startsWith(R2dbcEmulateTest.class.getName())), "the stack reaches this test");
        }
    }

    /**
     * Keys only the server can compute ({@code hashtext($1)}, a literal's hash, a text bind, a pair with a hash, a key
     * that is not immutable inside a transaction whose BEGIN waits): the server computes them on the application's
     * connection and the lock table decides, every answer as PostgreSQL gives it (errors by SQLState), compared
     * statement by statement with direct r2dbc-postgresql. They were refused (0A000) before. The control: plain
     * r2dbc-postgresql through the pooler loses the lock to another server.
     */
    @ParameterizedTest
    @EnumSource(value = Route.class, names = {"TRANSACTION_POOL", "PREPARED_TRANSACTION_POOL"})
    void keysTheServerComputesAnswerAsPostgreSqlDoes(Route route) throws Exception {
        long k = route == Route.TRANSACTION_POOL ? 1_992_006 : 1_992_506;
        long hashed;
        try (java.sql.Connection c = bed.connect(Route.DIRECT); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS lh_r2_rows (id bigint PRIMARY KEY)");
            s.execute("INSERT INTO lh_r2_rows VALUES (" + (k + 10) + "), (" + (k + 11) + ") ON CONFLICT DO NOTHING");
            try (java.sql.ResultSet rs = s.executeQuery("select hashtext('job-" + k + "')")) {
                rs.next();
                hashed = rs.getLong(1);
            }
        }
        List<String> reference = serverKeyScript(plain(bed, Route.DIRECT), k);
        List<String> ours = serverKeyScript(guarded(bed, route, "lockhygiene.mode=emulate"), k);
        for (int i = 0; i < reference.size(); i++) {
            assertEquals(reference.get(i), ours.get(i), "statement " + (i + 1));
        }
        assertEquals(reference.size(), ours.size());
        assertEquals(List.of(), bed.admin().holdersOf(hashed), "nothing left");
        // the control: plain r2dbc-postgresql through the pooler takes the lock on one server, unlocks on another
        Connection plainA = open(plain(bed, route));
        Connection plainB = open(plain(bed, route));
        try {
            one(plainA, "select pg_advisory_lock(hashtext($1))::text", "job-" + k);
            begin(plainB);
            one(plainB, "select 1::text"); // pins the server the lock was taken on (PgBouncer lends the last one)
            String unlocked = one(plainA, "select pg_advisory_unlock(hashtext($1))::text", "job-" + k);
            R2dbcRoutes.rollback(plainB);
            assertTrue("false".equals(unlocked) || !bed.admin().holdersOf(hashed).isEmpty(),
                    "control: the unlock missed its lock (" + unlocked + ")");
        } finally {
            close(plainB);
            close(plainA);
            bed.admin().terminateHoldersOf(hashed);
        }
    }

    private static List<String> serverKeyScript(ConnectionFactory cf, long k) {
        Connection a = open(cf);
        Connection b = open(cf);
        List<String> out = new ArrayList<>();
        try {
            String job = "job-" + k;
            out.add(show(a, "select pg_try_advisory_lock(hashtext($1))", job));
            out.add(show(b, "select pg_try_advisory_lock(hashtext($1)) as taken", job));
            out.add(show(a, "select pg_try_advisory_lock(hashtext($1))", job)); // again: the key cache's
            out.add(show(a, "select pg_advisory_lock(hashtext('" + job + "-literal'))"));
            out.add(show(b, "select pg_try_advisory_lock(hashtext('" + job + "-literal'))"));
            out.add(show(a, "select pg_try_advisory_lock($1)", Long.toString(k + 5))); // a text bind
            out.add(show(a, "select pg_try_advisory_lock($1)", "not a number"));
            out.add(show(a, "select pg_try_advisory_lock(7742, hashtext($1))", job));
            out.add(show(b, "select pg_try_advisory_lock(7742, hashtext($1))", job));
            io.r2dbc.spi.Statement nullKey = a.createStatement("select pg_try_advisory_lock(hashtext($1))")
                    .bindNull(0, String.class);
            out.add("a NULL text => " + Flux.from(nullKey.execute()).concatMap(r -> r.map((row, meta) ->
                    String.valueOf(row.get(0)))).collectList().block(TIMEOUT));
            // keys read from a table's rows, in the statement's snapshot
            String rows = " from lh_r2_rows where id between " + (k + 10) + " and " + (k + 11);
            out.add(show(a, "select pg_try_advisory_lock(id) as got" + rows));
            out.add(show(b, "select pg_try_advisory_lock(id) as got" + rows.replace("between", "between $1 - 10 +"), k));
            begin(b);
            out.add(show(b, "select pg_try_advisory_xact_lock(id)" + rows));
            R2dbcRoutes.rollback(b);
            out.add(show(a, "select pg_advisory_unlock(id) as freed, pg_advisory_unlock(id) as again" + rows));
            begin(a); // its BEGIN waits for a statement that needs the server: this key is not immutable
            out.add(show(a, "select pg_try_advisory_lock(" + (k + 6) + " + length(current_user) - length(current_user))"));
            out.add(show(b, "select pg_try_advisory_lock($1)", k + 6));
            R2dbcRoutes.rollback(a); // a session lock outlives its transaction
            out.add(show(b, "select pg_try_advisory_lock($1)", k + 6));
            begin(a);
            out.add(show(a, "select pg_try_advisory_lock($1)", "still not a number")); // aborts the transaction
            out.add(show(a, "select 1"));
            R2dbcRoutes.rollback(a);
            out.add(show(a, "select pg_advisory_unlock(hashtext($1)), pg_advisory_unlock(hashtext($1)) as again", job));
            out.add(show(a, "select pg_advisory_unlock(hashtext($1))", job));
            out.add(show(b, "select pg_try_advisory_lock(hashtext($1))", job));
            out.add(show(b, "select pg_advisory_unlock_all()"));
            out.add(show(a, "select pg_advisory_unlock_all()"));
        } finally {
            close(b);
            close(a);
        }
        return out;
    }

    /** r2dbc-pool lends connections; returning one lets go of its locks (the guard sits outside the pool). */
    @Test
    void aPoolReturnIsAClose() throws Exception {
        long k = 1_992_007;
        io.r2dbc.pool.ConnectionPool pool = new io.r2dbc.pool.ConnectionPool(io.r2dbc.pool.ConnectionPoolConfiguration
                .builder(plain(bed, Route.TRANSACTION_POOL)).maxSize(2).maxIdleTime(Duration.ofMinutes(1)).build());
        try {
            ConnectionFactory cf = io.lockhygiene.r2dbc.LockHygieneConnectionFactory.builder(pool)
                    .setting("lockhygiene.mode", "emulate")
                    .connectsTo(R2dbcOptions.of(bed, Route.TRANSACTION_POOL, "postgresql"))
                    .build();
            Connection c = open(cf);
            run(c, "select pg_advisory_lock($1)", k);
            close(c);
            assertEquals(List.of(), bed.admin().awaitReleased(k, 2_000), "released at the return");
            Connection again = open(cf);
            assertEquals("true", one(again, "select pg_try_advisory_lock($1)", k), "the next borrower gets it");
            assertEquals("true", one(again, "select pg_advisory_unlock($1)", k));
            close(again);
        } finally {
            pool.dispose();
        }
    }
}
