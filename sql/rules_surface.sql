-- rules_surface: the program rules on every surface (docs/analyst-guide.md,
-- Program rules): programs and program_rates, tier_progress and
-- requirement_progress, incentive_explain, and the calculate(jsonb)
-- what-if with enrollment windows of its own.
\set VERBOSITY default
\set SHOW_CONTEXT never

------------------------------------------------------------------------
-- programs and program_rates: the rule fields as the engine compiled them
------------------------------------------------------------------------
\set fixture rules_requirements
\i test/sql/load_fixture.psql
SELECT offer_key, tier_mode, enrollment, jsonb_pretty(requirements) AS requirements, limit_minimum, limit_maximum
  FROM incentives.programs ORDER BY offer_key;

\set fixture rules_limits
\i test/sql/load_fixture.psql
SELECT offer_key, strategy_key, tier_mode, enrollment, requirements, limit_minimum, limit_maximum
  FROM incentives.programs ORDER BY offer_key;

\set fixture rules_incremental_tiers
\i test/sql/load_fixture.psql
SELECT offer_key, tier_mode, enrollment, requirements, limit_minimum, limit_maximum
  FROM incentives.programs ORDER BY offer_key;
SELECT offer_key, rate_key, rate_value, measure, threshold, threshold_type, tier_mode
  FROM incentives.program_rates ORDER BY offer_key, threshold;

------------------------------------------------------------------------
-- tier_progress: incremental tiers, the blended rate now and at the next
-- threshold
------------------------------------------------------------------------
SELECT participant_key, offer_key, threshold_value, current_rate_key, next_rate_key, gap_to_next,
       earned_now, earned_at_next, tier_mode, blended_rate, blended_rate_at_next, qualified,
       requirement_gaps, limit_applied
  FROM incentives.tier_progress();

-- earned_now is what incentive_calculate pays (no rows).
SELECT tp.participant_key, tp.offer_key, tp.earned_now, c.total
  FROM incentives.tier_progress() tp
  LEFT JOIN (SELECT participant_key, offer_key, sum(incentive_amount) AS total
               FROM incentives.incentive_calculate() GROUP BY 1, 2) c USING (participant_key, offer_key)
 WHERE tp.earned_now <> COALESCE(c.total, 0);

-- The explanation of an incremental offer: the bands and the blended rate.
SELECT jsonb_pretty(x - 'rows' - 'tiers')
  FROM incentives.incentive_explain('retailer_001', 'mfr.2026.growth.incremental_percent') x;

------------------------------------------------------------------------
-- requirement_progress and tier_progress on requirements and limits
------------------------------------------------------------------------
\set fixture rules_requirements
\i test/sql/load_fixture.psql
SELECT * FROM incentives.requirement_progress();
SELECT * FROM incentives.requirement_progress('retailer_002', properties => '{"business_plan_achieved": 91}');
-- through_date: retailer_004's seed sale is dated 2026-03-21; as_of: before
-- the offer was stored there was no offer to qualify for.
SELECT t.d AS through_date, participant_key, requirement_key, value, gap, met
  FROM (VALUES (date '2026-03-20'), (date '2026-03-21')) AS t(d)
 CROSS JOIN LATERAL incentives.requirement_progress('retailer_004', through_date => t.d);
SELECT count(*) FROM incentives.requirement_progress(as_of => '2000-01-01');

-- A stepped offer with a requirement and a cap, from inline documents.
INSERT INTO incentives.offers (document) VALUES ($${
  "offer_key": "capped_stepped", "strategy_key": "stepped", "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {
    "filters": [{"period_key": "p", "sku_keys": ["field_hammer_fungicide_bulk_52112"], "transaction_type": "retailer_sales_to_growers"}],
    "threshold_definition": {"type": "aggregated_amount",
      "filters": [{"period_key": "p", "sku_keys": ["field_hammer_fungicide_bulk_52112"], "transaction_type": "retailer_sales_to_growers"}]},
    "rates": [{"threshold": 2000, "value": 10, "measure": "percent"}, {"threshold": 4000, "value": 20, "measure": "percent"}]},
  "requirements": [{"key": "plan", "type": "property", "property": {"key": "business_plan_achieved"}, "minimum": 90}],
  "limits": {"maximum": 500}}$$);
SELECT participant_key, threshold_value, current_rate_key, earned_now, earned_at_next, qualified,
       requirement_gaps, limit_applied
  FROM incentives.tier_progress() WHERE offer_key = 'capped_stepped';
SELECT participant_key, sum(incentive_amount)
  FROM incentives.incentive_calculate(offer_keys => ARRAY['capped_stepped'])
 GROUP BY participant_key ORDER BY participant_key;

-- The explanation of the qualified stacked offer: its rules beside the stacks.
SELECT jsonb_pretty(x -> 'rules'), x -> 'totals' AS totals
  FROM incentives.incentive_explain('retailer_001', 'basf.2026.retailer.local.seed_treatment_pair_up.qualified') x;
-- ... and of the capped stepped offer for retailer_001 ($4,700: 20% would be $940).
SELECT jsonb_pretty(x -> 'rules'), x -> 'totals' AS totals
  FROM incentives.incentive_explain('retailer_001', 'capped_stepped') x;

------------------------------------------------------------------------
-- calculate(jsonb): a what-if with enrollment windows of the request
------------------------------------------------------------------------
\set fixture rules_enrollment
\i test/sql/load_fixture.psql

-- retailer_002 is not enrolled: nothing; enrolled in the request, it earns,
-- and the response shows the windows the calculation used.
SELECT jsonb_array_length(incentives.calculate('{"participant_key": "retailer_002", "include_stored": true}') -> 'potential_earnings');
SELECT jsonb_pretty(incentives.calculate('{"participant_key": "retailer_002", "include_stored": true,
  "offer_keys": ["mfr.2026.enrolled_standard"],
  "enrollments": [{"offer_key": "mfr.2026.enrolled_standard", "start_date": "2026-01-01"}]}'));
-- the request adds to the stored windows: retailer_001 also from October
SELECT e ->> 'transaction_id' AS transaction_id, e ->> 'incentive_amount' AS incentive_amount
  FROM jsonb_array_elements(incentives.calculate('{"participant_key": "retailer_001", "include_stored": true,
         "offer_keys": ["mfr.2026.enrolled_standard"],
         "enrollments": [{"participant_key": "retailer_001", "offer_key": "mfr.2026.enrolled_standard",
                          "start_date": "2025-10-01", "end_date": "2025-12-31"}]}') -> 'potential_earnings') e
 ORDER BY 1;
-- nothing was stored
SELECT count(*) FROM incentives.enrollments WHERE participant_key = 'retailer_002';

-- Bad enrollments in a request (22023, naming the field).
SELECT incentives.calculate('{"participant_key": "r", "enrollments": {}}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [1]}');
SELECT incentives.calculate('{"enrollments": [{"offer_key": "o", "start_date": "2026-01-01"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"participant_key": "s", "offer_key": "o", "start_date": "2026-01-01"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"start_date": "2026-01-01"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": 5, "start_date": "2026-01-01"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o", "start_date": "2026-02-30"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o", "start_date": "2026-01-01", "end_date": 20261231}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o", "start_date": "2026-01-01", "end_date": "2026-04-31"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o", "start_date": "2026-03-01", "end_date": "2026-02-28"}]}');
SELECT incentives.calculate('{"participant_key": "r", "enrollments": [{"offer_key": "o", "start_date": "2026-01-01", "end_date": "2026-06-30"},
                                                                     {"offer_key": "p", "start_date": "2026-01-01"},
                                                                     {"offer_key": "o", "start_date": "2026-06-30"}]}');
\echo :SQLSTATE
