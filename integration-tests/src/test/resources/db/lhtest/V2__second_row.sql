INSERT INTO applied_once VALUES (2, $$second$$);
