package app;

final class Jobs {
    static final String LOCK = "SELECT pg_advisory_lock(?)";
    static final String UNLOCK = "SELECT pg_advisory_unlock(?)";
}
