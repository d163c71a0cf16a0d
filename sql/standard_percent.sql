-- standard_percent: the reference document's standard example (SPEC §2.1):
-- 3% of the amount; a return, a wrong transaction type, a date after the
-- period and an SKU outside the offer; a half-cent tie that rounds away from
-- zero.
-- Fixture: test/fixtures/standard_percent/ (see its README.md).
\set fixture standard_percent
\i test/sql/load_fixture.psql

-- The calculation's rows.
SELECT * FROM incentives.incentive_calculate()
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id;

-- The decisive check: the rows of expected.csv, compared as text (so 1500.00
-- and 1500.0 differ); no row may be missing or unexpected.
WITH actual AS (SELECT * FROM pg_temp.actual())
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- Called once per participant, the calculation returns the same rows.
WITH actual AS (
  SELECT a.*
    FROM (SELECT DISTINCT participant_key FROM incentives.transactions) p,
         LATERAL pg_temp.actual(participant_key => p.participant_key) a)
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- Totals per participant, beside the totals of expected.csv.
SELECT participant_key, a.rows, a.incentive_amount, x.expected_incentive_amount
  FROM (SELECT participant_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
          FROM incentives.incentive_calculate()
         GROUP BY participant_key) a
  FULL JOIN (SELECT participant_key, sum(incentive_amount::numeric) AS expected_incentive_amount
               FROM expected
              GROUP BY participant_key) x USING (participant_key)
 ORDER BY participant_key;

-- (transaction_id, offer_key, incentive_rate_key) is unique: no rows.
SELECT transaction_id, offer_key, incentive_rate_key, count(*)
  FROM incentives.incentive_calculate()
 GROUP BY transaction_id, offer_key, incentive_rate_key
HAVING count(*) > 1
 ORDER BY 1, 2, 3;

-- One participant's earnings.
SELECT offer_key, incentive_rate_key, transaction_id, incentivized_amount, incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_001')
 ORDER BY offer_key, incentive_rate_key, transaction_id;

-- Transactions that earn nothing under any offer.
SELECT t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date, t.sku_key
  FROM incentives.transactions t
 WHERE NOT EXISTS (SELECT 1 FROM incentives.incentive_calculate() e
                    WHERE e.transaction_id = t.transaction_id)
 ORDER BY t.transaction_id;

-- The reference row: $1,500 on $50,000.
SELECT transaction_id, incentivized_amount, incentive_amount, incentive_effective_rate
  FROM incentives.incentive_calculate(participant_key => 'retailer_001')
 WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W';

-- The half-cent tie: 3% of $0.50 is $0.015, reported as 0.02 and, for the
-- return, -0.02 (half away from zero, SPEC §3.1).
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
