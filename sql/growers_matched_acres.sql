-- growers_matched_acres: growers (docs/reference.md, Growers).  Seed and
-- seed treatment matched per retailer and per grower ("match": "grower"),
-- a requirement of scope grower with distinct_products ("one product of
-- two categories sold to the same grower"), and the same with a maximum:
-- the grower's rows are removed before the limits.
-- Fixture: test/fixtures/growers_matched_acres/ (see its README.md).
\set fixture growers_matched_acres
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- Each grower's rows in the grower-scoped offer, and who earns nothing:
-- farm_c (treatment only), farm_d (its seed returned in full) and the
-- line without a grower lose their rows.
SELECT transaction_id, grower_key, product_key, incentive_amount
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.seed_and_treatment_same_grower'])
 ORDER BY transaction_id;

-- The materialized earnings carry grower_key, also when a unit is read in
-- pages from a temporary file (a small work_mem), in a database of its
-- own.
\set regress_db :DBNAME
CREATE DATABASE incentives_growers;
\c incentives_growers
SET client_min_messages = warning;
CREATE EXTENSION incentives;
\i test/sql/load_fixture.psql
SET work_mem = '64kB';
CALL incentives.refresh_earnings();
RESET work_mem;
RESET client_min_messages;
SELECT offer_key, grower_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings
 GROUP BY offer_key, grower_key
 ORDER BY offer_key, grower_key NULLS FIRST;
\c :regress_db
DROP DATABASE incentives_growers;

-- Bad input of the new fields, refused with the offer and the JSON path.
\set VERBOSITY terse
INSERT INTO incentives.offers (document)
SELECT jsonb_set(document, '{incentive,match}', '"growers"')
  FROM incentives.offers WHERE offer_key = 'mfr.2026.pair_up_by_grower';
INSERT INTO incentives.offers (document)
SELECT jsonb_set(jsonb_set(document, '{offer_key}', '"bad.minimum"'),
                 '{requirements,0,minimum}', '3')
  FROM incentives.offers WHERE offer_key = 'mfr.2026.seed_and_treatment_same_grower';
INSERT INTO incentives.offers (document)
SELECT jsonb_set(jsonb_set(document, '{offer_key}', '"bad.scope"'),
                 '{requirements,0}', '{"key": "k", "type": "property", "property": {"key": "plan"}, "scope": "grower", "minimum": 1}')
  FROM incentives.offers WHERE offer_key = 'mfr.2026.seed_and_treatment_same_grower';
