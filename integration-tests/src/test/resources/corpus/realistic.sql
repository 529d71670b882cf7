-- A corpus of ordinary PostgreSQL that mentions "advisory", "skip" and lock function names only where
-- they are not calls: strings, comments, identifiers, dollar-quoted literals and routine bodies.
CREATE TABLE corpus_jobs (
    id bigserial PRIMARY KEY,
    job_key text NOT NULL UNIQUE,
    advisory_note text DEFAULT 'pg_advisory_lock(1) is not called here',
    skip_count int NOT NULL DEFAULT 0,
    "pg_advisory_lock" text,             -- a column named like the function
    payload jsonb
);
COMMENT ON TABLE corpus_jobs IS 'Uses pg_try_advisory_lock(42) in the worker; FOR UPDATE SKIP LOCKED for claims';
INSERT INTO corpus_jobs (job_key, payload) VALUES ('report-daily', '{"lock": "pg_advisory_lock(7)"}');
INSERT INTO corpus_jobs (job_key, advisory_note) VALUES ('it''s', E'escaped \' pg_advisory_lock(2) \\ done');
INSERT INTO corpus_jobs (job_key, advisory_note) VALUES ('unicode', U&'d\0061t\+000061 pg_advisory_unlock_all()');
INSERT INTO corpus_jobs (job_key, advisory_note) VALUES ('dollar', $q$ SELECT pg_advisory_lock(3); 'quote' $q$);
INSERT INTO corpus_jobs (job_key, advisory_note) VALUES ('nested', $outer$ $inner$ pg_advisory_lock(4) $inner$ $outer$);
/* a block comment /* nested pg_advisory_lock(5) */ still a comment: SKIP LOCKED */
SELECT id, job_key, "pg_advisory_lock" FROM corpus_jobs WHERE advisory_note LIKE '%advisory%' ORDER BY id;
SELECT count(*) AS skip_locked_mentions FROM corpus_jobs WHERE advisory_note ~* 'skip\s+locked';
SELECT $$pg_advisory_lock(6)$$ AS literal, $tag$ -- not a comment $tag$ AS also_literal;
SELECT B'1010' AS bits, X'FF' AS hex, 1.5e3 AS num, .5 AS half, 1::bigint AS cast_ed;
SELECT 'a' || 'b' AS concat_ed, E'\n' AS newline, e'\\' AS backslash;
CREATE FUNCTION corpus_touch(k text) RETURNS int LANGUAGE plpgsql AS $fn$
DECLARE n int;
BEGIN
    -- a body: pg_advisory_xact_lock is the hygienic form
    PERFORM pg_advisory_xact_lock(hashtext(k));
    UPDATE corpus_jobs SET skip_count = skip_count + 1 WHERE job_key = k;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$fn$;
SELECT corpus_touch('report-daily');
DO $do$
BEGIN
    RAISE NOTICE 'pg_advisory_lock(8) only in a notice; SKIP LOCKED too';
END
$do$;
DO LANGUAGE plpgsql $$ BEGIN PERFORM 1; END $$;
WITH recent AS (SELECT id FROM corpus_jobs ORDER BY id DESC LIMIT 2)
SELECT c.job_key FROM corpus_jobs c JOIN recent r ON r.id = c.id ORDER BY c.id;
SELECT job_key FROM corpus_jobs WHERE job_key = ANY (ARRAY['report-daily', 'dollar']) ORDER BY 1;
SELECT jsonb_build_object('advisory', true, 'skip', 'locked') AS obj;
SELECT pg_advisory_xact_lock(9);
SELECT pg_try_advisory_xact_lock(10, 11);
UPDATE corpus_jobs SET payload = payload || '{"done": true}' WHERE job_key = 'report-daily' RETURNING id, payload;
DELETE FROM corpus_jobs WHERE job_key = 'nested' RETURNING job_key;
CREATE INDEX corpus_jobs_skip_idx ON corpus_jobs (skip_count) WHERE skip_count > 0;
ALTER TABLE corpus_jobs ADD COLUMN locked_until timestamptz;
SELECT id FROM corpus_jobs WHERE skip_count >= 0 ORDER BY id LIMIT 10 FOR UPDATE SKIP LOCKED;
EXPLAIN SELECT * FROM corpus_jobs WHERE job_key = 'x';
SELECT 1 / 0 AS fails_the_same_way;
SELECT 'unterminated in a comment -- '' still a string' AS s;
SELECT "pg_advisory_lock" FROM corpus_jobs WHERE "pg_advisory_lock" IS NULL LIMIT 1;
SELECT my_advisory_lock_count FROM (SELECT 3 AS my_advisory_lock_count) t;
TRUNCATE corpus_jobs;
DROP FUNCTION corpus_touch(text);
DROP TABLE corpus_jobs;
