package io.lockhygiene.it.bed;

/** The ways a client reaches the test bed's PostgreSQL. */
public enum Route {
    DIRECT("direct"),
    SESSION_POOL("pgbouncer session"),
    /** The system's PgBouncer (1.18 on Debian 12: before protocol-level prepared statements), prepareThreshold=0. */
    TRANSACTION_POOL("pgbouncer transaction"),
    /**
     * A PgBouncer of 1.21 or later in transaction mode with {@code max_prepared_statements} on, reached with
     * pgjdbc's default {@code prepareThreshold} (named server-side statements): started on first use.
     */
    PREPARED_TRANSACTION_POOL("pgbouncer >= 1.21 transaction, prepared statements");

    private final String label;

    Route(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
