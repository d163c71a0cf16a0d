-- surface: the analyst and BI surface (docs/analyst-guide.md) on the shared
-- fixtures: programs and program_rates, tier_progress and stack_progress,
-- incentive_explain, the calculate(jsonb) entry point, refresh_earnings with
-- its run log and the reporting views.  Every "no rows" query below is an
-- assertion: it lists what would be wrong.
\set VERBOSITY default
\set SHOW_CONTEXT never

------------------------------------------------------------------------
-- Stable names and types of the new relations and functions
------------------------------------------------------------------------
SELECT c.relname, c.relkind, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
 WHERE c.relnamespace = 'incentives'::regnamespace
   AND c.relname IN ('programs', 'program_rates', 'earnings', 'calculation_runs',
                     'earnings_by_participant', 'earnings_by_offer', 'earnings_by_sku',
                     'earnings_by_month', 'earnings_by_product', 'earnings_by_group_level')
 ORDER BY c.relname COLLATE "C", a.attnum;

SELECT p.oid::regprocedure AS routine, p.prokind AS kind,
       pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatility, p.proparallel AS parallel,
       p.proconfig AS config
  FROM pg_proc p
 WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
   AND p.proname IN ('calculate', 'incentive_explain', 'tier_progress', 'stack_progress',
                     'refresh_earnings', 'refresh_earnings_begin', 'refresh_earnings_work',
                     'calculate_is_date', 'explain_totals', 'explain_rows', 'progress_figure',
                     'offer_rates', 'offer_summary')
 ORDER BY p.oid::regprocedure::text COLLATE "C";

-- Views run with the caller's rights (row-level security applies).
SELECT c.relname, c.reloptions
  FROM pg_class c
 WHERE c.relnamespace = 'incentives'::regnamespace
   AND c.relname IN ('programs', 'program_rates', 'earnings_by_participant', 'earnings_by_offer',
                     'earnings_by_sku', 'earnings_by_month', 'earnings_by_product',
                     'earnings_by_group_level')
 ORDER BY c.relname COLLATE "C";

-- pg_dump keeps the earnings, the run log and its counter.
SELECT dumped
  FROM (SELECT unnest(extconfig)::regclass AS dumped
          FROM pg_extension WHERE extname = 'incentives') d
 WHERE dumped::text IN ('incentives.earnings', 'incentives.calculation_runs',
                        'incentives.calculation_runs_run_id_seq')
 ORDER BY dumped::text COLLATE "C";

------------------------------------------------------------------------
-- programs and program_rates
------------------------------------------------------------------------
\set fixture stepped_amount
\i test/sql/load_fixture.psql

SELECT p.offer_key, p.label, p.strategy_key, p.calculator_key, p.document = o.document AS same_document
  FROM incentives.programs p JOIN incentives.offers o USING (offer_key)
 ORDER BY p.offer_key;

SELECT * FROM incentives.program_rates ORDER BY offer_key, threshold;

-- The rates of the fixtures with keys left out (standard entries, stepped
-- tiers, stacks), as the engine lists them from the compiled offers: the
-- generated keys are the very ones the calculation's rows carry.
\set fixture standard_multi_entry
\i test/sql/load_fixture.psql
SELECT rate_key, sku_key, rate_value, measure, period_key, period_start_date, period_end_date, transaction_type
  FROM incentives.program_rates ORDER BY rate_key;

\set fixture stepped_property
\i test/sql/load_fixture.psql
SELECT rate_key, rate_value, measure, threshold, threshold_type, threshold_property_key
  FROM incentives.program_rates ORDER BY threshold;

\set fixture fixed_amount_pools
\i test/sql/load_fixture.psql
SELECT offer_key, strategy_key, calculator_key, rate_key, sku_key, rate_value, threshold, threshold_type
  FROM incentives.program_rates ORDER BY offer_key, rate_key, sku_key;

\set fixture stacked_multi_stack
\i test/sql/load_fixture.psql
SELECT rate_key, stack_key, sku_set_key, sku_key, rate_value, measure, period_key,
       transaction_type, coverage_unit, coverage_rate, coverage_uom_key
  FROM incentives.program_rates ORDER BY rate_key, sku_set_key;

------------------------------------------------------------------------
-- tier_progress and incentive_explain: stepped by amount
------------------------------------------------------------------------
\set fixture stepped_amount
\i test/sql/load_fixture.psql

-- retailer_001 is at the top tier; retailer_002 sits at 1150.00 between the
-- 1000 and 2000 tiers: 850.00 to go, and its $500 of earning purchases
-- would pay 75.00 instead of 50.00; retailer_003 is 0.01 short of the
-- first tier.
SELECT * FROM incentives.tier_progress();
SELECT * FROM incentives.tier_progress(participant_key => 'retailer_002');

-- earned_now is what incentive_calculate pays (no rows).
SELECT tp.participant_key, tp.offer_key, tp.earned_now, c.total
  FROM incentives.tier_progress() tp
  LEFT JOIN (SELECT participant_key, offer_key, sum(incentive_amount) AS total
               FROM incentives.incentive_calculate() GROUP BY 1, 2) c USING (participant_key, offer_key)
 WHERE tp.earned_now <> COALESCE(c.total, 0);

-- The whole explanation for retailer_002.
SELECT jsonb_pretty(incentives.incentive_explain('retailer_002', 'offer_a'));

-- The summary for each participant, and its totals beside the calculation's.
SELECT p.participant_key,
       x ->> 'threshold_value' AS threshold_value,
       x ->> 'selected_rate_key' AS selected,
       x ->> 'next_rate_key' AS next,
       x ->> 'gap_to_next' AS gap,
       (SELECT string_agg(format('%s:%s:%s', t ->> 'threshold', t ->> 'met', t ->> 'incentive_amount'), ' ')
          FROM jsonb_array_elements(x -> 'tiers') t) AS tiers,
       x -> 'totals' AS totals
  FROM (VALUES ('retailer_001'), ('retailer_002'), ('retailer_003'), ('retailer_999')) p(participant_key),
       LATERAL incentives.incentive_explain(p.participant_key, 'offer_a') x
 ORDER BY 1;

------------------------------------------------------------------------
-- Explain totals equal the calculation's, for every fixture, participant
-- and offer (no rows), and tier_progress pays what the calculation pays.
------------------------------------------------------------------------
CREATE TEMP TABLE explain_problems (fixture text, participant_key text, offer_key text, explained jsonb, calculated jsonb);
CREATE FUNCTION pg_temp.check_explain(fixture text, properties jsonb) RETURNS void
LANGUAGE sql AS $$
  INSERT INTO explain_problems
  SELECT fixture, x.participant_key, x.offer_key, x.totals, to_jsonb(c)
    FROM (SELECT p.participant_key, o.offer_key,
                 incentives.incentive_explain(p.participant_key, o.offer_key, properties) -> 'totals' AS totals
            FROM (SELECT DISTINCT participant_key FROM incentives.transactions) p, incentives.offers o) x
    LEFT JOIN (SELECT participant_key, offer_key, count(*) AS rows,
                      count(DISTINCT transaction_id) AS transactions,
                      sum(incentivized_amount) AS incentivized_amount, sum(incentive_amount) AS incentive_amount
                 FROM incentives.incentive_calculate(properties => properties) GROUP BY 1, 2) c
           USING (participant_key, offer_key)
   WHERE (x.totals ->> 'rows')::bigint <> COALESCE(c.rows, 0)
      OR (x.totals ->> 'transactions')::bigint <> COALESCE(c.transactions, 0)
      OR (x.totals ->> 'incentivized_amount')::numeric <> COALESCE(c.incentivized_amount, 0)
      OR (x.totals ->> 'incentive_amount')::numeric <> COALESCE(c.incentive_amount, 0)
  UNION ALL
  SELECT fixture, tp.participant_key, tp.offer_key, to_jsonb(tp), to_jsonb(c)
    FROM incentives.tier_progress(properties => properties) tp
    LEFT JOIN (SELECT participant_key, offer_key, sum(incentive_amount) AS total
                 FROM incentives.incentive_calculate(properties => properties) GROUP BY 1, 2) c
           USING (participant_key, offer_key)
   WHERE tp.earned_now <> COALESCE(c.total, 0)
$$;
\o /dev/null
\set fixtures 'standard_percent standard_multi_entry standard_dollars_per_unit_uom fixed_amount_pools stepped_amount stacked_pair_up stacked_multi_stack stepped_property'
\set each_fixture pg_temp.check_explain
\i test/sql/each_fixture.psql
-- and stepped_property (loaded last) with its stored values
SELECT pg_temp.check_explain('stepped_property (stored)', '{}');
\o
SELECT * FROM explain_problems;

------------------------------------------------------------------------
-- Stepped by property: the call's value, then the stored ones
------------------------------------------------------------------------
\set fixture stepped_property
\i test/sql/load_fixture.psql
SELECT participant_key, threshold_type, property_key, threshold_value, current_rate_key,
       next_rate_key, gap_to_next, earned_now, earned_at_next
  FROM incentives.tier_progress(properties => :'properties');
-- retailer_004 has no stored value: no tier, no gap.
SELECT participant_key, threshold_value, current_rate_key, current_threshold, next_rate_key,
       next_threshold, gap_to_next, earning_transactions, earned_now, earned_at_next
  FROM incentives.tier_progress();

------------------------------------------------------------------------
-- Stacked: stack_progress and the explanation
------------------------------------------------------------------------
\set fixture stacked_pair_up
\i test/sql/load_fixture.psql
-- retailer_003: 800 acres of seed, 1000 of treatment: 200 acres of
-- treatment do not pay (uncovered); 200 more acres of seed would make them
-- pay (shortfall).  retailer_001: 115.254237 more acres of treatment would
-- still pay.  retailer_004: no seed, the stack earns nothing.
SELECT participant_key, stack_key, sku_set_key, coverage_unit, coverage, overlap, factor,
       earns, uncovered, shortfall
  FROM incentives.stack_progress();
SELECT jsonb_pretty(incentives.incentive_explain('retailer_003',
         'basf.2026.retailer.local.seed_treatment_soybean_pair_up.ilevo'));

\set fixture stacked_multi_stack
\i test/sql/load_fixture.psql
SELECT stack_key, sku_set_key, coverage, overlap, factor, earns, uncovered, shortfall
  FROM incentives.stack_progress('retailer_001');
SELECT s ->> 'rate_key' AS stack, s ->> 'overlap' AS overlap, s -> 'factors' AS factors, s -> 'totals' AS totals
  FROM jsonb_array_elements(incentives.incentive_explain('retailer_001', 'basf.2026.retailer.triple_stack') -> 'stacks') s;

------------------------------------------------------------------------
-- Standard: entries, their matched rows and totals
------------------------------------------------------------------------
\set fixture standard_multi_entry
\i test/sql/load_fixture.psql
SELECT e ->> 'rate_key' AS rate_key, e ->> 'period_key' AS period_key,
       e ->> 'period_start_date' AS period_start, e ->> 'period_end_date' AS period_end,
       e -> 'totals' AS totals,
       (SELECT string_agg(r ->> 'transaction_id', ',') FROM jsonb_array_elements(e -> 'rows') r) AS transactions
  FROM jsonb_array_elements(incentives.incentive_explain('retailer_001', 'corteva.2026.retailer.early_and_sales') -> 'entries') e;

-- Bad explain calls.
SELECT incentives.incentive_explain('retailer_001', 'nope');
SELECT incentives.incentive_explain(NULL, 'corteva.2026.retailer.early_and_sales');

------------------------------------------------------------------------
-- calculate(jsonb): the JSON entry point
------------------------------------------------------------------------
\set fixture stepped_amount
\i test/sql/load_fixture.psql

-- Every stored transaction sent inline gives incentive_calculate's rows
-- exactly, as text (no rows), and the same count.
CREATE TEMP TABLE request AS
SELECT jsonb_build_object('transactions', jsonb_agg(to_jsonb(t) ORDER BY t.transaction_id)) AS r
  FROM incentives.transactions t;
CREATE TEMP TABLE answer AS
SELECT e.* FROM request, jsonb_populate_recordset(NULL::incentives.earning,
                                                  incentives.calculate(request.r) -> 'potential_earnings') e;
(SELECT 'only inline' AS problem, a::text FROM answer a EXCEPT ALL SELECT 'only inline', c::text FROM incentives.incentive_calculate() c)
UNION ALL
(SELECT 'only stored', c::text FROM incentives.incentive_calculate() c EXCEPT ALL SELECT 'only stored', a::text FROM answer a);
SELECT count(*) FROM answer;

-- Numbers are JSON numbers, with their scale.
SELECT jsonb_pretty(incentives.calculate(jsonb_build_object(
         'participant_key', 'retailer_002',
         'transactions', (SELECT jsonb_agg(to_jsonb(t) - 'participant_key' ORDER BY t.transaction_id)
                            FROM incentives.transactions t WHERE t.participant_key = 'retailer_002'))));

-- What-if: retailer_002 adds $850.00 of crop guard (a threshold SKU) to its
-- stored transactions: it reaches the 2000 tier and its agri shield
-- purchase pays 75.00.  Nothing is written.
SELECT e ->> 'transaction_id' AS transaction_id, e ->> 'incentive_rate_key' AS rate_key,
       e -> 'incentive_amount' AS incentive_amount
  FROM jsonb_array_elements(incentives.calculate($${
         "participant_key": "retailer_002", "include_stored": true,
         "transactions": [{"transaction_id": "WHAT-IF-1", "transaction_type": "retailer_purchases_from_distribution",
                           "transaction_date": "2026-04-01", "sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654",
                           "quantity": 20, "uom_key": "gal", "amount": 850.00}]}$$) -> 'potential_earnings') e;
SELECT count(*) AS stored_transactions FROM incentives.transactions;
SELECT count(*) AS leftover_temp_tables FROM pg_class WHERE relname = 'incentives_request_transactions';
-- Without include_stored only the inline transactions count.
SELECT incentives.calculate($${"participant_key": "retailer_002",
         "transactions": [{"transaction_id": "WHAT-IF-1", "transaction_type": "retailer_purchases_from_distribution",
                           "transaction_date": "2026-04-01", "sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654",
                           "quantity": 20, "uom_key": "gal", "amount": 850.00}]}$$);
-- offer_keys and properties pass through.
SELECT jsonb_array_length(incentives.calculate('{"participant_key": "retailer_001", "include_stored": true, "offer_keys": ["offer_a"]}') -> 'potential_earnings') AS rows;
SELECT incentives.calculate('{"participant_key": "retailer_001", "include_stored": true, "offer_keys": []}');

-- Bad requests: SQLSTATE 22023, naming the field (0-based indexes).
\set VERBOSITY sqlstate
SELECT incentives.calculate('[]');
\set VERBOSITY default
SELECT incentives.calculate('[]');
SELECT incentives.calculate('{"participant_key": 7}');
SELECT incentives.calculate('{"properties": [1]}');
SELECT incentives.calculate('{"properties": {"business_plan_achieved": "90"}}');
SELECT incentives.calculate('{"offer_keys": "offer_a"}');
SELECT incentives.calculate('{"offer_keys": ["offer_a", 7]}');
SELECT incentives.calculate('{"offer_keys": ["nope"]}');
SELECT incentives.calculate('{"include_stored": "yes"}');
SELECT incentives.calculate('{"include_stored": true}');
SELECT incentives.calculate('{"transactions": {}}');
SELECT incentives.calculate('{"transactions": [7]}');
SELECT incentives.calculate($${"participant_key": "p", "transactions": [
  {"transaction_id": "a", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": 1, "uom_key": "gal", "amount": 1},
  {"transaction_id": "b", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": 1, "uom_key": "gal", "amount": 1},
  {"transaction_id": "c", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": "1", "uom_key": "gal", "amount": 1}]}$$);
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_type": "t"}]}');
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_id": 5}]}');
SELECT incentives.calculate('{"transactions": [{"transaction_id": "a", "transaction_type": "t"}]}');
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_id": "a", "participant_key": "q"}]}');
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_id": "a", "transaction_type": "t", "transaction_date": "2026-02-30"}]}');
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_id": "a", "transaction_type": "t", "transaction_date": "26-02-01"}]}');
SELECT incentives.calculate('{"participant_key": "p", "transactions": [{"transaction_id": "a", "transaction_type": "t", "transaction_date": "2026-02-01", "sku_key": "s", "quantity": 1, "uom_key": "gal"}]}');
SELECT incentives.calculate($${"participant_key": "p", "transactions": [
  {"transaction_id": "a", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": 1, "uom_key": "gal", "amount": 1},
  {"transaction_id": "a", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": 1, "uom_key": "gal", "amount": 1}]}$$);
SELECT incentives.calculate($${"participant_key": "retailer_002", "include_stored": true, "transactions": [
  {"transaction_id": "01JAD80XDZGZNTYDRV4H5622E1", "transaction_type": "t", "transaction_date": "2026-01-01", "sku_key": "s", "quantity": 1, "uom_key": "gal", "amount": 1}]}$$);
-- A calculation error inside names the transaction, as incentive_calculate
-- does: p reaches a tier, so its purchase in drums needs a conversion.
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('agri_shield_insecticide_2.5_gal_53551', 'gal');
SELECT incentives.calculate($${"participant_key": "p", "transactions": [
  {"transaction_id": "CROP-1", "transaction_type": "retailer_purchases_from_distribution", "transaction_date": "2026-03-01",
   "sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654", "quantity": 40, "uom_key": "gal", "amount": 2000},
  {"transaction_id": "DRUM-1", "transaction_type": "retailer_purchases_from_distribution", "transaction_date": "2026-03-01",
   "sku_key": "agri_shield_insecticide_2.5_gal_53551", "quantity": 1, "uom_key": "drum", "amount": 50}]}$$);
DELETE FROM incentives.skus;

------------------------------------------------------------------------
-- refresh_earnings, the run log and the reporting views
------------------------------------------------------------------------
\set fixture stepped_amount
\i test/sql/load_fixture.psql

-- Everyone, with a NOTICE after every participant (batches of one).
CALL incentives.refresh_earnings(progress_every => 1);
SELECT participant_key, participants, rows, total_incentive, status, error, sqlstate, transactions,
       finished_at >= started_at AS finished
  FROM incentives.calculation_runs ORDER BY run_id;

-- The materialized rows are the calculation's (no rows), with their dates.
(SELECT 'only materialized' AS problem, (e.participant_key, e.offer_key, e.offer_calculator, e.sku_key,
        e.incentive_rate_key, e.incentive_rate_measure, e.incentive_rate_value, e.offer_sku_pay_rate,
        e.transaction_id, e.provided_quantity, e.provided_uom_key, e.provided_amount,
        e.incentivized_quantity, e.incentivized_amount, e.incentive_amount,
        e.incentive_contribution_percent, e.incentive_effective_rate, e.group_key, e.product_key)::incentives.earning::text AS earning
   FROM incentives.earnings e
 EXCEPT ALL
 SELECT 'only materialized', c::text FROM incentives.incentive_calculate() c)
UNION ALL
(SELECT 'not materialized', c::text FROM incentives.incentive_calculate() c
 EXCEPT ALL
 SELECT 'not materialized', (e.participant_key, e.offer_key, e.offer_calculator, e.sku_key,
        e.incentive_rate_key, e.incentive_rate_measure, e.incentive_rate_value, e.offer_sku_pay_rate,
        e.transaction_id, e.provided_quantity, e.provided_uom_key, e.provided_amount,
        e.incentivized_quantity, e.incentivized_amount, e.incentive_amount,
        e.incentive_contribution_percent, e.incentive_effective_rate, e.group_key, e.product_key)::incentives.earning::text
   FROM incentives.earnings e);
SELECT e.transaction_id, e.transaction_date, t.transaction_date = e.transaction_date AS same_date,
       e.run_id = (SELECT max(run_id) FROM incentives.calculation_runs) AS latest_run
  FROM incentives.earnings e JOIN incentives.transactions t USING (transaction_id)
 ORDER BY 1;

-- The reporting views.
SELECT participant_key, offers, transactions, rows, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_participant ORDER BY 1;
SELECT offer_key, offer_calculator, participants, transactions, rows, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_offer ORDER BY 1;
SELECT sku_key, offers, participants, transactions, rows, incentivized_quantity, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_sku ORDER BY 1;
SELECT month, participants, offers, transactions, rows, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_month ORDER BY 1;

-- One participant: only its rows are replaced.  retailer_003 buys $0.01 more
-- crop guard and reaches the 1000 tier; the others' rows keep their run.
INSERT INTO incentives.transactions VALUES
  ('SURFACE-1', 'retailer_003', 'retailer_purchases_from_distribution', '2026-04-02',
   'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 0.01);
CALL incentives.refresh_earnings('retailer_003');
SELECT participant_key, participants, rows, total_incentive, status
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount, count(DISTINCT run_id) AS runs
  FROM incentives.earnings GROUP BY 1 ORDER BY 1;

-- A failing refresh: a transaction in a unit without a conversion.  The
-- error reaches the caller, the previous earnings stay, and the failed run
-- is logged (the procedure commits its row before raising).
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('agri_shield_insecticide_2.5_gal_53551', 'gal');
INSERT INTO incentives.transactions VALUES
  ('SURFACE-BAD', 'retailer_002', 'retailer_purchases_from_distribution', '2026-04-03',
   'agri_shield_insecticide_2.5_gal_53551', 1, 'drum', 50);
CREATE TEMP TABLE before AS SELECT * FROM incentives.earnings;
CALL incentives.refresh_earnings();
SELECT participant_key, participants, rows, total_incentive, status, sqlstate, error,
       finished_at IS NOT NULL AS finished
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
-- Unchanged (no rows), also for a failing refresh of one participant.
(TABLE before EXCEPT ALL TABLE incentives.earnings) UNION ALL (TABLE incentives.earnings EXCEPT ALL TABLE before);
CALL incentives.refresh_earnings('retailer_002');
SELECT participant_key, status, sqlstate FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
(TABLE before EXCEPT ALL TABLE incentives.earnings) UNION ALL (TABLE incentives.earnings EXCEPT ALL TABLE before);
SELECT status, count(*) FROM incentives.calculation_runs GROUP BY 1 ORDER BY 1;

-- Inside a transaction block the procedure cannot commit: a failure rolls
-- back with the caller's transaction, run row included; a success commits
-- with it.
BEGIN;
CALL incentives.refresh_earnings('retailer_002');
ROLLBACK;
SELECT status, count(*) FROM incentives.calculation_runs GROUP BY 1 ORDER BY 1;
BEGIN;
CALL incentives.refresh_earnings('retailer_001');
SELECT participant_key, status FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
COMMIT;
SELECT status, count(*) FROM incentives.calculation_runs GROUP BY 1 ORDER BY 1;

-- Fixed: the next refresh succeeds.
DELETE FROM incentives.transactions WHERE transaction_id = 'SURFACE-BAD';
CALL incentives.refresh_earnings();
SELECT participant_key, participants, rows, total_incentive, status
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, offers, transactions, rows, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_participant ORDER BY 1;

-- From a view of the caller's own: the run log names it.
CREATE VIEW public.surface_lines AS
SELECT * FROM incentives.transactions WHERE participant_key <> 'retailer_001';
CALL incentives.refresh_earnings(transactions => 'public.surface_lines');
SELECT participant_key, participants, rows, total_incentive, status, transactions
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings GROUP BY 1 ORDER BY 1;
DROP VIEW public.surface_lines;

-- An empty relation empties the earnings.
TRUNCATE incentives.transactions;
CALL incentives.refresh_earnings();
SELECT participant_key, participants, rows, total_incentive, status
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) FROM incentives.earnings;
