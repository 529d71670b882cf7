SELECT 'unterminated pg_advisory_lock(1)
