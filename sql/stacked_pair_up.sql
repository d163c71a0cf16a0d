-- stacked_pair_up: the reference document's stacked example (SPEC §2.3): seed
-- (rate $0, 1 unit = 1 acre) anchors the acres that seed treatment
-- (0.00921875 gal per acre) pays $0.75 on; only the overlap pays.
-- Fixture: test/fixtures/stacked_pair_up/ (see its README.md).
\set fixture stacked_pair_up
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

-- The reference row: 10 gal cover 1,084.75 acres, all overlapped by 1,200
-- acres of seed: $813.56 at contribution 1.
SELECT transaction_id, incentivized_quantity, incentivized_amount, incentive_amount,
       incentive_contribution_percent, incentive_effective_rate
  FROM incentives.incentive_calculate(participant_key => 'retailer_001')
 ORDER BY transaction_id;

-- retailer_004 has treatment but no seed: no overlap, no rows.
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_004');
