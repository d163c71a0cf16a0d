-- stepped_amount: the worked amount-based stepped example (docs/reference.md,
-- Stepped): the tier is chosen by the dollars of other SKUs and applies to
-- every earning transaction; a program price makes incentivized_amount
-- quantity x price.
-- Fixture: test/fixtures/stepped_amount/ (see its README.md).
\set fixture stepped_amount
\i test/sql/load_fixture.psql

-- The checks every fixture gets: its rows, the decisive comparison with
-- expected.csv, per-participant calls, totals, the unique row key.
\i test/sql/fixture_checks.psql

-- The reference row: 1,570 gal at the program price $50 = $78,500, 15% = $11,775.
SELECT transaction_id, provided_amount, incentivized_quantity, incentivized_amount, incentive_amount
  FROM incentives.incentive_calculate(participant_key => 'retailer_001', offer_keys => ARRAY['offer_a'])
 WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W';

-- retailer_003 reaches no tier ($999.99 < $1,000): no rows.
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_003');

-- A participant with no transactions: no rows.
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'retailer_999');
