class Jobs {
    // "SELECT pg_advisory_lock(1)" in a comment is not code
    char quote = '"';
    String take = "SELECT pg_try_advisory_lock(" + 42 + ")";
    String ok = "SELECT pg_try_advisory_xact_lock(42)";
    String ignored = "SELECT pg_advisory_lock(7)"; // lockhygiene:ignore
    String block = """
        SELECT *
          FROM jobs
         WHERE job_key = ?
           FOR UPDATE SKIP LOCKED
        """;
}
