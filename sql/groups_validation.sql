-- groups_validation: incentives.participant_groups refuses what would make
-- the aggregation key of a transaction ambiguous (docs/reference.md,
-- Participant groups): two windows of one participant that overlap
-- (23P01, naming both), a membership that makes a group its own ancestor
-- on some day (22023, naming every key of the cycle; docs/reference.md,
-- Participant hierarchies), a window that ends before it starts.  The
-- errors of offers' group fields (aggregation, a requirement's scope) are
-- in offers_invalid.
\set VERBOSITY default
\set SHOW_CONTEXT never
TRUNCATE incentives.participant_groups, incentives.groups, incentives.offers, incentives.transactions;

INSERT INTO incentives.participant_groups VALUES
  ('store_1', 'chain_a', '2026-01-01', '2026-03-31'),
  ('store_1', 'chain_b', '2026-04-01', NULL),
  ('store_2', 'chain_a', '2026-01-01', NULL);

-- Windows of one participant overlap: refused, both named.
INSERT INTO incentives.participant_groups VALUES ('store_1', 'chain_c', '2026-03-01', '2026-03-15');
\echo :SQLSTATE
INSERT INTO incentives.participant_groups VALUES ('store_1', 'chain_a', '2025-06-01', NULL);
\echo :SQLSTATE
UPDATE incentives.participant_groups SET end_date = '2026-04-01'
 WHERE participant_key = 'store_1' AND start_date = '2026-01-01';
\echo :SQLSTATE
-- touching windows do not overlap
INSERT INTO incentives.participant_groups VALUES ('store_2', 'chain_b', '2025-01-01', '2025-12-31');

-- Hierarchies: a group may be a member of a group, a member a group.
INSERT INTO incentives.participant_groups VALUES ('chain_a', 'holding', '2026-01-01', '2026-06-30');
INSERT INTO incentives.participant_groups VALUES ('store_3', 'store_1', '2026-01-01', NULL);
-- A cycle on some day is refused, every key of it named: holding in
-- store_3 from March closes holding -> store_3 -> store_1 -> chain_a ->
-- holding in March (store_1 is in chain_a until March only); from April
-- store_1 is in chain_b, outside holding: no cycle.
INSERT INTO incentives.participant_groups VALUES ('holding', 'store_3', '2026-03-01', NULL);
\echo :SQLSTATE
INSERT INTO incentives.participant_groups VALUES ('holding', 'store_3', '2026-04-01', NULL);
-- chain_b in holding would close chain_b -> holding -> store_3 -> store_1
-- -> chain_b from April on
INSERT INTO incentives.participant_groups VALUES ('chain_b', 'holding', '2026-01-01', NULL);
\echo :SQLSTATE
-- an update too: holding in store_3 from February meets March again
UPDATE incentives.participant_groups SET start_date = '2026-02-01'
 WHERE participant_key = 'holding';
\echo :SQLSTATE
SELECT * FROM incentives.participant_groups ORDER BY participant_key, start_date;
INSERT INTO incentives.participant_groups VALUES ('store_3', 'store_3', '2027-01-01', NULL);
\echo :SQLSTATE
DELETE FROM incentives.participant_groups WHERE participant_key IN ('chain_a', 'store_3', 'holding');

-- A window ends on or after the day it starts.
INSERT INTO incentives.participant_groups VALUES ('store_4', 'chain_a', '2026-02-01', '2026-01-31');
\echo :SQLSTATE
-- the primary key: one window of a participant per start_date
INSERT INTO incentives.participant_groups VALUES ('store_2', 'chain_b', '2026-01-01', NULL);
\echo :SQLSTATE

SELECT * FROM incentives.participant_groups ORDER BY participant_key, start_date;

-- incentives.groups types groups (docs/reference.md, Participant
-- hierarchies): keys and types are well formed (22023), a key equal to
-- another but for letter case is refused (23505, naming it).
INSERT INTO incentives.groups VALUES ('chain_a', 'chain', 'Chain A'), ('region_1', 'region', NULL);
INSERT INTO incentives.groups VALUES ('Chain_A', 'chain', NULL);
\echo :SQLSTATE
UPDATE incentives.groups SET group_key = 'REGION_1' WHERE group_key = 'region_1';
INSERT INTO incentives.groups VALUES ('region_1', 'region', NULL);
\echo :SQLSTATE
INSERT INTO incentives.groups VALUES (' chain_b', 'chain', NULL);
\echo :SQLSTATE
INSERT INTO incentives.groups VALUES ('chain_b', '', NULL);
\echo :SQLSTATE
INSERT INTO incentives.groups VALUES ('chain_b', E'chain\t', NULL);
\echo :SQLSTATE
-- the key a row has is kept: a new label or type is no rewrite of the key
UPDATE incentives.groups SET label = 'Region 1', group_type = 'sales_region' WHERE group_key = 'REGION_1';
SELECT * FROM incentives.groups ORDER BY group_key COLLATE "C";
-- The shard functions a coordinator runs on every partition
-- (docs/scaling.md): an idempotent upsert, true when the group is new;
-- the table's checks apply; shard_summary digests the table.
SELECT incentives_internal.put_group('chain_c', 'chain') AS new,
       incentives_internal.put_group('chain_c', 'chain', 'Chain C') AS again;
SELECT incentives_internal.put_group('CHAIN_C', 'chain');
\echo :SQLSTATE
SELECT * FROM incentives.groups WHERE group_key = 'chain_c';
SELECT object, row_count FROM incentives_internal.shard_summary(1, 0) WHERE object = 'groups';
SELECT incentives_internal.delete_group('chain_c') AS existed,
       incentives_internal.delete_group('chain_c') AS again;
TRUNCATE incentives.groups;

-- An offer aggregated by group is calculated over the windows: store_1's
-- purchases go to chain_a until March, to chain_b from April; store_2's
-- to chain_b in 2025 and chain_a from 2026.
INSERT INTO incentives.offers (document) VALUES
('{"offer_key": "v.group", "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "aggregation": "group",
   "periods": [{"key": "p", "start_date": "2025-01-01", "end_date": "2026-12-31"}],
   "incentives": [{"period_key": "p", "transaction_type": "buy",
                   "rates": [{"sku_key": "s", "rate": 1, "measure": "percent"}]}]}');
INSERT INTO incentives.transactions VALUES
  ('V-1', 'store_1', 'buy', '2026-03-31', 's', 1, 'ea', 100),
  ('V-2', 'store_1', 'buy', '2026-04-01', 's', 1, 'ea', 200),
  ('V-3', 'store_2', 'buy', '2025-12-31', 's', 1, 'ea', 300),
  ('V-4', 'store_2', 'buy', '2026-01-01', 's', 1, 'ea', 400),
  ('V-5', 'store_5', 'buy', '2026-01-01', 's', 1, 'ea', 500);
SELECT participant_key, transaction_id, incentive_amount, group_key
  FROM incentives.incentive_calculate()
 ORDER BY transaction_id;
-- The programs show the aggregation.
SELECT offer_key, aggregation FROM incentives.programs ORDER BY offer_key;
DELETE FROM incentives.offers;
DELETE FROM incentives.transactions;
TRUNCATE incentives.participant_groups, incentives.offers, incentives.transactions;
