-- stepped_property: the worked property-based stepped example
-- (docs/reference.md, Stepped): the tier is chosen by business_plan_achieved,
-- from the call's properties when given there, else from
-- incentives.participant_properties.
-- Fixture: test/fixtures/stepped_property/ (see its README.md).
\set fixture stepped_property
\i test/sql/load_fixture.psql

-- The call's properties (properties.json):
\echo :properties

-- The calculation's rows.
SELECT * FROM incentives.incentive_calculate(properties => :'properties')
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id;

-- The decisive check: the rows of expected.csv, compared as text (so 1500.00
-- and 1500.0 differ); no row may be missing or unexpected.
WITH actual AS (SELECT * FROM pg_temp.actual(properties => :'properties'))
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- Called once per participant, the calculation returns the same rows.
WITH actual AS (
  SELECT a.*
    FROM (SELECT DISTINCT participant_key FROM incentives.transactions) p,
         LATERAL pg_temp.actual(participant_key => p.participant_key, properties => :'properties') a)
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- Totals per participant, beside the totals of expected.csv.
SELECT participant_key, a.rows, a.incentive_amount, x.expected_incentive_amount
  FROM (SELECT participant_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
          FROM incentives.incentive_calculate(properties => :'properties')
         GROUP BY participant_key) a
  FULL JOIN (SELECT participant_key, sum(incentive_amount::numeric) AS expected_incentive_amount
               FROM expected
              GROUP BY participant_key) x USING (participant_key)
 ORDER BY participant_key;

-- (transaction_id, offer_key, incentive_rate_key) is unique: no rows.
SELECT transaction_id, offer_key, incentive_rate_key, count(*)
  FROM incentives.incentive_calculate(properties => :'properties')
 GROUP BY transaction_id, offer_key, incentive_rate_key
HAVING count(*) > 1
 ORDER BY 1, 2, 3;

-- One participant's earnings.
SELECT offer_key, incentive_rate_key, transaction_id, incentivized_amount, incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_001', properties => :'properties')
 ORDER BY offer_key, incentive_rate_key, transaction_id;

-- Transactions that earn nothing under any offer.
SELECT t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date, t.sku_key
  FROM incentives.transactions t
 WHERE NOT EXISTS (SELECT 1 FROM incentives.incentive_calculate(properties => :'properties') e
                    WHERE e.transaction_id = t.transaction_id)
 ORDER BY t.transaction_id;

-- Second run: no call properties, so the stored values choose the tier:
-- retailer_001 (100) 2%, retailer_002 (80) 1.88% (generated tier key),
-- retailer_003 (70) and retailer_004 (no value) nothing.  Compared with
-- expected_stored.csv.
TRUNCATE expected;
\copy expected FROM 'test/fixtures/stepped_property/expected_stored.csv' WITH (FORMAT csv, HEADER true)

-- The calculation's rows.
SELECT * FROM incentives.incentive_calculate()
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id;

-- The decisive check against expected_stored.csv: nothing missing or
-- unexpected.
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

-- Totals per participant, beside the totals of expected_stored.csv.
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

-- A call property of another name leaves the stored values in charge.
WITH actual AS (SELECT * FROM pg_temp.actual(properties => '{"unrelated": 1}'))
(SELECT 'missing' AS problem, * FROM (TABLE expected EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE expected) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- What-if for one participant: retailer_003 at 100% of plan gets the 2% tier.
SELECT transaction_id, incentive_rate_key, offer_sku_pay_rate, incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_003',
                                      properties => '{"business_plan_achieved": 100}')
 ORDER BY transaction_id;

-- Just below the lowest tier: nothing.
SELECT count(*)
  FROM incentives.incentive_calculate(participant_key => 'retailer_001',
                                      properties => '{"business_plan_achieved": 74.99}');
