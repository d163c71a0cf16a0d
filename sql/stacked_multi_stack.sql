-- stacked_multi_stack: two stacks over three SKU sets (docs/reference.md,
-- Stacked): a treatment transaction earns once per stack; the key of a stack
-- without one is its set keys joined with _and_; the insecticide's coverage
-- is converted from gal to fl_oz.
-- Fixture: test/fixtures/stacked_multi_stack/ (see its README.md).
\set fixture stacked_multi_stack
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- Per stack: rows, contribution factors and the amount paid.
SELECT incentive_rate_key, sku_key, count(*) AS rows,
       min(incentive_contribution_percent) AS contribution,
       sum(incentive_amount) AS incentive_amount
  FROM incentives.incentive_calculate()
 GROUP BY incentive_rate_key, sku_key
 ORDER BY incentive_rate_key, sku_key;
