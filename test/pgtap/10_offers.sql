-- 10_offers: offers as documents (docs/reference.md, Offers and Invalid
-- offers): offer_key is generated from
-- the document, every insert and update is validated by the trigger with
-- SQLSTATE 22023 and offer_error()'s message, which names the offer and the
-- JSON path of the fault.  Run by pg_prove; everything is rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers;

SELECT plan(31);

-- A valid standard offer (the reference document's example).
\set valid '{"offer_key": "t.valid", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "incentive_period", "start_date": "2025-10-01", "end_date": "2026-09-30"}], "incentives": [{"key": "incentive_period_retailer_purchases_from_distribution", "period_key": "incentive_period", "transaction_type": "retailer_purchases_from_distribution", "rates": [{"sku_key": "agri_shield_insecticide_2.5_gal_53551", "rate": 3.0, "measure": "percent"}]}]}'

-- Invalid documents, one fault each.
\set bad_strategy '{"offer_key": "t.bad_strategy", "strategy_key": "tiered", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": 3, "measure": "percent"}]}]}'
\set bad_calculator '{"offer_key": "t.bad_calculator", "strategy_key": "stacked", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentive": {"sku_sets": [{"key": "a", "period_key": "p", "transaction_type": "t", "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "s", "rate": 1, "from": "unit"}]}, "rates": [{"sku_key": "s", "rate": 1, "measure": "dollars"}]}], "stacks": [{"sku_set_keys": ["a"]}]}}'
\set bad_threshold '{"offer_key": "x", "strategy_key": "stepped", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s"], "transaction_type": "t"}], "threshold_definition": {"type": "aggregated_amount", "filters": [{"period_key": "p", "sku_keys": ["s"], "transaction_type": "t"}]}, "rates": [{"threshold": 1000, "value": 10, "measure": "percent"}, {"threshold": "2000", "value": 15, "measure": "percent"}]}}'
\set negative_rate '{"offer_key": "t.negative_rate", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": -1, "measure": "percent"}]}]}'
\set unknown_period '{"offer_key": "t.unknown_period", "strategy_key": "standard", "calculator_key": "dollars_per_unit", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "q", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": 1, "measure": "dollars"}]}]}'
\set wrong_measure '{"offer_key": "t.wrong_measure", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": 1, "measure": "dollars"}]}]}'
\set bad_date '{"offer_key": "t.bad_date", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-02-30", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": 1, "measure": "percent"}]}]}'
\set no_offer_key '{"strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "s", "rate": 1, "measure": "percent"}]}]}'

-- offer_error: NULL for a valid document, the message for an invalid one.
SELECT is(incentives.offer_error(:'valid'), NULL, 'offer_error is NULL for a valid offer');
SELECT is(incentives.offer_error(NULL), NULL, 'offer_error(NULL) is NULL (STRICT)');

-- offer_key comes from the document.
SELECT lives_ok(format('INSERT INTO incentives.offers (document) VALUES (%L)', :'valid'),
                'a valid offer is inserted with its document alone');
SELECT is((SELECT offer_key FROM incentives.offers), 't.valid',
          'offer_key is generated from document->>''offer_key''');
SELECT throws_ok(format('INSERT INTO incentives.offers (document, offer_key) VALUES (%L, %L)', :'valid', 'other'),
                 '428C9', NULL, 'offer_key cannot be set apart from the document');
SELECT throws_ok(format('INSERT INTO incentives.offers (document) VALUES (%L)', :'valid'),
                 '23505', NULL, 'a second offer with the same offer_key is a duplicate key');

-- Each invalid document: the insert fails with 22023 and exactly
-- offer_error()'s message, and the message names the offer and the path
-- (for bad_threshold: is the example of docs/reference.md, Invalid offers).
SELECT t.test
  FROM (VALUES
    (:'bad_strategy', 'unknown strategy_key',
     'invalid offer "t.bad_strategy": strategy_key %', 'the message names the offer and strategy_key'),
    (:'bad_calculator', 'calculator not allowed for the strategy',
     'invalid offer "t.bad_calculator": calculator_key %', 'the message names calculator_key'),
    (:'bad_threshold', 'a threshold that is a string',
     'invalid offer "x": incentive.rates[1].threshold must be a number',
     'the message of the example in docs/reference.md, Invalid offers'),
    (:'negative_rate', 'a negative rate',
     'invalid offer "t.negative_rate": incentives[0].rates[0].rate %', 'the message names incentives[0].rates[0].rate'),
    (:'unknown_period', 'an undefined period_key',
     'invalid offer "t.unknown_period": incentives[0].period_key %', 'the message names incentives[0].period_key'),
    (:'wrong_measure', 'measure dollars under percent_of_amount',
     'invalid offer "t.wrong_measure": incentives[0].rates[0].measure %', 'the message names the measure'),
    (:'bad_date', 'an impossible date',
     'invalid offer "t.bad_date": periods[0].start_date %', 'the message names periods[0].start_date'),
    (:'no_offer_key', 'a document without offer_key',
     'invalid offer (no offer_key): %', 'the message says so'))
    AS c(document, fault, message, says)
 CROSS JOIN LATERAL (VALUES
    (throws_ok(format('INSERT INTO incentives.offers (document) VALUES (%L)', c.document),
               '22023', incentives.offer_error(c.document::jsonb), c.fault || ': rejected with 22023')),
    (ok(incentives.offer_error(c.document::jsonb) LIKE c.message, c.fault || ': ' || c.says))) AS t(test);

SELECT throws_ok($$INSERT INTO incentives.offers (document) VALUES ('[1, 2]')$$,
                 '22023', NULL, 'a document that is not a JSON object: rejected with 22023');

-- A bad offer never enters the table.
SELECT is((SELECT count(*) FROM incentives.offers), 1::bigint, 'only the valid offer is stored');

-- Updates are validated too; a rejected update leaves the stored offer as it was.
SELECT throws_ok($$UPDATE incentives.offers
                      SET document = jsonb_set(document, '{calculator_key}', '"bogus"')
                    WHERE offer_key = 't.valid'$$,
                 '22023', NULL, 'an invalid UPDATE of a stored offer is rejected with 22023');
SELECT throws_like($$UPDATE incentives.offers
                        SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '-3')
                      WHERE offer_key = 't.valid'$$,
                   'invalid offer "t.valid": incentives[0].rates[0].rate %',
                   'the rejected UPDATE names the offer and the path');
SELECT is((SELECT document FROM incentives.offers WHERE offer_key = 't.valid'), :'valid'::jsonb,
          'the stored offer is unchanged');

-- A valid update goes through, and offer_key follows the document.
SELECT lives_ok($$UPDATE incentives.offers
                     SET document = jsonb_set(document, '{offer_key}', '"t.renamed"')
                   WHERE offer_key = 't.valid'$$,
                'a valid UPDATE is accepted');
SELECT is((SELECT array_agg(offer_key) FROM incentives.offers), ARRAY['t.renamed'],
          'offer_key follows the updated document');

-- A field no object defines is refused, with the field meant
-- (docs/reference.md, Strict offers); under 'warning' it is accepted.
SELECT throws_ok($$INSERT INTO incentives.offers (document)
                   VALUES ('{"offer_key": "t.extra", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "t", "rates": [{"sku_key": "a", "rate": 3, "measure": "percent"}]}], "strategy": "standard"}')$$,
                 '22023', 'invalid offer "t.extra": strategy is not a field of the offer; did you mean "strategy_key"?',
                 'an unknown field is refused with the field meant');
SET incentives.unknown_offer_fields = 'warning';
SELECT is(incentives.offer_error(:'valid'::jsonb || '{"offer_key": "t.extra", "future_field": {"a": 1}}'), NULL,
          'under incentives.unknown_offer_fields = warning an unknown field is accepted');
RESET incentives.unknown_offer_fields;

SELECT * FROM finish();
ROLLBACK;
