-- standard_multi_entry: two standard entries on the same SKU without keys
-- (docs/reference.md, Standard): keys generated as
-- {period_key}_{transaction_type}; each entry applies on its own period and
-- transaction type, both ends of a period inclusive.
-- Fixture: test/fixtures/standard_multi_entry/ (see its README.md).
\set fixture standard_multi_entry
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- Rows per generated entry key.
SELECT incentive_rate_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.incentive_calculate()
 GROUP BY incentive_rate_key
 ORDER BY incentive_rate_key;
