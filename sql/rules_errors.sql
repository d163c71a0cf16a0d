-- rules_errors: data errors follow the order of the program rules
-- (docs/reference.md, Program rules): enrollment -> requirements -> the
-- strategy -> limits.  A missing unit conversion or a NULL is raised only
-- for a figure that reaches a result, so an offer that pays a participant
-- nothing because a requirement fails never raises for its strategy's
-- transactions -- not in incentive_calculate, incentive_diagnostics,
-- incentive_explain, tier_progress, requirement_progress, nor in a refresh
-- that skips failing participants.  With the requirement met, the error
-- names the transaction and the participant.
--
-- One offer per strategy, each with the requirement business_plan_achieved
-- >= 90 and its own SKU, measured in gal.  p_unmet (plan 80) and p_met
-- (plan 95) each have, per offer, a transaction in gal and one that cannot
-- be converted: totes (no conversion to gal), or for the stacked offer
-- litres, which convert to gal but not to the fl_oz of its coverage.  In a
-- database of its own, so that its refreshes and their run log are its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_rules_errors;
\c incentives_rules_errors
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;

INSERT INTO incentives.offers (document) VALUES ($${
  "offer_key": "e.standard", "strategy_key": "standard", "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "buy",
                  "rates": [{"sku_key": "s_standard", "rate": 2, "measure": "percent"}]}],
  "requirements": [{"key": "plan", "type": "property", "property": {"key": "business_plan_achieved"}, "minimum": 90}]}$$),
($${
  "offer_key": "e.stepped", "strategy_key": "stepped", "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {
    "filters": [{"period_key": "p", "sku_keys": ["s_stepped"], "transaction_type": "buy"}],
    "threshold_definition": {"type": "aggregated_quantity",
      "filters": [{"period_key": "p", "sku_keys": ["s_stepped"], "transaction_type": "buy"}]},
    "rates": [{"threshold": 0, "value": 1, "measure": "percent"}, {"threshold": 100, "value": 2, "measure": "percent"}]},
  "requirements": [{"key": "plan", "type": "property", "property": {"key": "business_plan_achieved"}, "minimum": 90}]}$$),
($${
  "offer_key": "e.stacked", "strategy_key": "stacked", "calculator_key": "dollars_per_coverage_unit",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {
    "sku_sets": [{"key": "treatment", "period_key": "p", "transaction_type": "buy",
                  "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "s_stacked", "rate": 32, "from": "fl_oz"}]},
                  "rates": [{"sku_key": "s_stacked", "rate": 2, "measure": "dollars"}]}],
    "stacks": [{"key": "treated", "sku_set_keys": ["treatment"]}]},
  "requirements": [{"key": "plan", "type": "property", "property": {"key": "business_plan_achieved"}, "minimum": 90}]}$$);
INSERT INTO incentives.skus (sku_key, uom_key) VALUES
  ('s_standard', 'gal'), ('s_stepped', 'gal'), ('s_stacked', 'gal');
INSERT INTO incentives.participant_properties (participant_key, property_key, value) VALUES
  ('p_unmet', 'business_plan_achieved', 80), ('p_met', 'business_plan_achieved', 95);
INSERT INTO incentives.transactions
SELECT p || '-' || s || '-' || t, p, 'buy', DATE '2026-03-01', 's_' || s, 10,
       CASE WHEN t = 'good' THEN 'gal' WHEN s = 'stacked' THEN 'l' ELSE 'tote' END, 1000.00
  FROM unnest(ARRAY['p_unmet', 'p_met']) AS p,
       unnest(ARRAY['standard', 'stepped', 'stacked']) AS s,
       unnest(ARRAY['good', 'bad']) AS t;

------------------------------------------------------------------------
-- incentive_calculate
------------------------------------------------------------------------
-- p_unmet: no rows and no error, whichever the offer.
SELECT count(*) AS rows FROM incentives.incentive_calculate('p_unmet');
-- p_met: each offer's error, naming its transaction and the participant.
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.standard']);
\echo :SQLSTATE
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.stepped']);
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.stacked']);
-- Everyone at once fails on p_met, the only participant whose figures need
-- the bad transactions.
SELECT count(*) FROM incentives.incentive_calculate();
SELECT * FROM incentives_internal.calculation_failure();
-- Without the bad transactions p_met earns and p_unmet still does not.
CREATE VIEW public.rules_errors_good AS
SELECT * FROM incentives.transactions WHERE transaction_id LIKE '%-good';
SELECT participant_key, offer_key, transaction_id, incentive_amount
  FROM incentives.incentive_calculate(transactions => 'public.rules_errors_good')
 ORDER BY 1, 2;

------------------------------------------------------------------------
-- incentive_diagnostics, incentive_explain, tier_progress, requirement_progress
------------------------------------------------------------------------
-- p_unmet: the requirement against its minimum, not qualified, and no
-- strategy figure (the strategy's would need the bad transaction): only
-- "rules", with the error the strategy would raise.
SELECT offer_key, diagnostics -> 'rules' -> 'requirements' -> 0 ->> 'value' AS plan,
       diagnostics -> 'rules' ->> 'qualified' AS qualified,
       diagnostics -> 'rules' ->> 'strategy_error' AS strategy_error,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(diagnostics) AS k) AS keys
  FROM incentives.incentive_diagnostics('p_unmet')
 ORDER BY offer_key;
-- Without the bad transactions, the strategy's figures are shown (what it
-- would pay before the requirements).
SELECT offer_key, diagnostics -> 'rules' ->> 'qualified' AS qualified,
       diagnostics -> 'rules' -> 'strategy_error' IS NULL AS no_strategy_error,
       diagnostics ->> 'threshold_value' AS threshold_value,
       diagnostics -> 'sets' -> 0 ->> 'coverage' AS coverage,
       diagnostics -> 'entries' -> 0 ->> 'transactions' AS entry_transactions
  FROM incentives.incentive_diagnostics('p_unmet', transactions => 'public.rules_errors_good')
 ORDER BY offer_key;
-- p_met: the same error as the calculation.
SELECT count(*) FROM incentives.incentive_diagnostics('p_met', offer_keys => ARRAY['e.stacked']);
-- incentive_explain of each offer for p_unmet: the rules, no rows.
SELECT o AS offer_key, x -> 'rules' ->> 'qualified' AS qualified, x -> 'totals' AS totals
  FROM unnest(ARRAY['e.standard', 'e.stepped', 'e.stacked']) AS o,
       incentives.incentive_explain('p_unmet', o) AS x
 ORDER BY 1;
SELECT incentives.incentive_explain('p_met', 'e.standard');
-- tier_progress and requirement_progress of p_unmet.
SELECT participant_key, offer_key, threshold_value, current_rate_key, earning_transactions,
       earned_now, qualified, requirement_gaps
  FROM incentives.tier_progress('p_unmet');
SELECT participant_key, offer_key, requirement_key, value, minimum, gap, met, qualified
  FROM incentives.requirement_progress('p_unmet')
 ORDER BY offer_key;
SELECT count(*) FROM incentives.tier_progress('p_met');

------------------------------------------------------------------------
-- refresh_earnings(on_error => 'skip')
------------------------------------------------------------------------
-- p_unmet is refreshed (no exception); p_met keeps its (no) earnings and
-- gets the one exception row, naming its first failing transaction.
CALL incentives.refresh_earnings(on_error => 'skip');
SELECT participants, rows, total_incentive, status, exceptions
  FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, transaction_id LIKE 'p_met-%-bad' AS a_bad_transaction, sqlstate,
       message LIKE 'no unit conversion from %' AS no_conversion
  FROM incentives.calculation_exceptions
 WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs);
-- p_met qualifies once its bad transactions are gone.
DELETE FROM incentives.transactions WHERE transaction_id LIKE 'p_met-%-bad';
CALL incentives.refresh_earnings(on_error => 'skip');
SELECT participants, status, exceptions FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT participant_key, offer_key, transaction_id, incentive_amount
  FROM incentives.earnings ORDER BY 1, 2;

------------------------------------------------------------------------
-- NULLs: a NULL column is an error only where a figure that reaches a
-- result needs it (23502, naming the column, the transaction and the
-- participant)
------------------------------------------------------------------------
DELETE FROM incentives.transactions WHERE transaction_id LIKE '%-bad';
INSERT INTO incentives.transactions
SELECT p || '-' || s || '-null', p, 'buy', DATE '2026-03-02', 's_' || s, 10, 'gal', 1000.00
  FROM unnest(ARRAY['p_unmet', 'p_met']) AS p,
       unnest(ARRAY['standard', 'stepped', 'stacked']) AS s;
CREATE VIEW public.rules_errors_null_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key,
       CASE WHEN transaction_id LIKE '%-null' THEN NULL ELSE amount END AS amount
  FROM incentives.transactions;
CREATE VIEW public.rules_errors_null_quantity AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       CASE WHEN transaction_id LIKE '%-null' THEN NULL ELSE quantity END AS quantity, uom_key, amount
  FROM incentives.transactions;
CREATE VIEW public.rules_errors_null_date AS
SELECT transaction_id, participant_key, transaction_type,
       CASE WHEN transaction_id LIKE '%-null' THEN NULL ELSE transaction_date END AS transaction_date,
       sku_key, quantity, uom_key, amount
  FROM incentives.transactions;
-- p_unmet: nothing, no error; the diagnostics say what the strategy lacks.
SELECT v AS relation, count(e.*) AS rows
  FROM unnest(ARRAY['public.rules_errors_null_amount', 'public.rules_errors_null_quantity',
                    'public.rules_errors_null_date']) AS v
  LEFT JOIN LATERAL incentives.incentive_calculate('p_unmet', transactions => v::regclass) AS e ON true
 GROUP BY v ORDER BY v;
SELECT offer_key, diagnostics -> 'rules' ->> 'strategy_error' AS strategy_error
  FROM incentives.incentive_diagnostics('p_unmet', transactions => 'public.rules_errors_null_quantity')
 ORDER BY offer_key;
-- p_met: the error of each offer's first NULL its figures need.
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.standard'],
                                                    transactions => 'public.rules_errors_null_amount');
\echo :SQLSTATE
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.stepped'],
                                                    transactions => 'public.rules_errors_null_quantity');
SELECT count(*) FROM incentives.incentive_calculate('p_met', offer_keys => ARRAY['e.stacked'],
                                                    transactions => 'public.rules_errors_null_date');
SELECT * FROM incentives_internal.calculation_failure();
-- A NULL transaction_id, participant_key or sku_key cannot be placed: an
-- error when the row is read, naming the relation.
CREATE VIEW public.rules_errors_null_sku AS
SELECT transaction_id, participant_key, transaction_type, transaction_date,
       CASE WHEN transaction_id = 'p_unmet-standard-null' THEN NULL ELSE sku_key END AS sku_key,
       quantity, uom_key, amount
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate('p_unmet', transactions => 'public.rules_errors_null_sku');

\c :regress_db
DROP DATABASE incentives_rules_errors;
