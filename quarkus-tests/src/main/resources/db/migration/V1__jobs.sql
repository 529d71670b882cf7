CREATE TABLE IF NOT EXISTS quarkus_jobs (id bigserial PRIMARY KEY, done_at timestamptz NOT NULL DEFAULT now());
