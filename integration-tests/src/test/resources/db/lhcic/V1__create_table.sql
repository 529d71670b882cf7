CREATE TABLE cic_jobs (id int PRIMARY KEY, name text);
INSERT INTO cic_jobs SELECT g, 'job ' || g FROM generate_series(1, 100) g;
