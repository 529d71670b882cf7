CREATE INDEX CONCURRENTLY cic_jobs_name ON cic_jobs (name);
