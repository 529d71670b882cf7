package io.lockhygiene.it.bed;

/** One provisioned bed, whatever it came from. */
interface RunningBed extends AutoCloseable {
    BedEndpoints endpoints();

    /**
     * The URL of {@link Route#PREPARED_TRANSACTION_POOL}, started on first use where the bed starts its own
     * servers; the message names what is missing where it cannot be had.
     */
    default String preparedPoolUrl() {
        throw new BedException("this test bed (" + endpoints().source() + ") has no " + Route.PREPARED_TRANSACTION_POOL.label());
    }

    /** The version of that PgBouncer, once {@link #preparedPoolUrl()} answered. */
    default String preparedPoolVersion() {
        return "unknown";
    }

    /**
     * The worker-pool benchmark's PgBouncer (issue 36): transaction mode, four servers, PgBouncer's default
     * server checks (the bed's other poolers check every server they hand out, which doubles what an
     * autocommit statement costs); started on first use where the bed starts its own servers.
     *
     * @param current a PgBouncer of 1.21 or later (see {@link #currentPgBouncerVersion}); else the system's
     */
    default String workerPoolUrl(boolean current) {
        throw new BedException("this test bed (" + endpoints().source() + ") has no worker-pool PgBouncer: the"
                + " benchmark needs the local-binaries bed");
    }

    /** The version of the PgBouncer of 1.21 or later this bed can start (bin/setup's, or the environment's); null when none. */
    default String currentPgBouncerVersion() {
        return null;
    }

    @Override
    void close();
}
