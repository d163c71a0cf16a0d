-- stepped_property: the worked property-based stepped example
-- (docs/reference.md, Stepped): the tier is chosen by business_plan_achieved,
-- from the call's properties when given there, else from
-- incentives.participant_properties.
-- Fixture: test/fixtures/stepped_property/ (see its README.md).
\set fixture stepped_property
\i test/sql/load_fixture.psql

-- The call's properties (properties.json):
\echo :properties

-- The checks every fixture gets, with the call's properties: its rows, the
-- decisive comparison with expected.csv, per-participant calls, totals, the
-- unique row key, one participant's earnings, what earns nothing.
\i test/sql/fixture_checks.psql

-- Second run: no call properties, so the stored values choose the tier:
-- retailer_001 (100) 2%, retailer_002 (80) 1.88% (generated tier key),
-- retailer_003 (70) and retailer_004 (no value) nothing.  Compared with
-- expected_stored.csv.
TRUNCATE expected;
\copy expected (participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key, incentive_rate_measure, incentive_rate_value, offer_sku_pay_rate, transaction_id, provided_quantity, provided_uom_key, provided_amount, incentivized_quantity, incentivized_amount, incentive_amount, incentive_contribution_percent, incentive_effective_rate) FROM 'test/fixtures/stepped_property/expected_stored.csv' WITH (FORMAT csv, HEADER true)

-- The rows, the decisive check against expected_stored.csv, per-participant
-- calls, totals and the unique row key, without call properties.
\set properties '{}'
\i test/sql/fixture_compare.psql

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
