CREATE TABLE applied_once (id int);
INSERT INTO applied_once VALUES (1);
