-- 20_calculate: the calculation as assertions (docs/reference.md): the
-- reference standard example's totals, the half-cent tie, a row whose
-- incentivized amount rounds to zero, a penny-exact fixed pool, property
-- tiers, the offer_keys and transactions arguments, and row-level security.
-- Data is inserted literally (pg_prove's working directory is not known).
-- Run by pg_prove; everything is rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(24);

-- The fixture standard_percent: 3% of the amount.
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "corteva.2026.retailer.local.crop_protection.base",
  "strategy_key": "standard", "calculator_key": "percent_of_amount",
  "periods": [{"key": "incentive_period", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
  "incentives": [{"key": "incentive_period_retailer_purchases_from_distribution",
                  "label": "Full Season Incentive", "period_key": "incentive_period",
                  "transaction_type": "retailer_purchases_from_distribution",
                  "rates": [{"sku_key": "agri_shield_insecticide_2.5_gal_53551", "rate": 3.0, "measure": "percent"},
                            {"sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654", "rate": 3.0, "measure": "percent"}]}]}');
INSERT INTO incentives.transactions
  (transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount)
VALUES
  ('01JAD80XDZGZNTYDRV4H56221W', 'retailer_001', 'retailer_purchases_from_distribution', '2026-03-14', 'agri_shield_insecticide_2.5_gal_53551', 100.0, 'gal', 50000.0),
  ('01JAD80XDZGZNTYDRV4H56222A', 'retailer_001', 'retailer_purchases_from_distribution', '2026-04-02', 'crop_guard_30_l_herbicide_2.5_gal_22654', 25, 'gal', 1234.57),
  ('01JAD80XDZGZNTYDRV4H56223B', 'retailer_001', 'retailer_purchases_from_distribution', '2026-05-20', 'agri_shield_insecticide_2.5_gal_53551', -10, 'gal', -5000.00),
  ('01JAD80XDZGZNTYDRV4H56224C', 'retailer_001', 'retailer_sales_to_growers', '2026-05-21', 'agri_shield_insecticide_2.5_gal_53551', 5, 'gal', 2600.00),
  ('01JAD80XDZGZNTYDRV4H56225D', 'retailer_001', 'retailer_purchases_from_distribution', '2026-10-01', 'agri_shield_insecticide_2.5_gal_53551', 5, 'gal', 2500.00),
  ('01JAD80XDZGZNTYDRV4H56226E', 'retailer_001', 'retailer_purchases_from_distribution', '2026-03-01', 'field_hammer_fungicide_1_gal_61492', 5, 'gal', 900.00),
  ('01JAD80XDZGZNTYDRV4H56227F', 'retailer_002', 'retailer_purchases_from_distribution', '2025-10-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', 2.5, 'gal', 0.50),
  ('01JAD80XDZGZNTYDRV4H56228G', 'retailer_002', 'retailer_purchases_from_distribution', '2025-10-02', 'crop_guard_30_l_herbicide_2.5_gal_22654', -2.5, 'gal', -0.50);

-- Per participant, the total and the rows (again below, after an edit).
CREATE TEMP VIEW totals AS
SELECT participant_key, sum(incentive_amount), count(*)
  FROM incentives.incentive_calculate()
 GROUP BY participant_key ORDER BY participant_key;
SELECT results_eq(
  'SELECT * FROM totals',
  $$VALUES ('retailer_001', 1387.04, 3::bigint), ('retailer_002', 0.00, 2::bigint)$$,
  'standard_percent: total and rows per participant');
CREATE TEMP TABLE first_totals AS SELECT * FROM totals;
SELECT results_eq(
  $$SELECT incentivized_amount::text, incentive_amount::text, offer_sku_pay_rate::text,
           incentive_rate_value::text, incentive_effective_rate::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_001')
     WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W'$$,
  $$VALUES ('50000.00', '1500.00', '0.03', '3', '0.0300')$$,
  'the reference row: 3% of $50,000 is 1500.00, reported as in expected.csv');
-- Compiled offers are cached per backend by their document bytes: an edit
-- in the same session is seen at once, and undoing it gives the first result.
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '4.0')
 WHERE offer_key = 'corteva.2026.retailer.local.crop_protection.base';
SELECT results_eq(
  $$SELECT incentive_amount::text, incentive_rate_value::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_001')
     WHERE transaction_id = '01JAD80XDZGZNTYDRV4H56221W'$$,
  $$VALUES ('2000.00', '4')$$,
  'an offer edited in the same session is calculated with its new rate');
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '3.0')
 WHERE offer_key = 'corteva.2026.retailer.local.crop_protection.base';
SELECT results_eq(
  'SELECT * FROM totals', 'SELECT * FROM first_totals ORDER BY participant_key',
  'and the edit undone gives the first totals again');
SELECT bag_eq(
  $$SELECT transaction_id, incentive_amount::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_002')$$,
  $$VALUES ('01JAD80XDZGZNTYDRV4H56227F', '0.02'), ('01JAD80XDZGZNTYDRV4H56228G', '-0.02')$$,
  'half-cent tie: a $0.50 purchase at 3% earns 0.02, its return -0.02');
SELECT is_empty(
  $$SELECT * FROM incentives.incentive_calculate()
     WHERE transaction_id IN ('01JAD80XDZGZNTYDRV4H56224C', '01JAD80XDZGZNTYDRV4H56225D',
                              '01JAD80XDZGZNTYDRV4H56226E')$$,
  'a wrong type, a date after the period and an SKU outside the offer earn nothing');
SELECT is_empty(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_999')$$,
  'a participant without transactions gets no rows');
SELECT throws_like(
  $$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['nope'])$$,
  '%nope%', 'an offer_keys entry that names no offer is an error naming it');

-- A purchase of $0.004: incentivized_amount 0.00, so no effective rate.
INSERT INTO incentives.transactions
VALUES ('01JAD80XDZGZNTYDRV4H56229H', 'retailer_003', 'retailer_purchases_from_distribution',
        '2026-01-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 0.004);
SELECT results_eq(
  $$SELECT incentivized_amount::text, incentive_amount::text, incentive_effective_rate
      FROM incentives.incentive_calculate(participant_key => 'retailer_003')$$,
  $$VALUES ('0.00', '0.00', NULL::numeric)$$,
  'incentivized_amount 0.00: incentive 0.00 and a NULL effective rate');

-- transactions => any relation with the transaction columns: a what-if on
-- hypothetical purchases in a temp table.
CREATE TEMP TABLE whatif (LIKE incentives.transactions);
INSERT INTO whatif
VALUES ('W-1', 'retailer_001', 'retailer_purchases_from_distribution', '2026-06-01',
        'agri_shield_insecticide_2.5_gal_53551', 20, 'gal', 10000.00);
SELECT results_eq(
  $$SELECT participant_key, transaction_id, incentive_amount
      FROM incentives.incentive_calculate(transactions => 'whatif')$$,
  $$VALUES ('retailer_001', 'W-1', 300.00)$$,
  'transactions => a temp table of hypothetical purchases');
SELECT results_eq(
  $$SELECT count(*) FROM incentives.incentive_calculate(transactions => 'pg_temp.whatif',
                                                         participant_key => 'retailer_002')$$,
  $$VALUES (0::bigint)$$,
  'the participant filter applies to another relation too');

-- Stepped by property: call properties first, stored values otherwise.
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "basf.2026.retailer.business_plan",
  "strategy_key": "stepped", "calculator_key": "percent_of_amount",
  "periods": [{"key": "incentive_period", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
  "incentive": {
    "filters": [{"period_key": "incentive_period",
                 "sku_keys": ["crop_guard_30_l_herbicide_2.5_gal_22654", "field_hammer_fungicide_1_gal_61492"],
                 "transaction_type": "retailer_purchases_from_distribution"}],
    "threshold_definition": {"type": "property",
                             "property": {"key": "business_plan_achieved", "type": "number", "level": "request"}},
    "rates": [{"key": "2_percent_greater_than_or_equal_to_100", "threshold": 100.0, "value": 2.0, "measure": "percent"},
              {"key": "1.9_percent_greater_than_or_equal_to_85", "threshold": 85.0, "value": 1.9, "measure": "percent"},
              {"threshold": 75.0, "value": 1.88, "measure": "percent"}]}}');
INSERT INTO incentives.participant_properties VALUES ('retailer_002', 'business_plan_achieved', 80);
SELECT results_eq(
  $$SELECT incentive_rate_key, offer_sku_pay_rate::text, incentive_amount::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                          offer_keys => ARRAY['basf.2026.retailer.business_plan'])
     ORDER BY transaction_id$$,
  $$VALUES ('1.88_percent_greater_than_or_equal_to_75', '0.0188', '0.01'),
           ('1.88_percent_greater_than_or_equal_to_75', '0.0188', '-0.01')$$,
  'stored property 80: the 1.88% tier with its generated key');
SELECT results_eq(
  $$SELECT DISTINCT incentive_rate_key
      FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                          properties => '{"business_plan_achieved": 100}',
                                          offer_keys => ARRAY['basf.2026.retailer.business_plan'])$$,
  $$VALUES ('2_percent_greater_than_or_equal_to_100')$$,
  'a call property overrides the stored value');
SELECT is_empty(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_001',
                                                 offer_keys => ARRAY['basf.2026.retailer.business_plan'])$$,
  'no property, stored or given: no tier, no rows');
SELECT throws_like(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_002',
                                                 properties => '{"business_plan_achieved": "high"}')$$,
  '%business_plan_achieved%', 'a property that is not a number is an error naming it');

-- Fixed pool: $100 over three equal purchases, penny-exact by transaction_id.
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "t.pool", "strategy_key": "standard", "calculator_key": "fixed_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "retailer_purchases_from_distribution",
                  "rates": [{"sku_key": "pool_sku", "rate": 100, "measure": "dollars"}]}]}');
INSERT INTO incentives.transactions VALUES
  ('P-3', 'retailer_004', 'retailer_purchases_from_distribution', '2026-01-03', 'pool_sku', 1, 'each', 10.00),
  ('P-1', 'retailer_004', 'retailer_purchases_from_distribution', '2026-01-01', 'pool_sku', 1, 'each', 10.00),
  ('P-2', 'retailer_004', 'retailer_purchases_from_distribution', '2026-01-02', 'pool_sku', 1, 'each', 10.00);
SELECT results_eq(
  $$SELECT transaction_id, incentive_amount::text, offer_sku_pay_rate::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_004', offer_keys => ARRAY['t.pool'])
     ORDER BY transaction_id$$,
  $$VALUES ('P-1', '33.33', '3.333333'), ('P-2', '33.34', '3.333333'), ('P-3', '33.33', '3.333333')$$,
  'a $100 pool over three equal purchases: 33.33, 33.34, 33.33');
SELECT results_eq(
  $$SELECT sum(incentive_amount)
      FROM incentives.incentive_calculate(participant_key => 'retailer_004', offer_keys => ARRAY['t.pool'])$$,
  $$VALUES (100.00)$$,
  'the pool is paid out exactly');

-- Unit conversion through the SKU catalog, and the missing-conversion error.
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('crop_guard_30_l_herbicide_2.5_gal_22654', 'gal');
INSERT INTO incentives.transactions VALUES
  ('U-1', 'retailer_005', 'retailer_purchases_from_distribution', '2026-01-01',
   'crop_guard_30_l_herbicide_2.5_gal_22654', 8, 'qt', 100.00);
SELECT results_eq(
  $$SELECT incentivized_quantity::text
      FROM incentives.incentive_calculate(participant_key => 'retailer_005',
                                          offer_keys => ARRAY['corteva.2026.retailer.local.crop_protection.base'])$$,
  $$VALUES ('2.000000')$$,
  '8 qt is 2 gal in the SKU''s unit (shipped gal->qt 4, used as 1/4)');
INSERT INTO incentives.transactions VALUES
  ('U-2', 'retailer_005', 'retailer_purchases_from_distribution', '2026-01-02',
   'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'jug', 100.00);
SELECT throws_like(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_005',
                                                 offer_keys => ARRAY['corteva.2026.retailer.local.crop_protection.base'])$$,
  '%U-2%', 'a missing unit conversion is an error naming the transaction');
SELECT throws_like(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_005',
                                                 offer_keys => ARRAY['corteva.2026.retailer.local.crop_protection.base'])$$,
  '%jug%', '... and the unit');
INSERT INTO incentives.uom_conversions VALUES ('jug', 'gal', 2.5);
SELECT lives_ok(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => 'retailer_005')$$,
  'adding the conversion row fixes it');

-- Row-level security on the transactions applies: the function runs with the
-- caller's rights.
CREATE ROLE incentives_test_analyst;
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_test_analyst;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO incentives_test_analyst;
ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_retailer_001 ON incentives.transactions
  TO incentives_test_analyst USING (participant_key = 'retailer_001');
-- (pgTAP's own temp tables belong to the session's user: calculate as the
-- analyst into a temp table, assert after RESET ROLE.)
SET LOCAL ROLE incentives_test_analyst;
CREATE TEMP TABLE seen_by_analyst AS
SELECT DISTINCT participant_key FROM incentives.incentive_calculate();
RESET ROLE;
SELECT results_eq(
  $$SELECT participant_key FROM seen_by_analyst$$,
  $$VALUES ('retailer_001')$$,
  'under row-level security a role sees only the earnings of the rows it may read');
SELECT results_eq(
  $$SELECT count(DISTINCT participant_key) FROM incentives.incentive_calculate()$$,
  $$VALUES (5::bigint)$$,
  'a superuser still sees every participant');

-- A relation without the transaction columns is refused, naming it.
SELECT throws_like(
  $$SELECT * FROM incentives.incentive_calculate(transactions => 'incentives.skus')$$,
  '%skus%', 'a relation lacking the transaction columns is an error naming it');

SELECT * FROM finish();
ROLLBACK;
