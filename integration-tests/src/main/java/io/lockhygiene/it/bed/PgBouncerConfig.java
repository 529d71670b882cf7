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

    private PgBouncerConfig() {
    }

    static String ini(String poolMode, String listenAddr, int listenPort, String pgHost, int pgPort,
                      String database, String user, String authFile, String pidFile, String logFile) {
        int poolSize = "transaction".equals(poolMode) ? TRANSACTION_POOL_SIZE : SESSION_POOL_SIZE;
        StringBuilder ini = new StringBuilder();
        ini.append("[databases]\n");
        ini.append(database).append(" = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=").append(database).append('\n');
        ini.append("postgres = host=").append(pgHost).append(" port=").append(pgPort)
                .append(" dbname=postgres\n");
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
        ini.append("max_client_conn = 500\n");
        // pgjdbc sends extra_float_digits at start-up; PgBouncer refuses unknown start-up parameters.
        ini.append("ignore_startup_parameters = extra_float_digits,options\n");
        // The default: session mode resets with DISCARD ALL, which includes pg_advisory_unlock_all().
        ini.append("server_reset_query = DISCARD ALL\n");
        ini.append("server_check_delay = 0\n");
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
