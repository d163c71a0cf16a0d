-- rules_requirements: qualification gates (docs/reference.md,
-- Requirements) on the reference's stacked pair-up offer: at least $50,000
-- of seed sales and business_plan_achieved >= 90.  Only retailer_001
-- qualifies and earns the reference's $813.56.
-- Fixture: test/fixtures/rules_requirements/ (see its README.md).
\set fixture rules_requirements
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- Each requirement's value against its minimum.
SELECT participant_key, r ->> 'key' AS requirement, r ->> 'value' AS value, r ->> 'minimum' AS minimum,
       r ->> 'met' AS met, r ->> 'gap' AS gap, diagnostics -> 'rules' ->> 'qualified' AS qualified
  FROM incentives.incentive_diagnostics() AS d,
       jsonb_array_elements(d.diagnostics -> 'rules' -> 'requirements') AS r
 ORDER BY participant_key, r ->> 'key';

-- The call's properties come first: retailer_002 at 90% of plan qualifies.
SELECT transaction_id, incentive_amount
  FROM incentives.incentive_calculate('retailer_002', properties => '{"business_plan_achieved": 90}');

-- A property that is not a number is an error naming it and the participant.
\set VERBOSITY default
\set SHOW_CONTEXT never
SELECT count(*) FROM incentives.incentive_calculate('retailer_001', properties => '{"business_plan_achieved": "yes"}');
\echo :SQLSTATE
\set VERBOSITY terse
