-- demo.sql: the main job on a throwaway cluster (`make demo`, which runs
-- `psql -f demo/demo.sql` from the repository root).  It installs the
-- extension, loads the reference document's three worked examples from
-- test/fixtures/ (standard_percent, stepped_amount, stacked_pair_up) and
-- prints what every participant earns.
--
-- The three examples reuse transaction ids and participants, so each one's
-- transactions go into a table of its own (schema incentives_demo, dropped and
-- made anew on each run), and each calculation names its offer and its table:
-- incentive_calculate reads any relation with the transaction columns.  Your
-- own data would go into incentives.transactions, the default.
\set ON_ERROR_STOP on
\set QUIET on
\pset footer off
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS incentives;
DROP SCHEMA IF EXISTS incentives_demo CASCADE;
CREATE SCHEMA incentives_demo;

-- Offers: each fixture's offers.json is an array of offer documents; every
-- insert is validated.
\set offers `cat test/fixtures/standard_percent/offers.json`
INSERT INTO incentives.offers (document) SELECT jsonb_array_elements(:'offers'::jsonb)
ON CONFLICT (offer_key) DO NOTHING;
\set offers `cat test/fixtures/stepped_amount/offers.json`
INSERT INTO incentives.offers (document) SELECT jsonb_array_elements(:'offers'::jsonb)
ON CONFLICT (offer_key) DO NOTHING;
\set offers `cat test/fixtures/stacked_pair_up/offers.json`
INSERT INTO incentives.offers (document) SELECT jsonb_array_elements(:'offers'::jsonb)
ON CONFLICT (offer_key) DO NOTHING;

-- Transactions, one table per example.
CREATE TABLE incentives_demo.standard_transactions (LIKE incentives.transactions INCLUDING ALL);
CREATE TABLE incentives_demo.stepped_transactions  (LIKE incentives.transactions INCLUDING ALL);
CREATE TABLE incentives_demo.stacked_transactions  (LIKE incentives.transactions INCLUDING ALL);
\copy incentives_demo.standard_transactions (transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount) FROM 'test/fixtures/standard_percent/transactions.csv' WITH (FORMAT csv, HEADER true)
\copy incentives_demo.stepped_transactions (transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount) FROM 'test/fixtures/stepped_amount/transactions.csv' WITH (FORMAT csv, HEADER true)
\copy incentives_demo.stacked_transactions (transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount) FROM 'test/fixtures/stacked_pair_up/transactions.csv' WITH (FORMAT csv, HEADER true)

-- The three calculations, kept for the totals at the end.
CREATE TEMP TABLE earnings AS
SELECT 'standard' AS example, e.*
  FROM incentives.incentive_calculate(
         offer_keys   => ARRAY['corteva.2026.retailer.local.crop_protection.base'],
         transactions => 'incentives_demo.standard_transactions') e
UNION ALL
SELECT 'stepped', e.*
  FROM incentives.incentive_calculate(
         offer_keys   => ARRAY['offer_a'],
         transactions => 'incentives_demo.stepped_transactions') e
UNION ALL
SELECT 'stacked', e.*
  FROM incentives.incentive_calculate(
         offer_keys   => ARRAY['basf.2026.retailer.local.seed_treatment_soybean_pair_up.ilevo'],
         transactions => 'incentives_demo.stacked_transactions') e;

\echo
\echo '== 1. standard: 3% of the amount (corteva.2026.retailer.local.crop_protection.base)'
\echo '   01JAD80XDZGZNTYDRV4H56221W: 3% of $50,000 = $1,500.00.  A return earns a negative'
\echo '   amount; a sale to a grower, a date after the period and an SKU outside the offer'
\echo '   earn nothing; 3% of $0.50 rounds half away from zero to $0.02.'
\echo
SELECT participant_key, transaction_id, sku_key, incentive_rate_key, offer_sku_pay_rate AS pay_rate,
       incentivized_amount, incentive_amount, incentive_effective_rate AS effective_rate
  FROM earnings WHERE example = 'standard'
 ORDER BY participant_key, transaction_id;

\echo
\echo '== 2. stepped by amount: the tier applies to every earning purchase (offer_a)'
\echo '   retailer_001 buys $2,300 of the threshold SKUs: 15% tier.  The program price'
\echo '   $50/gal makes 1,570 gal worth $78,500 (not the $86,350 paid): 15% = $11,775.00.'
\echo '   retailer_002 reaches the 10% tier; retailer_003 ($999.99) none.'
\echo
SELECT participant_key, transaction_id, sku_key, incentive_rate_key, provided_amount,
       incentivized_amount, incentive_amount, incentive_effective_rate AS effective_rate
  FROM earnings WHERE example = 'stepped'
 ORDER BY participant_key, transaction_id;

\echo
\echo '== 3. stacked: seed + seed treatment on the same acres (basf...pair_up.ilevo)'
\echo '   retailer_001: 10 gal of treatment cover 1,084.75 acres, all under its 1,200 acres'
\echo '   of seed: 1,084.75 x $0.75 = $813.56.  retailer_003 has more treatment than seed,'
\echo '   so each treatment row counts 80%; retailer_004 has no seed and earns nothing.'
\echo
SELECT participant_key, transaction_id, incentive_rate_key, provided_quantity, incentivized_quantity,
       incentive_contribution_percent AS contribution, incentive_amount,
       incentive_effective_rate AS effective_rate
  FROM earnings WHERE example = 'stacked'
 ORDER BY participant_key, transaction_id;

\echo
\echo '== Totals per participant and offer'
\echo
SELECT participant_key, offer_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM earnings
 GROUP BY participant_key, offer_key
 ORDER BY participant_key COLLATE "C", offer_key COLLATE "C";
