-- 31_calc_errors: calculation-time errors (docs/reference.md, Calculation
-- errors): what incentive_calculate refuses, with the SQLSTATE and the exact
-- message naming what is wrong.  A missing unit conversion (transaction,
-- SKU, both units, and a hint to add a row to incentives.uom_conversions),
-- a property that is not a number (property and participant), a NULL in a
-- column of a user relation a figure needs (column, transaction and
-- participant), a wrong
-- relation (relation and column), numbers beyond the exact range (a clear
-- 22003, never a wrong number), an offer_keys entry that names no offer, a
-- duplicate transaction_id.  Run by pg_prove; everything is rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(63);

-- error_of(sql): the error the statement raises, as
-- {sqlstate, message, detail, hint, context}; NULL when it raises none.
CREATE FUNCTION pg_temp.error_of(sql text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  st text; msg text; det text; hnt text; ctx text;
BEGIN
  EXECUTE sql;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                          ctx = PG_EXCEPTION_CONTEXT;
  RETURN jsonb_build_object('sqlstate', st, 'message', msg, 'detail', det, 'hint', hnt,
                            'context', ctx);
END
$$;

-- exact_or_out_of_range(sql, expected): 'exact' when the query's single
-- value equals expected, 'out of range' when it raises 22003, else what it
-- returned: a figure beyond the engine's exact range may be refused, never
-- returned wrong.
CREATE FUNCTION pg_temp.exact_or_out_of_range(sql text, expected text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  got text;
BEGIN
  EXECUTE sql INTO got;
  RETURN CASE WHEN got IS NOT DISTINCT FROM expected THEN 'exact'
              ELSE 'wrong number: ' || coalesce(got, 'NULL') || ' (expected ' || expected || ')' END;
EXCEPTION WHEN numeric_value_out_of_range THEN
  RETURN 'out of range';
END
$$;

-- calculation_throws(arguments, sqlstate, message, description): pgTAP's
-- throws_ok of SELECT * FROM incentives.incentive_calculate(arguments).
CREATE FUNCTION pg_temp.calculation_throws(arguments text, sqlstate text, message text, description text)
RETURNS text LANGUAGE sql AS $$
  SELECT throws_ok(format('SELECT * FROM incentives.incentive_calculate(%s)', arguments),
                   sqlstate, message, description)
$$;

INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('e.pct', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 3, "measure": "percent"}, {"sku_key": "s2", "rate": 2, "measure": "percent"}]')),
(pg_temp.standard_offer('e.dpu', 'dollars_per_unit', '[{"sku_key": "s3", "rate": 12.5, "measure": "dollars"}]')),
(pg_temp.offer('e.bp', 'stepped', 'percent_of_amount', '{
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s4"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "property", "property": {"key": "growth_pct"}},
                 "rates": [{"threshold": 75, "value": 1.88, "measure": "percent"},
                           {"threshold": 100, "value": 2, "measure": "percent"}]}}'));
-- Two stacked offers of one SKU set "a" in one stack "k": s7 at 2 dollars
-- an acre of 0.5 gal, and s8 at numbers at the edge of the exact range.
INSERT INTO incentives.offers (document)
SELECT pg_temp.offer(c.k, 'stacked', 'dollars_per_coverage_unit', format('{
   "incentive": {"sku_sets": [{"key": "a", "period_key": "p", "transaction_type": "buy",
                               "conversion": {"coverage_unit": "acre",
                                              "rates": [{"sku_key": "%1$s", "rate": %2$s, "from": "gal"}]},
                               "rates": [{"sku_key": "%1$s", "rate": %3$s, "measure": "dollars"}]}],
                 "stacks": [{"key": "k", "sku_set_keys": ["a"]}]}}', c.sku, c.per_gal, c.rate)::jsonb)
  FROM (VALUES ('e.stk', 's7', '0.5', '2'),
               ('e.stk_huge', 's8', '0.00000000000000000000000000000000000001', '9999999999999999999999999999999999999.5'))
       AS c(k, sku, per_gal, rate);
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('e.pool_huge', 'fixed_amount',
   '[{"sku_key": "s9", "rate": 9999999999999999999999999999999999999.5, "measure": "dollars"}]'));

-- ===================================================================
-- Missing unit conversion (docs/reference.md, Unit conversions): names the transaction, the SKU and
-- both units; the hint says to add a row to incentives.uom_conversions.
-- ===================================================================
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s1', 'gal');
INSERT INTO incentives.transactions VALUES
  ('U-1', 'r_uom', 'buy', '2026-03-01', 's1', 4, 'jug', 430.00),
  ('U-2', 'r_uom2', 'buy', '2026-03-01', 's7', 4, 'box', 10.00);

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_uom')$$,
  '22023', 'no unit conversion from "jug" to "gal" for transaction "U-1" (sku "s1")',
  'a missing conversion to the SKU''s unit names the transaction, the SKU and both units');

-- the hint, caught with GET STACKED DIAGNOSTICS in a DO block
CREATE TEMP TABLE caught (sqlstate text, message text, detail text, hint text, context text);
DO $$
DECLARE
  st text; msg text; det text; hnt text; ctx text;
BEGIN
  PERFORM count(*) FROM incentives.incentive_calculate(participant_key => 'r_uom');
  INSERT INTO caught VALUES (NULL, 'no error', NULL, NULL, NULL);
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
                          det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT,
                          ctx = PG_EXCEPTION_CONTEXT;
  INSERT INTO caught VALUES (st, msg, det, hnt, ctx);
END
$$;
SELECT matches((SELECT hint FROM caught), 'incentives\.uom_conversions',
  'the hint tells to add a row to incentives.uom_conversions');
SELECT matches((SELECT context FROM caught), '^calculating transaction "U-1" of participant "r_uom"',
  'the error context names the transaction and the participant');

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_uom2', offer_keys => ARRAY['e.stk'])$$,
  '22023', 'no unit conversion from "box" to "gal" for transaction "U-2" (sku "s7")',
  'a missing conversion to a stacked offer''s coverage unit names the transaction, the SKU and both units');

INSERT INTO incentives.uom_conversions VALUES ('jug', 'gal', 2.5);
SELECT results_eq(
  $$SELECT transaction_id, incentivized_quantity::text
      FROM incentives.incentive_calculate(participant_key => 'r_uom')$$,
  $$VALUES ('U-1', '10.000000')$$,
  'with the conversion row the transaction calculates (4 jug = 10 gal)');

-- ===================================================================
-- A property that is not a number: names the property and the participant.
-- ===================================================================
INSERT INTO incentives.transactions VALUES
  ('B-1', 'r_bp', 'buy', '2026-03-01', 's4', 1, 'gal', 100.00);

SELECT throws_ok(
  format($$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_bp', properties => %L)$$, p),
  '22023', 'property "growth_pct" of participant "r_bp" is not a number',
  'property given as ' || label || ': an error naming the property and the participant')
  FROM (VALUES ('{"growth_pct": "high"}', 'a string'),
               ('{"growth_pct": "90"}', 'a numeric string'),
               ('{"growth_pct": true}', 'a boolean'),
               ('{"growth_pct": null}', 'JSON null'),
               ('{"growth_pct": {"value": 90}}', 'an object'),
               ('{"growth_pct": [90]}', 'an array')) AS v(p, label);

SELECT matches(
  pg_temp.error_of($$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_bp',
                       properties => '{"growth_pct": "high"}')$$) ->> 'hint',
  '"growth_pct"',
  'the hint shows how to pass this property (its own key, not a fixed example)');

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(properties => '[90]')$$,
  '22023', 'properties must be a JSON object, e.g. ''{"business_plan_achieved": 90}''',
  'properties that are not a JSON object');

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_bp',
                                                 properties => '{"growth_pct": 1e39}')$$,
  '22003', 'property "growth_pct" 1000000000000000000000000000000000000000 is out of range',
  'a property beyond 38 digits is out of range (22003)');

SELECT lives_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_bp',
      properties => '{"growth_pct": 90, "unused": "text", "other": {"a": 1}}')$$,
  'properties no offer uses may be anything');

SELECT throws_ok(format('INSERT INTO incentives.%s VALUES (%s)', c.tab, c.row_values), '23514', NULL, c.description)
  FROM (VALUES ('participant_properties', $$'r_bp', 'growth_pct', 'NaN'$$,
                'a stored property cannot be NaN (check constraint)'),
               ('participant_properties', $$'r_bp', 'growth_pct', 'Infinity'$$,
                'a stored property cannot be Infinity (check constraint)'),
               ('uom_conversions', $$'drum', 'gal', 'NaN'$$,
                'a unit conversion factor cannot be NaN (check constraint)')) AS c(tab, row_values, description);
DELETE FROM incentives.participant_properties;

-- A factor the engine cannot calculate with exactly is refused when it is
-- written (every calculation reads every conversion: one would fail them all).
SELECT throws_ok($$INSERT INTO incentives.uom_conversions VALUES ('drum', 'gal', 1234567890123456789012345678901234567890.12)$$,
  '22023', 'unit conversion "drum" to "gal": factor 1234567890123456789012345678901234567890.12 is out of range: numbers are calculated exactly with at most 38 digits and 38 decimal places',
  'a 42-digit unit conversion factor is refused when it is written, naming the pair and the limit');
SELECT throws_ok($$INSERT INTO incentives.uom_conversions VALUES ('drum', 'gal', 1e-39)$$,
  '22023', NULL, 'so is a factor with 39 decimal places');
SELECT lives_ok($$INSERT INTO incentives.uom_conversions VALUES ('drum', 'gal', 12345678901234567890.123456789012345678)$$,
  'a factor of 38 digits is accepted');
SELECT throws_ok($$UPDATE incentives.uom_conversions SET factor = factor * 10^30 WHERE from_uom_key = 'drum'$$,
  '22023', NULL, 'an UPDATE to a factor out of range is refused too');
SET check_function_bodies = off;   -- as in a session restoring pg_dump's output
SET client_min_messages = error;    -- its WARNING
SELECT lives_ok($$INSERT INTO incentives.uom_conversions VALUES ('drum', 'l', 1e-39)$$,
  'a restore session loads such a factor as it was dumped (with a WARNING)');
RESET check_function_bodies;
RESET client_min_messages;
SELECT throws_ok($$SELECT incentives.calculate('{"participant_key": "r_bp", "properties": {"growth_pct": 90}}')$$,
  '22023', 'invalid request: the stored data cannot be calculated: unit conversion factor 0.000000000000000000000000000000000000001 is out of range',
  'calculate() names the stored data as the cause, not the request''s properties');
DELETE FROM incentives.uom_conversions WHERE from_uom_key = 'drum';
SELECT is(incentives_internal.number_problem(1e38), 'is out of range: numbers are calculated exactly with at most 38 digits and 38 decimal places',
  'number_problem says why (10^38 has 39 digits)');

-- ===================================================================
-- A NULL in a required column of a user relation: names the transaction
-- and the column (SQLSTATE 23502); never a crash, never a silently dropped
-- row.  Views over the participant r_null, NULL in transaction N-2.
-- ===================================================================
CREATE SCHEMA calc_err;
INSERT INTO incentives.transactions VALUES
  ('N-1', 'r_null', 'buy', '2026-03-01', 's2', 1, 'gal', 10.00),
  ('N-2', 'r_null', 'buy', '2026-03-02', 's2', 2, 'gal', 20.00),
  ('N-3', 'r_null', 'buy', '2026-03-03', 's2', 3, 'gal', 30.00);
DO $$
DECLARE
  c text;
BEGIN
  FOREACH c IN ARRAY ARRAY['transaction_id', 'participant_key', 'transaction_type', 'transaction_date',
                           'sku_key', 'quantity', 'uom_key', 'amount'] LOOP
    EXECUTE format(
      'CREATE VIEW calc_err.%I AS SELECT %s FROM incentives.transactions t WHERE participant_key = %L',
      'v_null_' || c,
      (SELECT string_agg(CASE WHEN col = c THEN format('CASE WHEN t.transaction_id = %L THEN NULL ELSE t.%I END AS %I', 'N-2', col, col)
                              ELSE format('t.%I', col) END, ', ')
         FROM unnest(ARRAY['transaction_id', 'participant_key', 'transaction_type', 'transaction_date',
                           'sku_key', 'quantity', 'uom_key', 'amount']) AS col),
      'r_null');
  END LOOP;
END
$$;

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(transactions => 'calc_err.v_null_transaction_id')$$,
  '23502', 'a transaction in relation calc_err.v_null_transaction_id has a NULL transaction_id',
  'a NULL transaction_id: an error naming the relation and the column');
SELECT throws_ok(
  format($$SELECT * FROM incentives.incentive_calculate(transactions => %L)$$, 'calc_err.v_null_' || c),
  '23502', format('column "%s" of transaction "N-2" in relation calc_err.v_null_%s is NULL', c, c),
  format('a NULL %s: an error naming the transaction and the column', c))
  FROM unnest(ARRAY['participant_key', 'sku_key']) AS c;
-- the other columns are needed by the figures of e.pct's row (docs/reference.md,
-- Errors): the engine names the column, the transaction and the participant
SELECT throws_ok(
  format($$SELECT * FROM incentives.incentive_calculate(transactions => %L)$$, 'calc_err.v_null_' || c),
  '23502', format('column "%s" of transaction "N-2" of participant "r_null" is NULL', c),
  format('a NULL %s: an error naming the column, the transaction and the participant', c))
  FROM unnest(ARRAY['transaction_type', 'transaction_date', 'quantity', 'uom_key', 'amount']) AS c;

-- ===================================================================
-- A wrong relation: names the relation and the column.
-- ===================================================================
CREATE VIEW calc_err.v_no_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key
  FROM incentives.transactions;
CREATE VIEW calc_err.v_float_quantity AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       quantity::double precision AS quantity, uom_key, amount
  FROM incentives.transactions;
CREATE VIEW calc_err.v_real_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key,
       amount::real AS amount
  FROM incentives.transactions;
CREATE VIEW calc_err.v_text_date AS
SELECT transaction_id, participant_key, transaction_type, transaction_date::text AS transaction_date,
       sku_key, quantity, uom_key, amount
  FROM incentives.transactions;
CREATE VIEW calc_err.v_int_id AS
SELECT 1 AS transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount
  FROM incentives.transactions;
CREATE SCHEMA "Calc Err";
CREATE VIEW "Calc Err"."my ""view""" AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key
  FROM incentives.transactions;

SELECT pg_temp.calculation_throws(format('transactions => %L', c.relation), c.sqlstate, c.message, c.description)
  FROM (VALUES
    ('calc_err.v_no_amount', '42703', 'relation calc_err.v_no_amount has no column "amount"',
     'a missing column: an error naming the relation and the column'),
    ('calc_err.v_float_quantity', '42804',
     'column "quantity" of relation calc_err.v_float_quantity has type double precision, expected numeric or an integer type',
     'a double precision quantity is refused (inexact), naming the relation and the column'),
    ('calc_err.v_real_amount', '42804',
     'column "amount" of relation calc_err.v_real_amount has type real, expected numeric or an integer type',
     'a real amount is refused, naming the relation and the column'),
    ('calc_err.v_text_date', '42804',
     'column "transaction_date" of relation calc_err.v_text_date has type text, expected date',
     'a date kept as text is refused, naming the relation and the column'),
    ('calc_err.v_int_id', '42804',
     'column "transaction_id" of relation calc_err.v_int_id has type integer, expected text or varchar',
     'an integer transaction_id is refused, naming the relation and the column'),
    ('"Calc Err"."my ""view"""', '42703', 'relation "Calc Err"."my ""view""" has no column "amount"',
     'the relation is named as a quoted identifier'),
    ('incentives.skus', '42703', 'relation incentives.skus has no column "transaction_id"',
     'a table that is not a transactions relation'),
    ('1', '42P01', 'relation with OID 1 does not exist',      -- regclass input: an OID
     'a regclass that names no relation')) AS c(relation, sqlstate, message, description);

-- ===================================================================
-- Numbers beyond the exact range: a clear 22003, never a wrong number.
-- Within it, huge figures are exact.
-- ===================================================================
INSERT INTO incentives.transactions VALUES
  ('O-1', 'r_o1', 'buy', '2026-03-01', 's3', 1e30, 'gal', 5.00),
  ('O-2', 'r_o2', 'buy', '2026-03-01', 's3', 99999999999999999999999999999999999999, 'gal', 5.00),
  ('O-4', 'r_o4', 'buy', '2026-03-01', 's8', 99999999999999999999999999999999999999, 'gal', 5.00),
  ('O-5', 'r_o5', 'buy', '2026-03-01', 's1', 1, 'gal', 999999999999999999999999999999999999.99),
  ('O-8', 'r_o8', 'buy', '2026-03-01', 's9', 1, 'gal', 1), ('O-9', 'r_o8', 'buy', '2026-03-01', 's9', 1, 'gal', 2);

SELECT results_eq(
  $$SELECT incentivized_quantity::text, incentive_amount::text, incentive_effective_rate::text
      FROM incentives.incentive_calculate(participant_key => 'r_o1')$$,
  $$VALUES ('1000000000000000000000000000000.000000', '12500000000000000000000000000000.00', '2500000000000000000000000000000.0000')$$,
  'a quantity of 1e30 at $12.50 per unit: exactly 1.25e31, never a rounded float');
SELECT matches(
  pg_temp.exact_or_out_of_range(
    $$SELECT incentive_amount::text FROM incentives.incentive_calculate(participant_key => 'r_o2')$$,
    '1249999999999999999999999999999999999987.50'),
  '^(exact|out of range)$',
  'a 38-digit quantity at $12.50 per unit: exact to the cent or 22003, never a wrong number');
SELECT results_eq(
  $$SELECT incentivized_amount::text, incentive_amount::text
      FROM incentives.incentive_calculate(participant_key => 'r_o5')$$,
  $$VALUES ('999999999999999999999999999999999999.99', '30000000000000000000000000000000000.00')$$,
  'a 38-digit amount at 3%: exact (29999...99.9997 rounds half away from zero)');

INSERT INTO incentives.uom_conversions VALUES ('gal', 'ml_huge', 1e37);
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s3', 'ml_huge');
SELECT matches(
  pg_temp.exact_or_out_of_range(
    $$SELECT incentivized_quantity::text || ' ' || incentive_amount::text
        FROM incentives.incentive_calculate(participant_key => 'r_o1')$$,
    '10000000000000000000000000000000000000000000000000000000000000000000.000000 '
    '125000000000000000000000000000000000000000000000000000000000000000000.00'),
  '^(exact|out of range)$',
  '1e30 gal converted by a factor of 1e37 and paid $12.50 per unit: exact or 22003, never a wrong number');
DELETE FROM incentives.skus WHERE sku_key = 's3';

SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_o4', offer_keys => ARRAY['e.stk_huge'])$$,
  '22003', 'numeric value out of range in incentive calculation',
  'coverage x rate beyond the exact range: 22003, not a wrong number');
SELECT matches(
  pg_temp.error_of($$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_o4',
                                                                 offer_keys => ARRAY['e.stk_huge'])$$) ->> 'context',
  '^calculating transaction "O-4" of participant "r_o4"',
  '... and the error context names the transaction and the participant');
SELECT doesnt_match(
  COALESCE(pg_temp.error_of($$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['nope'])$$)
           ->> 'context', ''),
  'calculating',
  'an error outside a calculation, after a failed one, has no calculation context');

SELECT matches(
  pg_temp.exact_or_out_of_range(
    $$SELECT string_agg(transaction_id || ' ' || incentive_amount::text, ', ' ORDER BY transaction_id)
        FROM incentives.incentive_calculate(participant_key => 'r_o8')$$,
    'O-8 3333333333333333333333333333333333333.17, O-9 6666666666666666666666666666666666666.33'),
  '^(exact|out of range)$',
  'a 38-digit pool shared 1:2: to the cent or 22003, never a wrong number');
SELECT matches(
  pg_temp.exact_or_out_of_range(
    $$SELECT sum(incentive_amount)::text FROM incentives.incentive_calculate(participant_key => 'r_o8')$$,
    '9999999999999999999999999999999999999.50'),
  '^(exact|out of range)$',
  '... paid out exactly or refused');

-- beyond 38 digits or 38 decimal places, NaN, infinity: in a user's view
CREATE VIEW calc_err.v_big AS
SELECT 'O-3'::text AS transaction_id, 'r_big'::text AS participant_key, 'buy'::text AS transaction_type,
       date '2026-03-01' AS transaction_date, 's3'::text AS sku_key, q AS quantity, 'gal'::text AS uom_key, a AS amount
  FROM (SELECT current_setting('calc_err.q')::numeric AS q, current_setting('calc_err.a')::numeric AS a) v;

SELECT pg_temp.calculation_throws($$transactions => 'calc_err.v_big'$$, c.sqlstate, c.message, c.description)
  FROM (VALUES
    ('999999999999999999999999999999999999999', '5', '22003',
     'quantity 999999999999999999999999999999999999999 of transaction "O-3" is out of range',
     'a quantity of 39 digits: 22003 naming the quantity and the transaction'),
    ('0.000000000000000000000000000000000000001', '5', '22003',
     'quantity 0.000000000000000000000000000000000000001 of transaction "O-3" is out of range',
     'a quantity with 39 decimal places: 22003'),
    ('1', '1234567890123456789012345678901234567890', '22003',
     'amount 1234567890123456789012345678901234567890 of transaction "O-3" is out of range',
     'an amount of 40 digits: 22003 naming the amount and the transaction'),
    ('NaN', '5', '22023', 'quantity NaN of transaction "O-3" is not a finite number',
     'a NaN quantity: an error naming the transaction'),
    ('1', '-Infinity', '22023', 'amount -Infinity of transaction "O-3" is not a finite number',
     'an infinite amount: an error naming the transaction')) AS c(quantity, amount, sqlstate, message, description),
       -- the view's quantity and amount of the case, set before its test
       LATERAL (SELECT set_config('calc_err.q', c.quantity, true), set_config('calc_err.a', c.amount, true)) AS v;
SET LOCAL calc_err.q = '9223372036854775807';
SET LOCAL calc_err.a = '5';
SELECT results_eq(
  $$SELECT incentive_amount::text FROM incentives.incentive_calculate(transactions => 'calc_err.v_big')$$,
  $$VALUES ('115292150460684697587.50')$$,
  'the largest bigint quantity at $12.50: exact');

-- ===================================================================
-- offer_keys: a key that names no offer is an error naming it.
-- ===================================================================
SELECT pg_temp.calculation_throws(c.arguments, c.sqlstate, c.message, c.description)
  FROM (VALUES
    ($$offer_keys => ARRAY['nope']$$, '22023', 'offer "nope" does not exist',
     'an offer_keys entry that names no offer: an error naming it'),
    ($$offer_keys => ARRAY['e.pct', 'e.pc']$$, '22023', 'offer "e.pc" does not exist',
     '... also beside a real one (a typo does not silently return less)'),
    ($$offer_keys => ARRAY['E.PCT']$$, '22023', 'offer "E.PCT" does not exist', 'offer keys are case sensitive'),
    ($$offer_keys => ARRAY['e.pct', NULL]$$, '22004', 'offer_keys must not contain NULL', 'a NULL in offer_keys'))
    AS c(arguments, sqlstate, message, description);
SELECT is_empty(
  $$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY[]::text[])$$,
  'an empty offer_keys names no offer: no rows, no error');

-- ===================================================================
-- A transaction_id twice in a user's view.
-- ===================================================================
INSERT INTO incentives.transactions VALUES
  ('D-1', 'r_dup', 'buy', '2026-03-01', 's2', 1, 'gal', 10.00),
  ('D-2', 'r_dup', 'buy', '2026-03-02', 's2', 1, 'gal', 20.00);
CREATE VIEW calc_err.v_dup AS
SELECT * FROM incentives.transactions WHERE participant_key = 'r_dup'
UNION ALL
SELECT * FROM incentives.transactions WHERE transaction_id = 'D-2';
SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(transactions => 'calc_err.v_dup')$$,
  '23505', 'transaction "D-2" appears more than once in relation calc_err.v_dup',
  'a duplicate transaction_id in a user view: an error naming it and the relation');
SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'r_dup', transactions => 'calc_err.v_dup')$$,
  '23505', 'transaction "D-2" appears more than once in relation calc_err.v_dup',
  '... also for one participant');

SELECT * FROM finish();
ROLLBACK;
