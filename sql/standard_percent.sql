-- standard_percent: the worked standard example (docs/reference.md, Standard):
-- 3% of the amount; a return, a wrong transaction type, a date after the
-- period and an SKU outside the offer; a half-cent tie that rounds away from
-- zero.
-- Fixture: test/fixtures/standard_percent/ (see its README.md).
\set fixture standard_percent
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- The reference row: $1,500 on $50,000.
SELECT transaction_id, incentivized_amount, incentive_amount, incentive_effective_rate
  FROM incentives.incentive_calculate(participant_key => 'retailer_001')
 WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W';

-- The half-cent tie: 3% of $0.50 is $0.015, reported as 0.02 and, for the
-- return, -0.02 (half away from zero, docs/reference.md, Rounding).
SELECT transaction_id, incentivized_amount, incentive_amount, incentive_effective_rate
  FROM incentives.incentive_calculate(participant_key => 'retailer_002')
 ORDER BY transaction_id;

-- Naming the offer returns the same rows as naming none.
WITH actual AS (
  SELECT * FROM pg_temp.actual(
    offer_keys => ARRAY['corteva.2026.retailer.local.crop_protection.base']))
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;
