-- 40_rules: the program rules' errors and guarantees as assertions
-- (docs/reference.md, Program rules): SQLSTATEs of invalid rules, of
-- overlapping and backwards enrollment windows, of a requirement's property
-- that is not a number and of bad enrollments in a what-if request; the
-- enrollments table's shape, comment and dump registration; a capped
-- offer's rows add up to its maximum.  Run by pg_prove; everything is
-- rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties, incentives.enrollments;

SELECT plan(21);

-- the table
SELECT has_table('incentives', 'enrollments', 'incentives.enrollments exists');
SELECT columns_are('incentives', 'enrollments',
                   ARRAY['participant_key', 'offer_key', 'start_date', 'end_date'],
                   'enrollments has the four columns of the contract');
SELECT col_is_pk('incentives', 'enrollments', ARRAY['participant_key', 'offer_key', 'start_date'],
                 'the key is (participant_key, offer_key, start_date)');
SELECT col_is_null('incentives', 'enrollments', 'end_date', 'end_date may be NULL (open ended)');
SELECT isnt(obj_description('incentives.enrollments'::regclass, 'pg_class'), NULL,
            'incentives.enrollments has a comment');
SELECT ok('incentives.enrollments'::regclass = ANY (
            (SELECT extconfig FROM pg_extension WHERE extname = 'incentives')::regclass[]),
          'pg_dump keeps the enrollments');

-- invalid rules: 22023 with the offer and the path
SELECT throws_ok($$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "x", "strategy_key": "standard",
    "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
    "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "a", "rate": 1, "measure": "percent"}]}],
    "enrollment": "maybe"}')$$,
    '22023', 'invalid offer "x": enrollment must be one of open, required', 'an unknown enrollment is refused');
SELECT throws_ok($$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "x", "strategy_key": "standard",
    "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
    "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "a", "rate": 1, "measure": "percent"}]}],
    "limits": {"minimum": 10, "maximum": 5}}')$$,
    '22023', 'invalid offer "x": limits.maximum must be >= limits.minimum', 'a minimum above the maximum is refused');
SELECT throws_ok($$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "x", "strategy_key": "standard",
    "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
    "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "a", "rate": 1, "measure": "percent"}]}],
    "requirements": [{"key": "q", "type": "aggregated_amount", "minimum": 1}]}')$$,
    '22023', 'invalid offer "x": requirements[0].filters is required', 'an aggregated requirement needs filters');
SELECT throws_ok($$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "x", "strategy_key": "stepped",
    "calculator_key": "fixed_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
    "incentive": {"tier_mode": "incremental", "filters": [{"period_key": "p", "sku_keys": ["a"], "transaction_type": "t"}],
      "threshold_definition": {"type": "aggregated_amount", "filters": [{"period_key": "p", "sku_keys": ["a"], "transaction_type": "t"}]},
      "rates": [{"threshold": 0, "value": 100, "measure": "dollars"}]}}')$$,
    '22023', 'invalid offer "x": incentive.tier_mode "incremental" is not allowed for calculator "fixed_amount"',
    'incremental tiers need a rate calculator');

-- the offers below
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "capped", "strategy_key": "standard",
    "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
    "enrollment": "required", "limits": {"maximum": 100},
    "requirements": [{"key": "plan", "type": "property", "property": {"key": "bp"}, "minimum": 90}],
    "incentives": [{"period_key": "p", "transaction_type": "buy", "rates": [{"sku_key": "a", "rate": 10, "measure": "percent"}]}]}');
INSERT INTO incentives.transactions VALUES
  ('T1', 'r1', 'buy', '2026-02-01', 'a', 1, 'gal', 333.33),
  ('T2', 'r1', 'buy', '2026-03-01', 'a', 1, 'gal', 333.33),
  ('T3', 'r1', 'buy', '2026-04-01', 'a', 1, 'gal', 333.34),
  ('T4', 'r1', 'buy', '2025-12-31', 'a', 1, 'gal', 1000.00);

-- enrollment windows
SELECT lives_ok($$INSERT INTO incentives.enrollments VALUES ('r1', 'capped', '2026-01-01', '2026-06-30')$$,
                'a window goes in');
SELECT throws_ok($$INSERT INTO incentives.enrollments VALUES ('r1', 'capped', '2026-06-30', NULL)$$, '23P01',
                 'enrollment of participant "r1" in offer "capped" from 2026-06-30 (open-ended) overlaps its enrollment from 2026-01-01 to 2026-06-30',
                 'an overlapping window is refused with 23P01, naming both');
SELECT throws_ok($$INSERT INTO incentives.enrollments VALUES ('r2', 'capped', '2026-06-30', '2026-06-29')$$, '23514',
                 NULL, 'a window ending before it starts is refused');
-- (an enrollment names a stored offer: "other" earns nothing here)
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "other", "strategy_key": "standard",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "none",
                  "rates": [{"sku_key": "none", "rate": 1, "measure": "percent"}]}]}');
SELECT lives_ok($$INSERT INTO incentives.enrollments VALUES ('r1', 'capped', '2026-07-01', NULL),
                                                            ('r1', 'other', '2026-01-01', NULL)$$,
                'an adjacent window and another offer''s go in');

-- requirements: missing property, a property that is not a number
SELECT is((SELECT count(*) FROM incentives.incentive_calculate('r1')), 0::bigint,
          'a missing property fails the requirement: no rows');
SELECT throws_ok($$SELECT count(*) FROM incentives.incentive_calculate('r1', '{"bp": "high"}')$$, '22023',
                 'property "bp" of participant "r1" is not a number',
                 'a requirement''s property that is not a number is the property error');

-- qualified: T4 is outside every window; 10% of 1000.00 = 100 is within the cap
SELECT results_eq($$SELECT transaction_id, incentive_amount FROM incentives.incentive_calculate('r1', '{"bp": 95}')
                     ORDER BY transaction_id$$,
                  $$VALUES ('T1', 33.33), ('T2', 33.33), ('T3', 33.33)$$,
                  'only transactions inside a window earn; under the maximum nothing changes');

-- a lower maximum: the rows add up to it exactly, the pay rate stays nominal
UPDATE incentives.offers SET document = jsonb_set(document, '{limits,maximum}', '50');
SELECT results_eq($$SELECT sum(incentive_amount), min(offer_sku_pay_rate), max(offer_sku_pay_rate)
                      FROM incentives.incentive_calculate('r1', '{"bp": 95}')$$,
                  $$VALUES (50.00, 0.1, 0.1)$$,
                  'capped rows add up to the maximum exactly, at the nominal pay rate');

-- a what-if request's enrollments: validated, added for the call only
SELECT throws_ok($$SELECT incentives.calculate('{"participant_key": "r3", "enrollments": [{"offer_key": "capped"}]}')$$,
                 '22023', 'invalid request: enrollments[0].start_date is required',
                 'a request enrollment without start_date is refused');
SELECT is(jsonb_array_length(incentives.calculate('{"participant_key": "r3", "properties": {"bp": 99},
            "transactions": [{"transaction_id": "W1", "transaction_type": "buy", "transaction_date": "2026-05-01",
                              "sku_key": "a", "quantity": 1, "uom_key": "gal", "amount": 100}],
            "enrollments": [{"offer_key": "capped", "start_date": "2026-05-01", "end_date": "2026-05-01"}]}')
          -> 'potential_earnings'), 1, 'a request enrollment lets a participant not enrolled earn, for the call');
SELECT is((SELECT count(*) FROM incentives.enrollments WHERE participant_key = 'r3'), 0::bigint,
          'the request stored no enrollment');

SELECT * FROM finish();
ROLLBACK;
