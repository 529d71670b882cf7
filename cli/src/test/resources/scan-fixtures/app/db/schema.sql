-- pg_advisory_lock(99) in a comment
SELECT 'pg_advisory_lock(1)';
DO $$ BEGIN
  PERFORM pg_advisory_lock(5);
END $$;
SELECT $x$ pg_advisory_lock(6) $x$;
SELECT * FROM q WHERE status = 'new' ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED;
SELECT pg_advisory_unlock_all();
