-- fixed_amount_pools: fixed dollar pools (docs/reference.md, Fixed pools),
-- standard (one pool per SKU within an entry) and stepped (one pool over all
-- earning transactions); penny-exact running-share allocation; a pool whose
-- base nets to zero pays nothing.
-- Fixture: test/fixtures/fixed_amount_pools/ (see its README.md).
\set fixture fixed_amount_pools
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- Every pool is paid out exactly: the shares add up to the pool.
SELECT participant_key, offer_key, incentive_rate_value AS pool,
       sum(incentive_amount) AS paid, count(*) AS rows
  FROM incentives.incentive_calculate()
 GROUP BY participant_key, offer_key, incentive_rate_value
 ORDER BY participant_key, offer_key, pool;

-- offer_keys filter: only the standard pool offer.
SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['bayer.2026.retailer.fixed_bonus'])
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id;

-- The filtered call returns exactly that offer's expected rows.
WITH actual AS (SELECT * FROM pg_temp.actual(offer_keys => ARRAY['bayer.2026.retailer.fixed_bonus'])),
     wanted AS (SELECT * FROM expected WHERE offer_key = 'bayer.2026.retailer.fixed_bonus')
(SELECT 'missing' AS problem, * FROM (TABLE wanted EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE wanted) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;

-- A participant and an offer together.
WITH actual AS (SELECT * FROM pg_temp.actual(participant_key => 'retailer_001',
                                              offer_keys => ARRAY['bayer.2026.retailer.stepped_fixed'])),
     wanted AS (SELECT * FROM expected
                 WHERE participant_key = 'retailer_001'
                   AND offer_key = 'bayer.2026.retailer.stepped_fixed')
(SELECT 'missing' AS problem, * FROM (TABLE wanted EXCEPT ALL TABLE actual) m)
UNION ALL
(SELECT 'unexpected', * FROM (TABLE actual EXCEPT ALL TABLE wanted) u)
 ORDER BY participant_key, offer_key, incentive_rate_key, transaction_id, problem;
