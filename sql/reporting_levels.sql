-- reporting_levels: the roll-up reporting views (docs/analyst-guide.md,
-- Reporting views): incentives.earnings_by_group_level counts each
-- materialized row under every ancestor group of its participant on the
-- row's transaction_date, incentives.earnings_by_product under every
-- product node its SKU is in on that date; program_rates shows each
-- offer's group_type.  On the fixtures hierarchy_region_chain and
-- products_brands_categories (test/fixtures/*/README.md), refreshed in a
-- transaction rolled back at the end (the tests after this one expect no
-- refresh).

------------------------------------------------------------------------
-- Groups at every level
------------------------------------------------------------------------
\set fixture hierarchy_region_chain
\i test/sql/load_fixture.psql

-- program_rates: every rate row carries its offer's group_type, as
-- programs shows it.
SELECT DISTINCT r.offer_key, r.group_type, p.group_type AS programs_group_type
  FROM incentives.program_rates AS r
  JOIN incentives.programs AS p USING (offer_key)
 ORDER BY 1;

BEGIN;
SET LOCAL client_min_messages = warning;
CALL incentives.refresh_earnings();

-- The 25 rows of expected.csv (three offers; percent rows, so each row's
-- incentivized_amount is its transaction's amount).  Each participant's
-- ancestors on its transactions' dates:
--   loc_a   2025-11-10  chain_north (1), region_west (2)
--   loc_b   2025-12-05  chain_north (1), region_west (2)
--   loc_b   2026-04-10  chain_south (1), region_west (2)
--   loc_c   2025-11-20  chain_south (1) (not yet in region_west)
--   loc_c   2026-05-15  chain_south (1), region_west (2)
--   loc_e   2026-07-01  chain_east (1), region_west (2)
--   chain_north, chain_east 2026-02-01: region_west (1), and themselves
--           at depth 0 (each is a group of some membership row)
--   loc_d   in no group: under no key.
-- So, in incentive_amount:
--   chain_east  0: H-E1 180+270+270 = 720 (3 rows, 27,000 incentivized)
--   chain_east  1: H-E2 120+180+180 = 480 (3 rows, 18,000)
--   chain_north 0: H-N1 20+60 = 80 (2 rows, 4,000)
--   chain_north 1: H-A1 60+180+180 + H-B1 50+150+150 = 770 (6 rows, 33,000)
--   chain_south 1: H-B2 80+120+120 + H-C1 60+30+30 + H-C2 160+240+240
--                  = 1,080 (9 rows, 45,000)
--   region_west 1: H-N1 80 + H-E1 720 = 800 (5 rows, 31,000)
--   region_west 2: H-A1 420 + H-B1 350 + H-B2 320 + H-C2 640 + H-E2 480
--                  = 2,210 (15 rows, 87,000; members loc_a, loc_b, loc_c,
--                  loc_e)
-- whatever offer aggregation each row was calculated under.
SELECT group_key, group_type, depth, members, offers, transactions, rows,
       incentivized_amount, incentive_amount
  FROM incentives.earnings_by_group_level
 ORDER BY group_key, depth;

-- A group's total is the sum over its depths: region_west has every row
-- but loc_d's (30.00) and loc_c's November purchase (120.00), 3,160.00 -
-- 150.00 = 3,010.00.
SELECT sum(incentive_amount) AS all_rows FROM incentives.earnings;
SELECT group_key, sum(rows) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings_by_group_level
 GROUP BY group_key
 ORDER BY group_key;

-- Restored data may hold a cycle the trigger would refuse (triggers off
-- here, as session_replication_role = replica leaves them): region_west
-- in chain_north.  The walk up stops at a key already on its path, so no
-- row counts twice under one key: loc_a's, loc_b's December and
-- chain_north's rows reach chain_north once, as above; the rows that
-- reach region_west through another chain now reach chain_north above it
-- too, at depth 2 (chain_east's H-E1, 720.00) and 3 (H-B2 320.00 + H-C2
-- 640.00 + H-E2 480.00 = 1,440.00, 9 rows).
SET LOCAL session_replication_role = replica;
INSERT INTO incentives.participant_groups VALUES ('region_west', 'chain_north', '2025-01-01', NULL);
SET LOCAL session_replication_role = origin;
SELECT group_key, depth, rows, incentive_amount
  FROM incentives.earnings_by_group_level
 ORDER BY group_key, depth;
ROLLBACK;

------------------------------------------------------------------------
-- Products
------------------------------------------------------------------------
\set fixture products_brands_categories
\i test/sql/load_fixture.psql

BEGIN;
SET LOCAL client_min_messages = warning;
CALL incentives.refresh_earnings();
-- Two offers' rows (a standard and a stepped offer), to be added up by
-- hand:
DELETE FROM incentives.earnings
 WHERE offer_key NOT IN ('mfr.2026.brand_rates', 'mfr.2026.herbicides_ex_generics');
SELECT offer_key, transaction_id, sku_key, transaction_date, incentivized_amount, incentive_amount
  FROM incentives.earnings
 ORDER BY transaction_id, offer_key;

-- The nodes each SKU is in on its rows' dates (its windows and their
-- ancestors):
--   glyphos_pro_2.5_gal  glyphos_pro, glyphos, herbicides
--   glyphos_1_gal        glyphos, herbicides; premium
--   generic_...          generic_herbicides, herbicides
--   switch_blend_1_gal   2026-03-20 (PB-04): shield, fungicides;
--                        2026-05-05 (PB-05): glyphos, herbicides
--   shield_fungicide     shield, fungicides; value
-- So, in incentive_amount:
--   glyphos_pro: PB-01 200+80 = 280 (2 rows, 8,000 incentivized)
--   glyphos: PB-01 280 + PB-02 90+60 + PB-05 36+24 + PB-21 180+60 = 730
--            (8 rows, 4 transactions, 28,400)
--   herbicides: glyphos's 730 + PB-03 50 + PB-22 100 = 880 (10 rows,
--            6 transactions, 35,900)
--   generic_herbicides: PB-03 50 + PB-22 100 = 150 (2 rows, 1 offer)
--   shield, fungicides: PB-04 10 + PB-06 8 = 18 (2 rows, 1,800)
--   premium: PB-02 150 + PB-21 240 = 390 (4 rows, 18,000)
--   value: PB-06 8 (1 row)
-- (surfactant_1_gal is in no node and earns nothing here anyway.)
SELECT product_key, parent_key, label, offers, participants, transactions, rows,
       incentivized_amount, incentive_amount
  FROM incentives.earnings_by_product
 ORDER BY product_key;

-- A SKU reaching a node through two windows counts there once:
-- glyphos_pro_2.5_gal also directly in herbicides leaves herbicides at 10
-- rows and 880.00.
INSERT INTO incentives.sku_products (sku_key, product_key) VALUES ('glyphos_pro_2.5_gal', 'herbicides');
SELECT product_key, rows, incentive_amount
  FROM incentives.earnings_by_product
 WHERE product_key IN ('glyphos_pro', 'glyphos', 'herbicides')
 ORDER BY product_key;

-- A cycle in restored data (triggers off): herbicides under glyphos_pro.
-- The three nodes of the cycle are then each other's ancestors, so each
-- has the rows of all three (10 rows, 880.00) and generic_herbicides,
-- below herbicides, keeps its own; the walk ends.
SET LOCAL session_replication_role = replica;
UPDATE incentives.products SET parent_key = 'glyphos_pro' WHERE product_key = 'herbicides';
SET LOCAL session_replication_role = origin;
SELECT product_key, parent_key, rows, incentive_amount
  FROM incentives.earnings_by_product
 WHERE product_key IN ('glyphos_pro', 'glyphos', 'herbicides', 'generic_herbicides')
 ORDER BY product_key;
ROLLBACK;
