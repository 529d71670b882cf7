CREATE TABLE applied_once (id int PRIMARY KEY, note text);
INSERT INTO applied_once VALUES (1, $$first$$);
