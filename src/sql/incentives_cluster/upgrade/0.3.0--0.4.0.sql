-- incentives_cluster 0.3.0 -> 0.4.0: what changes in schemas and types,
-- and the 0.3.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function and procedure of 0.4.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).  A result type the shards' type
-- gains a column (incentives.earning, incentives.tier_progress_row, ...)
-- gains it here too, with the same ALTER TYPE ... ADD ATTRIBUTE
-- (docs/architecture.md, Install and upgrade scripts).

-- settle and accrue take the relation of the transactions (a new last
-- argument, its name on the shards, as refresh_earnings): the procedures
-- are re-created with their privileges, their proxies too.
SELECT pg_temp.update_replace_function('incentives.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives.accrue(date)');
SELECT pg_temp.update_replace_function('incentives_cluster.settle(date, text)');
SELECT pg_temp.update_replace_function('incentives_cluster.accrue(date)');
SELECT pg_temp.update_check();
DROP PROCEDURE incentives.settle(date, text);
DROP PROCEDURE incentives.accrue(date);
DROP FUNCTION incentives_cluster.settle(date, text);
DROP FUNCTION incentives_cluster.accrue(date);
-- incentives.delete_offer becomes PL/pgSQL (it asks every shard first):
-- replaced in place by its code part.
