-- 47_rate_change_money: prospective rate changes (docs/lifecycle.md, Prospective
-- rate changes): change_rates stores a version with effective_from and
-- refuses what is not a rate change; annotation edits keep the schedule,
-- other updates replace it; cancel_rate_change; the schedule
-- (incentives_internal.rate_schedule) and program_rates' dates; preview.
-- The money assertions at the end (incentive_calculate with a schedule)
-- need the engine to read the schedule.
\ir ../sql/pgtap_begin.psql
SET client_min_messages = warning;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(48);

-- doc(rate, label): the standard 'rc.std' offer at that percent rate
CREATE FUNCTION pg_temp.doc(rate numeric, label text DEFAULT 'Gold') RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'offer_key', 'rc.std', 'label', label,
    'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
    'periods', '[{"key": "y", "start_date": "2026-01-01", "end_date": "2026-12-31"}]'::jsonb,
    'incentives', jsonb_build_array(jsonb_build_object(
       'period_key', 'y', 'transaction_type', 'purchase',
       'rates', jsonb_build_array(jsonb_build_object('sku_key', 'gold', 'rate', rate, 'measure', 'percent')))))
$$;
-- tiered(silver, gold): the stepped 'rc.step' offer with those tier values
CREATE FUNCTION pg_temp.tiered(silver numeric, gold numeric, gold_threshold numeric DEFAULT 1000) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'offer_key', 'rc.step', 'strategy_key', 'stepped', 'calculator_key', 'percent_of_amount',
    'periods', '[{"key": "y", "start_date": "2026-01-01", "end_date": "2026-12-31"}]'::jsonb,
    'incentive', jsonb_build_object(
      'filters', '[{"period_key": "y", "sku_keys": ["gold"], "transaction_type": "purchase"}]'::jsonb,
      'threshold_definition', '{"type": "aggregated_amount", "filters": [{"period_key": "y", "sku_keys": ["gold"], "transaction_type": "purchase"}]}'::jsonb,
      'rates', jsonb_build_array(
        jsonb_build_object('key', 'silver', 'threshold', 0, 'value', silver, 'measure', 'percent'),
        jsonb_build_object('key', 'gold', 'threshold', gold_threshold, 'value', gold, 'measure', 'percent'))))
$$;

INSERT INTO incentives.offers (document) VALUES (pg_temp.doc(3)), (pg_temp.tiered(1, 2));
INSERT INTO incentives.transactions VALUES
  ('T1', 'p1', 'purchase', '2026-03-15', 'gold', 10, 'gal', 1000.00),
  ('T2', 'p1', 'purchase', '2026-04-15', 'gold', 10, 'gal', 1000.00);

------------------------------------------------------------------------
-- The surface
------------------------------------------------------------------------
SELECT has_column('incentives', 'offer_versions', 'effective_from', 'offer_versions.effective_from');
SELECT is((SELECT effective_from FROM incentives.offer_versions WHERE offer_key = 'rc.std'), NULL,
          'an inserted offer''s version is retrospective');
SELECT is((SELECT count(*) FROM incentives_internal.rate_schedule('rc.std')), 0::bigint,
          'an offer without a change has no schedule');
SELECT is(pg_temp.argument_names('incentives_internal.rate_schedule(text, timestamptz)') || ' / '
          || pg_temp.argument_defaults('incentives_internal.rate_schedule(text, timestamptz)'),
          'offer_key, as_of, version, effective_from, document / NULL::timestamp with time zone',
          'rate_schedule(offer_key, as_of DEFAULT NULL) -> (version, effective_from, document)');

------------------------------------------------------------------------
-- Refusals
------------------------------------------------------------------------
SELECT throws_ok($$SELECT incentives.change_rates('rc.none', '2026-04-01', pg_temp.doc(4))$$,
                 '22023', 'offer "rc.none" does not exist', 'an offer that does not exist');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', NULL, pg_temp.doc(4))$$,
                 '22023', 'offer "rc.std": effective_from must not be NULL', 'effective_from NULL');
SELECT throws_ok($$SELECT incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(3))$$,
                 '22023', NULL, 'the same document');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(3, 'Platinum'))$$,
                   'offer "rc.std": the document changes no rate value', 'only annotations: nothing to change');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2026-04-01',
                       jsonb_set(pg_temp.doc(4), '{periods,0,end_date}', '"2026-11-30"'))$$,
                   'offer "rc.std": periods[0].end_date differs, and a rate change may change only rate values', 'a period change is retrospective, with its path');
SELECT throws_like($$SELECT incentives.change_rates('rc.step', '2026-04-01', pg_temp.tiered(1, 3, 2000))$$,
                   'offer "rc.step": incentive.rates[1].threshold differs%',
                   'a threshold change is refused, with its path');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2027-01-01', pg_temp.doc(4))$$,
                   '%outside the offer''s span%', 'after the span');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2025-12-31', pg_temp.doc(4))$$,
                   '%outside the offer''s span%', 'before the span');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2026-04-01',
                       jsonb_set(pg_temp.doc(4), '{offer_key}', '"rc.other"'))$$,
                   'offer "rc.std": offer_key differs%', 'another offer''s key');
SELECT throws_ok($$SELECT incentives.cancel_rate_change('rc.std')$$,
                 '22023', 'offer "rc.std" has no scheduled rate change', 'cancel without a schedule');

------------------------------------------------------------------------
-- change_rates
------------------------------------------------------------------------
SELECT is(incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(4)), 2, 'change_rates returns the new version');
SELECT results_eq($$SELECT version, effective_from, (document #>> '{incentives,0,rates,0,rate}')::numeric
                      FROM incentives.offer_versions WHERE offer_key = 'rc.std' ORDER BY version$$,
                  $$VALUES (1, NULL::date, 3::numeric), (2, '2026-04-01'::date, 4::numeric)$$,
                  'the version is stored with its effective_from');
SELECT is((SELECT document FROM incentives.offers WHERE offer_key = 'rc.std'), pg_temp.doc(4),
          'the offer holds the new document');
SELECT results_eq($$SELECT version, effective_from FROM incentives_internal.rate_schedule('rc.std')$$,
                  $$VALUES (1, NULL::date), (2, '2026-04-01'::date)$$, 'the schedule: base, then the change');
SELECT is((SELECT count(*) FROM incentives_internal.rate_schedule('rc.std', now() - interval '1 day')), 0::bigint,
          'as_of before the offer existed: no schedule');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(5))$$,
                   '%not after its latest scheduled change, from 2026-04-01', 'not after the latest change');
SELECT results_eq($$SELECT rate_value, effective_from, effective_to FROM incentives.program_rates
                     WHERE offer_key = 'rc.std' ORDER BY effective_from NULLS FIRST$$,
                  $$VALUES (3::numeric, NULL::date, '2026-03-31'::date), (4, '2026-04-01', NULL)$$,
                  'program_rates: each rate with the dates it applies to');
SELECT results_eq($$SELECT rate_value, effective_from, effective_to FROM incentives.program_rates(NULL)
                     WHERE offer_key = 'rc.std' ORDER BY effective_from NULLS FIRST$$,
                  $$VALUES (3::numeric, NULL::date, '2026-03-31'::date), (4, '2026-04-01', NULL)$$,
                  'program_rates(as_of) too');
SELECT results_eq($$SELECT rate_value, effective_from, effective_to FROM incentives.program_rates
                     WHERE offer_key = 'rc.step' ORDER BY rate_value$$,
                  $$VALUES (1::numeric, NULL::date, NULL::date), (2, NULL, NULL)$$,
                  'program_rates: an offer without a schedule has open dates');

-- setting the value by hand passes the same checks
SELECT throws_like($$SELECT set_config('incentives_internal.rate_change_from', '2026-03-01', true);
                     UPDATE incentives.offers SET document = pg_temp.doc(6) WHERE offer_key = 'rc.std'$$,
                   '%not after its latest scheduled change%', 'the trigger checks the change again');

------------------------------------------------------------------------
-- Annotation edits keep the schedule; other updates replace it
------------------------------------------------------------------------
UPDATE incentives.offers SET document = pg_temp.doc(4, 'Gold plus') WHERE offer_key = 'rc.std';
SELECT is((SELECT effective_from FROM incentives.offer_versions WHERE offer_key = 'rc.std' AND valid_to IS NULL),
          '2026-04-01'::date, 'an annotation edit keeps effective_from');
SELECT results_eq($$SELECT version, effective_from FROM incentives_internal.rate_schedule('rc.std')$$,
                  $$VALUES (1, NULL::date), (3, '2026-04-01'::date)$$, 'the edit shadows the version it edits');
SELECT is(incentives.change_rates('rc.std', '2026-06-01', pg_temp.doc(5, 'Gold plus')), 4, 'a second change');
SELECT results_eq($$SELECT version, effective_from FROM incentives_internal.rate_schedule('rc.std')$$,
                  $$VALUES (1, NULL::date), (3, '2026-04-01'::date), (4, '2026-06-01'::date)$$,
                  'the schedule: three versions in force');

-- cancel_rate_change: back to the version in force the day before
SELECT is(incentives.cancel_rate_change('rc.std'), 5, 'cancel_rate_change returns the new version');
SELECT results_eq($$SELECT version, effective_from, (document #>> '{incentives,0,rates,0,rate}')::numeric
                      FROM incentives_internal.rate_schedule('rc.std')$$,
                  $$VALUES (1, NULL::date, 3::numeric), (5, '2026-04-01'::date, 4::numeric)$$,
                  'the June change is gone: 3 % then 4 % from April');
SELECT is((SELECT count(*) FROM incentives.offer_versions WHERE offer_key = 'rc.std'), 5::bigint,
          'the history is kept');
SELECT is(incentives.cancel_rate_change('rc.std'), 6, 'cancel the April change too');
SELECT is((SELECT effective_from FROM incentives.offer_versions WHERE offer_key = 'rc.std' AND valid_to IS NULL),
          NULL, 'no schedule left: the base document, retrospective');
SELECT is((SELECT document FROM incentives.offers WHERE offer_key = 'rc.std'), pg_temp.doc(3), 'the base document');

-- a retrospective update discards a schedule (its WARNING: docs/lifecycle.md's example)
SELECT is(incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(4)), 7, 'schedule again');
SET client_min_messages = error;
UPDATE incentives.offers SET document = jsonb_set(pg_temp.doc(4), '{periods,0,end_date}', '"2026-11-30"')
 WHERE offer_key = 'rc.std';
SET client_min_messages = warning;
SELECT is((SELECT effective_from FROM incentives.offer_versions WHERE offer_key = 'rc.std' AND valid_to IS NULL),
          NULL, 'a structural update is retrospective');
SELECT is((SELECT count(*) FROM incentives_internal.rate_schedule('rc.std')), 0::bigint, 'and leaves no schedule');
UPDATE incentives.offers SET document = pg_temp.doc(3) WHERE offer_key = 'rc.std';

------------------------------------------------------------------------
-- Preview of a prospective change
------------------------------------------------------------------------
SELECT throws_like($$SELECT * FROM incentives.preview_offer_change(pg_temp.tiered(1, 2, 5000), '2026-04-01')$$,
                   '%differs, and a rate change may change only rate values', 'preview with effective_from applies change_rates'' checks');
SELECT is((SELECT count(*) FROM incentives.offer_versions WHERE offer_key = 'rc.step'), 1::bigint,
          'preview stores nothing');

------------------------------------------------------------------------
-- The money (needs the engine to read the schedule): 3 % then 4 % from
-- 2026-04-01; tiers 1 % / 2 % then 1 % / 3 % from 2026-04-01.
------------------------------------------------------------------------
SELECT is(incentives.change_rates('rc.std', '2026-04-01', pg_temp.doc(4)), 10, 'standard: 3 % then 4 % from April');
SELECT is(incentives.change_rates('rc.step', '2026-04-01', pg_temp.tiered(1, 3)), 2, 'a stepped tier change');
SELECT results_eq($$SELECT * FROM incentives.preview_offer_change(pg_temp.tiered(1, 4), '2026-05-01')$$,
                  $$VALUES ('p1'::text, 50.00::numeric, 50.00::numeric, 0.00::numeric, 0.00::numeric, 50.00::numeric)$$,
                  'preview of a change from May: nothing dated before it moves [engine]');
SELECT results_eq($$SELECT transaction_id, incentive_rate_value, incentive_amount FROM incentives.incentive_calculate(offer_keys => ARRAY['rc.std'])
                     ORDER BY transaction_id$$,
                  $$VALUES ('T1'::text, 3::numeric, 30.00::numeric), ('T2', 4, 40.00)$$,
                  'standard: 3 % before April, 4 % from April [engine]');
SELECT results_eq($$SELECT transaction_id, incentive_rate_value, incentive_amount FROM incentives.incentive_calculate(offer_keys => ARRAY['rc.step'])
                     ORDER BY transaction_id$$,
                  $$VALUES ('T1'::text, 2::numeric, 20.00::numeric), ('T2', 3, 30.00)$$,
                  'stepped: the gold tier at 2 % before April, 3 % from April [engine]');

------------------------------------------------------------------------
-- Settled dates change only retrospectively
------------------------------------------------------------------------
CALL incentives.settle('2026-04-30');
SELECT throws_like($$SELECT incentives.change_rates('rc.std', '2026-04-30', pg_temp.doc(5))$$,
                   '%not after its latest statement, dated 2026-04-30', 'not after the latest statement');
SELECT is(incentives.change_rates('rc.std', '2026-05-01', pg_temp.doc(5)), 11, 'after it: accepted');
SELECT is(incentives.cancel_rate_change('rc.std'), 12, 'a change after the statement can be cancelled');
SELECT throws_like($$SELECT incentives.cancel_rate_change('rc.std')$$,
                   '%change from 2026-04-01 is settled: the latest statement is dated 2026-04-30',
                   'a change starting on or before the latest statement cannot');

SELECT * FROM finish();
ROLLBACK;
