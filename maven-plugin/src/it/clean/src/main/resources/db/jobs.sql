-- one daily report at a time, for the length of the transaction that makes it
BEGIN;
SELECT pg_advisory_xact_lock(7742, hashtext('report-daily'));
INSERT INTO reports (day) VALUES (current_date);
COMMIT;
