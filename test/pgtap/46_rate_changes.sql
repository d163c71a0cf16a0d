-- 46_rate_changes: prospective rate changes (docs/lifecycle.md,
-- Prospective rate changes): change_rates stores a version whose rate
-- values apply from a date on, every strategy's rows take the values of
-- their date, an annotation edit keeps the schedule and any other UPDATE
-- replaces it, cancel_rate_change undoes the latest change, and settled
-- dates are never re-rated by one.
\ir ../sql/pgtap_begin.psql
SET client_min_messages = warning;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(26);

-- stepped(offer_key, sku, tier_mode, values): two tiers at 0 and 1500 of
-- the purchases of sku, paying the values (percent)
CREATE FUNCTION pg_temp.stepped(k text, sku text, tier_mode text, low numeric, high numeric)
RETURNS jsonb LANGUAGE sql AS $$
  SELECT pg_temp.offer(k, 'stepped', 'percent_of_amount', jsonb_build_object('incentive', jsonb_build_object(
           'tier_mode', tier_mode,
           'filters', jsonb_build_array(jsonb_build_object('period_key', 'p', 'sku_keys', jsonb_build_array(sku),
                                                           'transaction_type', 'buy')),
           'threshold_definition', jsonb_build_object('type', 'aggregated_amount', 'filters',
             jsonb_build_array(jsonb_build_object('period_key', 'p', 'sku_keys', jsonb_build_array(sku),
                                                  'transaction_type', 'buy'))),
           'rates', jsonb_build_array(
             jsonb_build_object('key', 'low', 'threshold', 0, 'value', low, 'measure', 'percent'),
             jsonb_build_object('key', 'high', 'threshold', 1500, 'value', high, 'measure', 'percent')))))
$$;
-- doc(offer_key): the offer's current document
CREATE FUNCTION pg_temp.doc(k text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT o.document FROM incentives.offers AS o WHERE o.offer_key = k
$$;
-- rows(offer_key): transaction, rate value and amount of the offer's rows
CREATE FUNCTION pg_temp.rows(k text) RETURNS TABLE (transaction_id text, rate_value numeric, amount numeric)
LANGUAGE sql AS $$
  SELECT c.transaction_id, c.incentive_rate_value, c.incentive_amount
    FROM incentives.incentive_calculate(offer_keys => ARRAY[k]) AS c ORDER BY 1
$$;

INSERT INTO incentives.offers (document) VALUES
  (pg_temp.standard_offer('rc.std', 'percent_of_amount', '[{"sku_key": "seed_a", "rate": 3, "measure": "percent"}]')),
  (pg_temp.stepped('rc.step', 'seed_b', 'all_volume', 1, 3)),
  (pg_temp.stepped('rc.inc', 'seed_c', 'incremental', 1, 3)),
  (pg_temp.standard_offer('rc.pool', 'fixed_amount', '[{"sku_key": "seed_a", "rate": 500, "measure": "dollars"}]'));
INSERT INTO incentives.transactions VALUES
  ('RA1', 'p1', 'buy', '2026-03-15', 'seed_a', 10, 'bag', 1000),
  ('RA2', 'p1', 'buy', '2026-04-15', 'seed_a', 10, 'bag', 1000),
  ('RB1', 'p1', 'buy', '2026-03-10', 'seed_b', 10, 'bag', 1000),
  ('RB2', 'p1', 'buy', '2026-04-10', 'seed_b', 10, 'bag', 1000),
  ('RC1', 'p1', 'buy', '2026-03-10', 'seed_c', 10, 'bag', 1000),
  ('RC2', 'p1', 'buy', '2026-04-10', 'seed_c', 10, 'bag', 1000);

------------------------------------------------------------------------
-- A change from 1 April: earlier transactions keep their rates
------------------------------------------------------------------------
SELECT is(incentives.change_rates('rc.std', '2026-04-01',
                                  jsonb_set(pg_temp.doc('rc.std'), '{incentives,0,rates,0,rate}', '4')),
          2, 'change_rates returns the new version');
SELECT results_eq($$SELECT version, effective_from FROM incentives.offer_versions
                     WHERE offer_key = 'rc.std' ORDER BY 1$$,
                  $$VALUES (1, NULL::date), (2, '2026-04-01'::date)$$,
                  'the version records its effective_from; the first is retrospective');
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.std')$$,
                  $$VALUES ('RA1'::text, 3::numeric, 30.00::numeric), ('RA2', 4, 40.00)$$,
                  'standard: March at 3 %, April at 4 %');

SELECT lives_ok($$SELECT incentives.change_rates('rc.step', '2026-04-01', pg_temp.stepped('rc.step', 'seed_b', 'all_volume', 2, 4))$$,
                'a stepped offer''s tier values change from a date');
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.step')$$,
                  $$VALUES ('RB1'::text, 3::numeric, 30.00::numeric), ('RB2', 4, 40.00)$$,
                  'stepped: the season''s tier (2000 >= 1500), at each date''s value');

SELECT lives_ok($$SELECT incentives.change_rates('rc.inc', '2026-04-01', pg_temp.stepped('rc.inc', 'seed_c', 'incremental', 2, 4))$$,
                'incremental tiers change from a date');
SELECT results_eq($$SELECT transaction_id, amount FROM pg_temp.rows('rc.inc')$$,
                  $$VALUES ('RC1'::text, 15.00::numeric), ('RC2', 25.00)$$,
                  'incremental: the season''s bands (1500 low, 500 high) blended at each date''s values: 1.5 % then 2.5 %');

SELECT results_eq($$SELECT rate_value, effective_from, effective_to FROM incentives.program_rates
                     WHERE offer_key = 'rc.std' ORDER BY effective_from NULLS FIRST$$,
                  $$VALUES (3::numeric, NULL::date, '2026-03-31'::date), (4, '2026-04-01', NULL)$$,
                  'program_rates: each rate with the days it applies to');

------------------------------------------------------------------------
-- What a rate change may not do
------------------------------------------------------------------------
SELECT throws_ok($$SELECT incentives.change_rates('rc.step', '2026-05-01',
                     jsonb_set(pg_temp.doc('rc.step'), '{incentive,rates,1,threshold}', '1800'))$$,
                 '22023', 'offer "rc.step": incentive.rates[1].threshold differs, and a rate change may change only rate values',
                 'a threshold is structure: refused');
SELECT throws_ok($$SELECT incentives.change_rates('rc.pool', '2026-05-01',
                     jsonb_set(pg_temp.doc('rc.pool'), '{incentives,0,rates,0,rate}', '600'))$$,
                 '22023', 'offer "rc.pool": incentives[0].rates[0].rate is a fixed_amount pool, and a rate change may change only rate values',
                 'a fixed_amount pool is refused');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', '2026-05-01', pg_temp.doc('rc.std') || '{"label": "Seed"}')$$,
                 '22023', 'offer "rc.std": the document changes no rate value',
                 'an annotation edit alone is not a rate change');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', NULL, jsonb_set(pg_temp.doc('rc.std'), '{incentives,0,rates,0,rate}', '5'))$$,
                 '22023', 'offer "rc.std": effective_from must not be NULL', 'effective_from is required');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', '2027-01-01', jsonb_set(pg_temp.doc('rc.std'), '{incentives,0,rates,0,rate}', '5'))$$,
                 '22023', 'offer "rc.std": effective_from 2027-01-01 is outside the offer''s span 2026-01-01 to 2026-12-31',
                 'effective_from inside the span');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', '2026-03-01', jsonb_set(pg_temp.doc('rc.std'), '{incentives,0,rates,0,rate}', '5'))$$,
                 '22023', 'offer "rc.std": effective_from 2026-03-01 is not after its latest scheduled change, from 2026-04-01',
                 'effective_from after the schedule''s latest');
SELECT throws_ok($$SELECT incentives.change_rates('rc.none', '2026-05-01', pg_temp.doc('rc.std'))$$,
                 '22023', 'offer "rc.none" does not exist', 'the offer must exist');
SELECT throws_ok($$SELECT set_config('incentives_internal.rate_change_from', '2026-02-01', true);
                   UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '9')
                    WHERE offer_key = 'rc.std'$$,
                 '22023', 'offer "rc.std": effective_from 2026-02-01 is not after its latest scheduled change, from 2026-04-01',
                 'the versioning trigger checks the change itself');
SELECT set_config('incentives_internal.rate_change_from', '', true);

------------------------------------------------------------------------
-- Edits, a second change, cancelling it, and a retrospective change
------------------------------------------------------------------------
UPDATE incentives.offers SET document = document || '{"label": "Seed program"}' WHERE offer_key = 'rc.std';
SELECT is((SELECT effective_from FROM incentives.offer_versions WHERE offer_key = 'rc.std' AND valid_to IS NULL),
          '2026-04-01'::date, 'an annotation edit keeps the schedule');
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.std')$$,
                  $$VALUES ('RA1'::text, 3::numeric, 30.00::numeric), ('RA2', 4, 40.00)$$,
                  'and its rates');

SELECT lives_ok($$SELECT incentives.change_rates('rc.std', '2026-04-10',
                    jsonb_set(pg_temp.doc('rc.std'), '{incentives,0,rates,0,rate}', '5'))$$,
                'a second change, from 10 April');
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.std')$$,
                  $$VALUES ('RA1'::text, 3::numeric, 30.00::numeric), ('RA2', 5, 50.00)$$,
                  'the later change applies from its date');
SELECT lives_ok($$SELECT incentives.cancel_rate_change('rc.std')$$, 'cancel_rate_change undoes it');
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.std')$$,
                  $$VALUES ('RA1'::text, 3::numeric, 30.00::numeric), ('RA2', 4, 40.00)$$,
                  'the schedule before it applies again');
SELECT results_eq($$SELECT effective_from FROM incentives_internal.rate_schedule('rc.std')$$,
                  $$VALUES (NULL::date), ('2026-04-01'::date)$$,
                  'the schedule: the first version, then the change from 1 April; the history is kept');

SET client_min_messages = error;    -- its WARNING names the versions it replaces
UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '6') WHERE offer_key = 'rc.std';
SET client_min_messages = warning;
SELECT results_eq($$SELECT * FROM pg_temp.rows('rc.std')$$,
                  $$VALUES ('RA1'::text, 6::numeric, 60.00::numeric), ('RA2', 6, 60.00)$$,
                  'any other UPDATE is retrospective and replaces the schedule');
SELECT throws_ok($$SELECT incentives.cancel_rate_change('rc.std')$$,
                 '22023', 'offer "rc.std" has no scheduled rate change', 'nothing left to cancel');

------------------------------------------------------------------------
-- Settled dates change only retrospectively
------------------------------------------------------------------------
CALL incentives.settle('2026-04-30');
SELECT throws_ok($$SELECT incentives.change_rates('rc.step', '2026-04-20', pg_temp.stepped('rc.step', 'seed_b', 'all_volume', 3, 5))$$,
                 '22023', 'offer "rc.step": effective_from 2026-04-20 is not after its latest statement, dated 2026-04-30',
                 'a change from a settled date is refused');

SELECT * FROM finish();
ROLLBACK;
