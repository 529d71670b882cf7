package io.lockhygiene.it.bed;

/**
 * Writes a pgbouncer.ini for one pool mode. Shared by the local-binary and the container bed so both
 * pool exactly alike: small pools (so backends are shared between clients, as in production),
 * scram authentication against the same user, and the admin console open to that user (benchmarks
 * read SHOW STATS).
 */
final class PgBouncerConfig {
    /** Servers per database/user pair in transaction mode: fewer than the demo's 8 workers. */
    static final int TRANSACTION_POOL_SIZE = 3;
    /** Session mode needs one server per client; room for the demo and the tests. */
    static final int SESSION_POOL_SIZE = 40;
    /** The session-mode database entry for lock holders: one server per process (and per waiting call). */
    static final String HOLDER_ENTRY = "lockhygiene_holder";
    static final int HOLDER_POOL_SIZE = 60;
    /** A session-mode entry for lock holders smaller than a fleet: the capped fleet setup (issue 44). */
    static final String CAPPED_HOLDER_ENTRY = "lockhygiene_holder_capped";
    static final int CAPPED_HOLDER_POOL_SIZE = 4;
    /** The worker-pool benchmark's PgBouncer: transaction mode, four servers, PgBouncer's own server checks. */
    static final int WORKER_POOL_SIZE = 4;
    static final int QUERY_WAIT_TIMEOUT_SECONDS = 20;

    private PgBouncerConfig() {
    }

    /** Prepared statements a PgBouncer of 1.21 or later keeps per server connection (its own default is 200 from 1.22). */
    static final int MAX_PREPARED_STATEMENTS = 200;

    static String ini(String poolMode, String listenAddr, int listenPort, String pgHost, int pgPort,
                      String database, String user, String authFile, String pidFile, String logFile) {
        return ini(poolMode, listenAddr, listenPort, pgHost, pgPort, database, user, authFile, pidFile, logFile, 0);
    }

    /** @param maxPreparedStatements 0: the line is left out (PgBouncer before 1.21 does not know it) */
    static String ini(String poolMode, String listenAddr, int listenPort, String pgHost, int pgPort,
                      String database, String user, String authFile, String pidFile, String logFile,
                      int maxPreparedStatements) {
        return ini(poolMode, listenAddr, listenPort, pgHost, pgPort, database, user, authFile, pidFile, logFile,
                maxPreparedStatements, poolSize(poolMode), true);
    }

    /** The bed's pool size for a pool mode. */
    static int poolSize(String poolMode) {
        return "transaction".equals(poolMode) ? TRANSACTION_POOL_SIZE : SESSION_POOL_SIZE;
    }

    /**
     * @param checkEveryReuse the test bed's {@code server_check_delay = 0}: a server handed to another client is
     *                        checked with a round trip first (a restarted PostgreSQL is noticed at once); false:
     *                        PgBouncer's default (30 s), as production runs it, where an autocommit statement costs
     *                        one round trip, not two
     */
    static String ini(String poolMode, String listenAddr, int listenPort, String pgHost, int pgPort,
                      String database, String user, String authFile, String pidFile, String logFile,
                      int maxPreparedStatements, int poolSize, boolean checkEveryReuse) {
        StringBuilder ini = new StringBuilder();
        ini.append("[databases]\n");
        ini.append(database).append(" = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=").append(database).append('\n');
        ini.append("postgres = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=postgres\n");
        // a session-mode entry for lock holders beside the transaction-pooled one (lockhygiene.holderUrl)
        ini.append(HOLDER_ENTRY).append(" = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=").append(database).append(" pool_mode=session pool_size=").append(HOLDER_POOL_SIZE)
                .append('\n');
        ini.append(CAPPED_HOLDER_ENTRY).append(" = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=").append(database).append(" pool_mode=session pool_size=")
                .append(CAPPED_HOLDER_POOL_SIZE).append(" max_db_connections=").append(CAPPED_HOLDER_POOL_SIZE)
                .append('\n');
        ini.append("\n[pgbouncer]\n");
        ini.append("pool_mode = ").append(poolMode).append('\n');
        ini.append("listen_addr = ").append(listenAddr).append('\n');
        ini.append("listen_port = ").append(listenPort).append('\n');
        ini.append("unix_socket_dir =\n");
        ini.append("auth_type = scram-sha-256\n");
        ini.append("auth_file = ").append(authFile).append('\n');
        ini.append("admin_users = ").append(user).append('\n');
        ini.append("stats_users = ").append(user).append('\n');
        ini.append("default_pool_size = ").append(poolSize).append('\n');
        ini.append("min_pool_size = 0\n");
        ini.append("reserve_pool_size = 0\n");
        ini.append("max_client_conn = 1000\n");
        // pgjdbc sends extra_float_digits at start-up; PgBouncer refuses unknown start-up parameters.
        ini.append("ignore_startup_parameters = extra_float_digits,options\n");
        // The default: session mode resets with DISCARD ALL, which includes pg_advisory_unlock_all().
        ini.append("server_reset_query = DISCARD ALL\n");
        if (checkEveryReuse) {
            ini.append("server_check_delay = 0\n");
        }
        // a server's application_name tells the client's host and port: a backend reached through PgBouncer is told
        // apart from one connected directly (the holder tests)
        ini.append("application_name_add_host = 1\n");
        // A client waiting for a server gives up after this (PgBouncer's default is 120 s): the fleet tests'
        // control shows the stall of holders that take the pool's servers without waiting minutes.
        ini.append("query_wait_timeout = ").append(QUERY_WAIT_TIMEOUT_SECONDS).append('\n');
        if (maxPreparedStatements > 0) {
            // protocol-level prepared statements in transaction mode (PgBouncer 1.21+): pgjdbc's named statements work
            ini.append("max_prepared_statements = ").append(maxPreparedStatements).append('\n');
        }
        if (pidFile != null) {
            ini.append("pidfile = ").append(pidFile).append('\n');
        }
        if (logFile != null) {
            ini.append("logfile = ").append(logFile).append('\n');
        }
        return ini.toString();
    }

    static String authFile(String user, String password) {
        return '"' + user + "\" \"" + password + "\"\n";
    }
}
