package io.lockhygiene.it.bed;

/** The three ways a client reaches the test bed's PostgreSQL. */
public enum Route {
    DIRECT("direct"),
    SESSION_POOL("pgbouncer session"),
    TRANSACTION_POOL("pgbouncer transaction");

    private final String label;

    Route(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
