package io.lockhygiene.internal.log;


/**
 * Every sentence {@code lockhygiene.mode=emulate} says to a user, in one place, so each is read (and tested,
 * {@code EmulateMessagesTest}) as the user reads it. Errors that stand for PostgreSQL's own keep PostgreSQL's
 * words first ({@code deadlock detected}, {@code canceling statement due to ...}), so code and people that
 * match on them still do; what LockHygiene adds follows in parentheses.
 */
public final class EmulateMessages {
    private static final String WHO = "LockHygiene (lockhygiene.mode=emulate)";

    /** pgjdbc's own words for a statement on a closed connection (SQLState 08003). */
    public static final String CLOSED = "This connection has been closed.";
    /** PostgreSQL's words for a cancelled statement (SQLState 57014). */
    public static final String CANCELLED = "canceling statement due to user request";
    /** PostgreSQL's words when the session's lock_timeout ends a lock wait (SQLState 55P03). */
    public static final String LOCK_TIMEOUT = "canceling statement due to lock timeout";
    /** PostgreSQL's words when the session's statement_timeout ends a statement (SQLState 57014). */
    public static final String STATEMENT_TIMEOUT = "canceling statement due to statement timeout";

    private EmulateMessages() {
    }

    /** A statement emulate cannot answer as PostgreSQL would (SQLState 0A000); {@code sql} already loggable. */
    public static String refused(String why, String sql) {
        return WHO + " refused a statement with advisory calls: " + why + ". Behind a transaction pooler its calls"
                + " cannot be answered exactly as PostgreSQL would, so nothing was sent. Fix: compute the key first and"
                + " take the lock in a statement of its own (SELECT id FROM jobs WHERE ...; then SELECT"
                + " pg_try_advisory_lock(?)), with the key a literal, a bind parameter or an expression of them; or use"
                + " pg_advisory_xact_lock inside a transaction, which needs no emulation. SQL: " + sql;
    }

    /**
     * A key only the server can compute, for an owner whose front end asks the server itself (R2DBC), without the
     * server's value (a fault of ours): refused (SQLState 0A000), nothing sent.
     */
    public static String keyNotReadable(String function) {
        return WHO + " refused " + function + ": its key is computed by the server and, on this connection (R2DBC),"
                + " LockHygiene did not get the server's value for it. Nothing was sent. Fix: compute the key first"
                + " (SELECT hashtext($1)) and bind it as a Long, or use pg_advisory_xact_lock inside a transaction,"
                + " which needs no emulation; and report this, with the statement.";
    }

    /** Two owners of this process wait for each other (SQLState 40P01). */
    public static String deadlockHere(Object owner, Object key, Object other) {
        return "deadlock detected (LockHygiene, lockhygiene.mode=emulate: " + owner + " waits for advisory lock " + key
                + " held by " + other + ", which waits for it)";
    }

    /** A wait in PostgreSQL's queue closes a cycle through this process's table (SQLState 40P01). */
    public static String deadlockAcrossProcesses(Object owner, Object key, Object cycleWith) {
        return "deadlock detected (LockHygiene, lockhygiene.mode=emulate: " + owner + " waits for advisory lock " + key
                + " held by another process, which waits for a lock this process holds for " + cycleWith + ")";
    }

    /** lockhygiene.lockTimeout ended a wait in the JVM (SQLState 55P03). */
    public static String lockTimeout(long millis) {
        return LOCK_TIMEOUT + lockTimeoutSuffix(millis);
    }

    /** Added to PostgreSQL's own lock-timeout message when lockhygiene.lockTimeout set it. */
    public static String lockTimeoutSuffix(long millis) {
        return " (LockHygiene: lockhygiene.lockTimeout=" + millis + "ms)";
    }

    /** Logged at ERROR and published as LOCK_LOST: the holder's server connection went while it held locks. */
    public static String holderLost(Object endpoint, Object cause) {
        return WHO + ": the process's lock holder for " + endpoint + " lost its server connection (" + cause + ");"
                + " the advisory locks it held are released, so other clients may now take them. Whatever they"
                + " protected is no longer exclusive: stop that work, take the locks again, and start it over.";
    }

    /**
     * What an owner's statement gets after the loss (SQLState 08006).
     *
     * @param whose the owner told on its next statement, or null for the statement that met the loss
     */
    public static String lockLost(String whose) {
        return WHO + ": the lock holder" + (whose == null ? "" : " of " + whose) + " lost its server connection; the"
                + " advisory locks it held" + (whose == null ? "" : " for it") + " are gone. Take them again.";
    }

    /**
     * A fenced commit found the owner's locks gone (SQLState 08006): the transaction was rolled back, as it
     * would be had the owner's own session died.
     */
    public static String commitFenced(Object owner, java.util.List<?> keys) {
        StringBuilder named = new StringBuilder();
        for (Object k : keys) {
            named.append(named.length() == 0 ? "" : ", ").append(k);
        }
        return WHO + ": the transaction was rolled back, not committed: the advisory lock" + (keys.size() == 1 ? " "
                : "s ") + (keys.isEmpty() ? "" : "(" + named + ") ") + "of " + owner + " ended with its lock holder's"
                + " session before the commit, so another client may hold " + (keys.size() == 1 ? "it" : "them")
                + " now. Take the lock again and redo the work.";
    }

    /** Said once (WARN, HOLDER_STARVED) when a holder through the pooler waited long for a server. */
    public static String holderStarved(Object endpoint, long waitedMillis) {
        return WHO + ": the lock holder for " + endpoint + " waited " + waitedMillis + " ms for a server of the"
                + " application's transaction pooler. Every process's holder takes one pooled server while it holds"
                + " locks, so with N processes holding locks at once and a pool of S servers, N >= S leaves nothing"
                + " for the application's own statements (they time out with query_wait_timeout). Fix:"
                + " lockhygiene.holderUrl pointing at the PostgreSQL server itself, or at a PgBouncer database entry"
                + " with pool_mode=session sized one server per process.";
    }

    /**
     * INFO: holderUrl=auto gave the holder connections of its own.
     *
     * @param source where the way to connect was learned ("HikariCP's configuration")
     * @param behindPooler the application goes through a pooler (the holder skips it)
     */
    public static String holderOnServer(Object endpoint, String address, String port, String source,
                                        boolean behindPooler) {
        return WHO + ": the lock holder for " + endpoint + " connects to the server itself at " + address + ":" + port
                + " (lockhygiene.holderUrl=auto, with " + source + "), so it takes none of the "
                + (behindPooler ? "pooler's servers" : "application's pooled connections");
    }

    /** WARN: holderUrl=auto could not give the holder connections of its own; it uses the application's pooler. */
    public static String holderThroughPooler(Object endpoint, String tried) {
        return WHO + ": the lock holder for " + endpoint + " goes through the application's pooler: " + tried + ". Then"
                + " each process's holder takes one pooled server while it holds locks, so N processes holding locks at"
                + " once need N servers of the pool beyond the application's own; with a pool of S servers, N >= S"
                + " stops everything. Fix: give the holder its own endpoint, lockhygiene.holderUrl=jdbc:postgresql://"
                + "<server>:<port>/<database>, or a PgBouncer database entry with pool_mode=session (sized one server"
                + " per process); lockhygiene.holderUrl=pooler silences this.";
    }

    /** WARN: the default mode's holder could get no session of its own, so the default steps back. */
    public static String defaultStepsBack(Object endpoint, String tried) {
        return "LockHygiene: the default mode (emulate) found no session of its own for the lock holder of " + endpoint
                + ": " + tried + ". Holding session locks through the application's own pooler or pool would take one"
                + " of its servers per process while locks are held, which can stop the application, so on this"
                + " endpoint session advisory locks run as with plain pgjdbc (unsafe behind a transaction pooler: a"
                + " lock and its unlock may reach different servers) and each call site is reported. Fix:"
                + " lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/<database> (the server itself, or a"
                + " PgBouncer entry with pool_mode=session); or lockhygiene.mode=emulate to hold them through the"
                + " pooler anyway, one pooled server per process while it holds locks.";
    }

    /** WARN: holderUrl=auto could not give the holder connections of its own; it keeps one of the pool's. */
    public static String holderSharesPool(Object endpoint, String tried) {
        return WHO + ": the lock holder for " + endpoint + " keeps one connection of the application's own pool: "
                + tried + ". That connection is the pool's one fewer for as long as the process runs, and if it is"
                + " lost while the application's threads hold every other one, the next lock waits for the pool's"
                + " connection timeout and fails (08001). Fix: lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/"
                + "<database> (the application's user and password are used unless the URL names its own), or tell"
                + " the wrapper how the pool connects: new LockHygieneDataSource(pool, settings).connectsTo(url, user,"
                + " password).";
    }

    /** A holder that shares the application's pool got no connection from it (SQLState 08001). */
    public static String holderCannotBorrow(Object endpoint, String error) {
        return WHO + ": the lock holder for " + endpoint + " shares the application's pool and got no connection from"
                + " it (" + error + "): every connection was in use, some by threads waiting for this lock. Fix:"
                + " lockhygiene.holderUrl=jdbc:postgresql://<server>:<port>/<database>, so that the holder connects on"
                + " its own, or tell the wrapper how the pool connects (LockHygieneDataSource.connectsTo).";
    }

    /** connect() fails (08001): the holderUrl does not answer; {@code shownUrl} is redacted. */
    public static String holderUrlUnreachable(String shownUrl, String error) {
        return WHO + ": the lock holder cannot connect to lockhygiene.holderUrl=" + shownUrl + ": " + error + ". Fix the"
                + " URL, or its user and password (in the URL; otherwise the application's own are used).";
    }

    /** connect() fails (HY024): no driver takes the holderUrl. */
    public static String holderUrlNoDriver(String shownUrl) {
        return WHO + ": no pgjdbc driver accepts lockhygiene.holderUrl=" + shownUrl;
    }

    /** connect() fails (HY024): the holderUrl reaches another database or cluster. */
    public static String holderUrlOtherDatabase(String shownUrl, Object holderSide, Object applicationSide) {
        return WHO + ": lockhygiene.holderUrl=" + shownUrl + " reaches another database than the application ("
                + holderSide + "; the application's is " + applicationSide + "), where its locks would exclude nobody."
                + " Point it at the application's own PostgreSQL server and database, or at a PgBouncer entry with"
                + " pool_mode=session for them.";
    }

    /** connect() fails (HY024): the holderUrl is a transaction pooler. */
    public static String holderUrlTransactionPooler(String shownUrl) {
        return WHO + ": lockhygiene.holderUrl=" + shownUrl + " is a transaction pooler (its backend changed between two"
                + " statements): a lock holder needs a session of its own. Use the PostgreSQL server itself, or a"
                + " PgBouncer database entry with pool_mode=session.";
    }

    /** connect() fails (HY024): whether the pooler behind the holderUrl pools by session could not be told. */
    public static String holderUrlPoolingUnknown(String shownUrl, int seconds, String error) {
        return WHO + ": lockhygiene.holderUrl=" + shownUrl + " is a pooler, and whether it pools by session could not"
                + " be told within " + seconds + " s (" + error + "). Use the PostgreSQL server itself, or a PgBouncer"
                + " entry with pool_mode=session and room for two servers.";
    }

    /**
     * A lock holder's session through a session-mode pooler entry found no server within the pooler's wait (its
     * pool is smaller than the processes that hold or wait for locks at once): SQLState 53300, as PostgreSQL's
     * own "too many clients".
     */
    public static String holderPoolFull(Object endpoint, String poolerSaid) {
        return WHO + ": the lock holder could not get a server from " + endpoint + " (the pooler said: " + poolerSaid
                + "). That session-mode entry has fewer servers than the processes that hold or wait for advisory"
                + " locks at once. Raise the entry's pool_size (or max_db_connections), or lower"
                + " lockhygiene.holderLinger so that idle holders give their servers back sooner; the lock was not"
                + " taken.";
    }

    /**
     * WARN once per call site: emulate answered an unlock false. Who owns a lock decides what went wrong: a thread
     * (behind a wrapped pool) or a connection (the URL's, as on PostgreSQL, where borrow-per-call code unlocks on
     * another connection); the fix named is the one for that owner.
     */
    public static String unlockNotHeld(String site, String postgresWarning, Object owner, boolean threadOwns) {
        String head = "an advisory unlock at " + site + " returned false (lockhygiene.mode=emulate answers it as"
                + " PostgreSQL answers a session that does not hold the lock: \"" + postgresWarning + "\"): " + owner
                + " does not hold it. ";
        if (threadOwns) {
            return head + "Behind this pool a lock belongs to the thread that took it, so an unlock on another thread,"
                    + " or a second unlock, finds nothing to release. Fix: unlock on the thread that locked, once per"
                    + " lock.";
        }
        return head + "Here a lock belongs to the connection that took it, as on PostgreSQL, so an unlock on another"
                + " connection (a pool's next borrow, say) or a second unlock finds nothing to release. Fix: lock and"
                + " unlock on one connection; or, where a pool lends the connections, wrap the pool's DataSource in"
                + " LockHygieneDataSource (the Spring Boot starter and the agent do it for you), and a"
                + " lock belongs to the thread across borrows.";
    }
}
