-- stacked_pair_up: the worked stacked example (docs/reference.md, Stacked):
-- seed (rate $0, 1 unit = 1 acre) anchors the acres that seed treatment
-- (0.00921875 gal per acre) pays $0.75 on; only the overlap pays.
-- Fixture: test/fixtures/stacked_pair_up/ (see its README.md).
\set fixture stacked_pair_up
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- The reference row: 10 gal cover 1,084.75 acres, all overlapped by 1,200
-- acres of seed: $813.56 at contribution 1.
SELECT transaction_id, incentivized_quantity, incentivized_amount, incentive_amount,
       incentive_contribution_percent, incentive_effective_rate
  FROM incentives.incentive_calculate(participant_key => 'retailer_001')
 ORDER BY transaction_id;

-- retailer_004 has treatment but no seed: no overlap, no rows.
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_004');
