-- A small bank on the simulated SSD: real SQLite, every page through the FTL.
-- Run: nandlab sql examples/sql-accounts.sql --device bench-ssd --journal-mode wal
CREATE TABLE account(id INTEGER PRIMARY KEY, owner TEXT NOT NULL, balance INTEGER NOT NULL);
CREATE TABLE transfer(id INTEGER PRIMARY KEY, src INTEGER, dst INTEGER, amount INTEGER);
INSERT INTO account(owner, balance)
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
  SELECT 'owner-' || i, 1000 FROM n;

-- one transaction per transfer, as an application would commit them
BEGIN; UPDATE account SET balance = balance - 10 WHERE id = 1;
       UPDATE account SET balance = balance + 10 WHERE id = 2;
       INSERT INTO transfer(src, dst, amount) VALUES (1, 2, 10); COMMIT;
BEGIN; UPDATE account SET balance = balance - 25 WHERE id = 3;
       UPDATE account SET balance = balance + 25 WHERE id = 1;
       INSERT INTO transfer(src, dst, amount) VALUES (3, 1, 25); COMMIT;
BEGIN; UPDATE account SET balance = balance - 5 WHERE id = 2;
       UPDATE account SET balance = balance + 5 WHERE id = 999;
       INSERT INTO transfer(src, dst, amount) VALUES (2, 999, 5); COMMIT;

SELECT count(*) AS accounts, sum(balance) AS total FROM account;
SELECT id, owner, balance FROM account WHERE id IN (1, 2, 3, 999) ORDER BY id;
PRAGMA integrity_check;
