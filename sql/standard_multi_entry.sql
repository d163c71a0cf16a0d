-- standard_multi_entry: two standard entries on the same SKU without keys
-- (SPEC §2.1): keys generated as {period_key}_{transaction_type}; each entry
-- applies on its own period and transaction type, both ends of a period
-- inclusive.
-- Fixture: test/fixtures/standard_multi_entry/ (see its README.md).
\set fixture standard_multi_entry
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

-- Rows per generated entry key.
SELECT incentive_rate_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.incentive_calculate()
 GROUP BY incentive_rate_key
 ORDER BY incentive_rate_key;
