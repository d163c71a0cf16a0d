-- offer_warnings: checking a program book (docs/analyst-guide.md, Checking
-- a program book): incentives.offer_warnings, incentives.program_skus and
-- incentives.transaction_warnings, over incentives.transactions and over
-- a user's relation.
-- Fixture: test/fixtures/stepped_amount/ (see its README.md), a correct book.
\set fixture stepped_amount
\i test/sql/load_fixture.psql

-- A correct book says nothing.
SELECT * FROM incentives.offer_warnings;
SELECT * FROM incentives.transaction_warnings;

-- Every SKU the stepped offer reads: the earning SKUs (its filters), the
-- threshold SKUs (threshold_definition.filters) and the priced one, each
-- with the transactions that match it.
SELECT * FROM incentives.program_skus;
SELECT * FROM incentives.program_skus() WHERE role = 'threshold';

-- A standard offer document: key, calculator, its one period, and one
-- entry of the given type rating each SKU at rate (percent for
-- percent_of_amount, dollars otherwise), with extra top-level fields.
CREATE FUNCTION pg_temp.standard(key text, skus text[], transaction_type text DEFAULT 'retailer_purchases_from_distribution',
                                 start_date date DEFAULT '2025-10-01', end_date date DEFAULT '2026-09-30',
                                 calculator text DEFAULT 'percent_of_amount', extra jsonb DEFAULT '{}')
RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'offer_key', key, 'strategy_key', 'standard', 'calculator_key', calculator,
        'periods', jsonb_build_array(jsonb_build_object('key', 'p', 'start_date', start_date, 'end_date', end_date)),
        'incentives', jsonb_build_array(jsonb_build_object(
            'period_key', 'p', 'transaction_type', transaction_type,
            'rates', (SELECT jsonb_agg(jsonb_build_object('sku_key', s, 'rate', 2,
                                                           'measure', CASE calculator WHEN 'percent_of_amount' THEN 'percent' ELSE 'dollars' END))
                        FROM unnest(skus) AS s)))) || extra
$$;

-- The mistakes of a book written by hand, one offer each.
INSERT INTO incentives.offers (document) VALUES
  -- a SKU in the wrong case, one with a zero for a letter O, one unknown
  (pg_temp.standard('w.sku', ARRAY['AGRI_SHIELD_INSECTICIDE_BULK_63374',
                                   'cr0p_guard_30_l_herbicide_2.5_gal_22654', 'no_such_sku'])),
  -- a transaction type in the singular
  (pg_temp.standard('w.type', ARRAY['agri_shield_insecticide_bulk_63374'],
                    transaction_type => 'retailer_purchase_from_distribution')),
  -- a period a year off: last season's, which has no transaction
  (pg_temp.standard('w.period', ARRAY['agri_shield_insecticide_bulk_63374'],
                    start_date => '2024-10-01', end_date => '2025-09-30')),
  -- dollars per unit on a SKU without a unit that comes in gallons and quarts
  (pg_temp.standard('w.per_unit', ARRAY['mixed_units_sku'], calculator => 'dollars_per_unit')),
  -- enrollment required, and no enrollment row
  (pg_temp.standard('w.enrollment', ARRAY['agri_shield_insecticide_bulk_63374'],
                    extra => '{"enrollment": "required"}')),
  -- aggregated by group, and no membership row
  (pg_temp.standard('w.group', ARRAY['agri_shield_insecticide_bulk_63374'],
                    extra => '{"aggregation": "group"}'));
-- a stacked offer whose conversions name a unit nothing connects: "gallon"
-- for a SKU measured in gal, "hectare_foot" for a SKU without a unit
INSERT INTO incentives.offers (document) VALUES ($${
  "offer_key": "w.unit", "strategy_key": "stacked", "calculator_key": "dollars_per_coverage_unit",
  "periods": [{"key": "p", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
  "incentive": {
    "sku_sets": [
      {"key": "a", "period_key": "p", "transaction_type": "retailer_purchases_from_distribution",
       "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654", "rate": 0.5, "from": "gallon"}]},
       "rates": [{"sku_key": "crop_guard_30_l_herbicide_2.5_gal_22654", "rate": 1, "measure": "dollars"}]},
      {"key": "b", "period_key": "p", "transaction_type": "retailer_purchases_from_distribution",
       "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "field_hammer_fungicide_1_gal_61492", "rate": 0.5, "from": "hectare_foot"}]},
       "rates": [{"sku_key": "field_hammer_fungicide_1_gal_61492", "rate": 1, "measure": "dollars"}]}],
    "stacks": [{"sku_set_keys": ["a", "b"]}]}}$$);
-- SKU keys typed by hand, among thousands of known ones: a letter dropped
-- (a row of incentives.skus), two letters swapped (a SKU only the
-- transactions have), the start of a key; each gets the one meant, by the
-- rule of a misspelt field
INSERT INTO incentives.skus (sku_key, uom_key)
SELECT 'generated_sku_' || lpad(i::text, 5, '0'), 'gal' FROM generate_series(1, 5000) AS i
UNION ALL VALUES ('trident_herbicide', 'gal');
INSERT INTO incentives.offers (document) VALUES
  (pg_temp.standard('w.sku_near', ARRAY['trident_herbicde', 'field_hamemr_fungicide_1_gal_61492',
                                        'agri_shield_insecticide_bulk', 'generated_sku_0042x'])),
  (pg_temp.standard('w.type_near', ARRAY['agri_shield_insecticide_bulk_63374'],
                    transaction_type => 'Retailer-Purchases-From-Distributoin'));
SET incentives.unknown_offer_fields = 'warning';
INSERT INTO incentives.offers (document) VALUES
  (pg_temp.standard('w.field', ARRAY['agri_shield_insecticide_bulk_63374'], extra => '{"enrolment": "required"}'));
RESET incentives.unknown_offer_fields;
-- a gold tier of 35 percent meant as 3.5
INSERT INTO incentives.offers (document)
SELECT jsonb_set(jsonb_set(document, '{offer_key}', '"w.rate"'), '{incentive,rates,0,value}', '35')
  FROM incentives.offers WHERE offer_key = 'offer_a';
INSERT INTO incentives.skus VALUES ('crop_guard_30_l_herbicide_2.5_gal_22654', 'gal');
INSERT INTO incentives.transactions VALUES
  ('MIX-1', 'retailer_001', 'retailer_purchases_from_distribution', '2026-02-01', 'mixed_units_sku', 10, 'gal', 100),
  ('MIX-2', 'retailer_001', 'retailer_purchases_from_distribution', '2026-02-02', 'mixed_units_sku', 8, 'qt', 20);
-- Stored keys a write now refuses, as a database of 0.3.0 may hold them
-- (stored here with the triggers off, as such a database has them): white
-- space around a key, a key equal to another but for case, an enrollment
-- of an offer that does not exist.
SET session_replication_role = replica;
INSERT INTO incentives.offers (document)
SELECT jsonb_set(document, '{offer_key}', to_jsonb(k))
  FROM incentives.offers, unnest(ARRAY['OFFER_A', 'offer_b ', E'offer\tc']) AS k
 WHERE offer_key = 'offer_a';
INSERT INTO incentives.enrollments VALUES ('retailer_001', 'offer_c', '2026-01-01', NULL),
                                          ('retailer_002', 'offer_c', '2026-01-01', NULL),
                                          ('retailer_001', 'OFFER_a', '2026-01-01', NULL);
RESET session_replication_role;

-- Each mistake, with its path and a sentence naming the value.
SELECT offer_key, path, code, message FROM incentives.offer_warnings;

-- The programs as the user checks them: the unknown SKUs match nothing.
SELECT * FROM incentives.program_skus WHERE offer_key IN ('w.sku', 'w.type', 'w.unit', 'w.per_unit');

-- A period a year off is judged against the book and the data, never the
-- clock.  A transaction of the offer's SKUs dated in the period shows it
-- is real: period_outside_book says nothing then (nor does empty_period).
INSERT INTO incentives.transactions VALUES
  ('OLD-1', 'retailer_001', 'retailer_purchases_from_distribution', '2025-03-01', 'agri_shield_insecticide_bulk_63374', 1, 'gal', 10);
SELECT offer_key, path, code FROM incentives.offer_warnings WHERE offer_key = 'w.period';
DELETE FROM incentives.transactions WHERE transaction_id = 'OLD-1';
-- An UPDATE is judged against the other offers: moved onto the book's
-- dates the offer says nothing; moved two years past them, it warns when
-- stored and on read.
UPDATE incentives.offers SET document = pg_temp.standard('w.period', ARRAY['agri_shield_insecticide_bulk_63374'])
 WHERE offer_key = 'w.period';
SELECT offer_key, path, code FROM incentives.offer_warnings WHERE offer_key = 'w.period';
UPDATE incentives.offers
   SET document = pg_temp.standard('w.period', ARRAY['agri_shield_insecticide_bulk_63374'],
                                   start_date => '2027-10-01', end_date => '2028-09-30')
 WHERE offer_key = 'w.period';
SELECT offer_key, path, code, message FROM incentives.offer_warnings WHERE offer_key = 'w.period';
-- A book of one offer has nothing to judge a period against.
BEGIN;
DELETE FROM incentives.offers WHERE offer_key <> 'w.period';
SELECT offer_key, path, code FROM incentives.offer_warnings WHERE offer_key = 'w.period';
ROLLBACK;

-- Fixed, the book says nothing again.
DELETE FROM incentives.offers WHERE offer_key LIKE 'w.%' OR offer_key IN ('OFFER_A', 'offer_b ', E'offer\tc');
DELETE FROM incentives.enrollments;
DELETE FROM incentives.skus WHERE sku_key LIKE 'generated_sku_%' OR sku_key = 'trident_herbicide';
SELECT * FROM incentives.offer_warnings;

------------------------------------------------------------------------
-- transaction_warnings: every line a calculation would refuse, all of them
------------------------------------------------------------------------

-- A NULL a figure needs, and units with no conversion to the SKU's.
UPDATE incentives.transactions SET uom_key = 'drum'
 WHERE transaction_id IN ('01JAD80XDZGZNTYDRV4H5622E1', '01JAD80XDZGZNTYDRV4H5622H1');
-- (in drums too, a transaction of a threshold SKU of an amount threshold:
-- its quantity is never converted, it is no refusal)
UPDATE incentives.transactions SET uom_key = 'drum' WHERE transaction_id = '01JAD80XDZGZNTYDRV4H5622J1';
INSERT INTO incentives.skus VALUES ('agri_shield_insecticide_2.5_gal_53551', 'gal');
-- a transaction of a SKU no offer reads is never read: never refused
INSERT INTO incentives.transactions VALUES
  ('OTHER-1', 'retailer_001', 'retailer_purchases_from_distribution', '2026-02-01', 'unread_sku', 1, 'drum', 1);
SELECT * FROM incentives.transaction_warnings;
-- The calculation names the first; the view names both.  Fixed, the
-- calculation runs.
\set VERBOSITY terse
SELECT count(*) FROM incentives.incentive_calculate();
\set VERBOSITY default
INSERT INTO incentives.uom_conversions VALUES ('drum', 'gal', 55);
SELECT * FROM incentives.transaction_warnings;
SELECT count(*) FROM incentives.incentive_calculate();
DELETE FROM incentives.uom_conversions WHERE from_uom_key = 'drum';

-- A user's relation with neither NOT NULL constraints nor a unique
-- transaction_id: every NULL, number and repeat it holds.
CREATE TABLE my_transactions AS SELECT * FROM incentives.transactions;
UPDATE my_transactions SET uom_key = 'gal' WHERE uom_key IN ('drum', 'l');
INSERT INTO my_transactions VALUES
  ('N-1', 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', 'agri_shield_insecticide_2.5_gal_53551', NULL, 'gal', 10),
  ('N-2', 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', 'agri_shield_insecticide_2.5_gal_53551', 1, 'gal', NULL),
  ('N-3', 'retailer_004', NULL, '2026-02-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 10),
  ('N-4', 'retailer_004', 'retailer_purchases_from_distribution', NULL, 'field_hammer_fungicide_1_gal_61492', 1, 'gal', 10),
  (NULL, 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', 'field_hammer_fungicide_1_gal_61492', 1, 'gal', 10),
  ('N-5', NULL, 'retailer_purchases_from_distribution', '2026-02-01', 'field_hammer_fungicide_1_gal_61492', 1, 'gal', 10),
  ('N-6', 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', NULL, 1, 'gal', 10),
  ('N-7', 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', 'agri_shield_insecticide_2.5_gal_53551', 'NaN', 'gal', 10),
  ('01JAD80XDZGZNTYDRV4H5622C1', 'retailer_005', 'retailer_purchases_from_distribution', '2026-02-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', 1, 'gal', 10),
  -- a threshold SKU's transaction dated outside the period: not matched, its NULL never needed
  ('N-8', 'retailer_004', 'retailer_purchases_from_distribution', '2027-02-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', NULL, NULL, NULL),
  -- a threshold SKU of an amount threshold: its quantity is never needed
  ('N-9', 'retailer_004', 'retailer_purchases_from_distribution', '2026-02-01', 'crop_guard_30_l_herbicide_2.5_gal_22654', NULL, NULL, 10),
  -- a SKU no offer reads, NULLs and all
  ('N-10', 'retailer_004', NULL, NULL, 'unread_sku', NULL, NULL, NULL);
SELECT * FROM incentives.transaction_warnings('my_transactions');
-- The calculation refuses the first of them; the lines it never refuses
-- are not listed.
\set VERBOSITY terse
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'my_transactions');
\set VERBOSITY default
CREATE TABLE fine_transactions AS
SELECT * FROM my_transactions WHERE transaction_id IN ('N-8', 'N-9', 'N-10', '01JAD80XDZGZNTYDRV4H5622B1');
SELECT count(*) FROM incentives.transaction_warnings('fine_transactions');
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'fine_transactions');
-- a relation name that needs quoting
CREATE TABLE "My ""Txns""" AS SELECT * FROM my_transactions WHERE transaction_id IN ('N-1', 'N-2');
SELECT participant_key, transaction_id, code FROM incentives.transaction_warnings('"My ""Txns"""');
SELECT * FROM incentives.program_skus('"My ""Txns"""') WHERE transactions > 0;
-- the defaults' relation is unchanged
SELECT count(*) FROM incentives.transaction_warnings();

-- offer_warnings and program_skus over the user's relation: its SKUs and
-- types are the known ones.
SELECT * FROM incentives.program_skus('my_transactions');
UPDATE my_transactions SET transaction_type = 'retailer_sales_to_growers';
SELECT offer_key, path, code FROM incentives.offer_warnings('my_transactions');

-- The relation is checked as the calculation checks it.
\set SHOW_CONTEXT never
CREATE TABLE not_transactions (transaction_id text, participant_key text);
SELECT * FROM incentives.offer_warnings('not_transactions');
SELECT * FROM incentives.transaction_warnings('not_transactions');
CREATE TABLE bad_types AS SELECT transaction_id, participant_key, transaction_type,
                                 transaction_date::text AS transaction_date, sku_key, quantity, uom_key, amount
                            FROM incentives.transactions;
SELECT * FROM incentives.program_skus('bad_types');
\set SHOW_CONTEXT errors
-- NULL: the default relation
SELECT count(*) FROM incentives.transaction_warnings(NULL);

DROP TABLE my_transactions, fine_transactions, not_transactions, bad_types, "My ""Txns""";

-- Nothing a calculation refuses goes unlisted: each transaction of a
-- fixture spoilt in turn (a NULL in each column, a unit without
-- conversion, a repeated id, an amount that is not a number), a
-- calculation that fails means a listed transaction.
CREATE FUNCTION pg_temp.unlisted_refusals(props jsonb)
RETURNS TABLE (transaction_id text, spoilt text, error text)
LANGUAGE plpgsql SET client_min_messages = warning AS $$
DECLARE
  t record; m text; v_err text;
BEGIN
  FOR t IN SELECT x.transaction_id FROM incentives.transactions AS x ORDER BY 1 LOOP
    FOREACH m IN ARRAY ARRAY['transaction_type', 'transaction_date', 'quantity', 'uom_key', 'amount',
                             'drum', 'participant_key', 'repeated', 'nan'] LOOP
      DROP TABLE IF EXISTS pg_temp.spoilt;
      CREATE TEMP TABLE spoilt AS SELECT * FROM incentives.transactions;
      CASE m
        WHEN 'drum' THEN UPDATE spoilt AS s SET uom_key = 'drum' WHERE s.transaction_id = t.transaction_id;
        WHEN 'repeated' THEN INSERT INTO spoilt SELECT * FROM spoilt AS s WHERE s.transaction_id = t.transaction_id;
        WHEN 'nan' THEN UPDATE spoilt AS s SET amount = 'NaN' WHERE s.transaction_id = t.transaction_id;
        ELSE EXECUTE format('UPDATE spoilt SET %I = NULL WHERE transaction_id = %L', m, t.transaction_id);
      END CASE;
      v_err := NULL;
      BEGIN
        PERFORM count(*) FROM incentives.incentive_calculate(properties => props, transactions => 'pg_temp.spoilt');
      EXCEPTION WHEN OTHERS THEN v_err := SQLERRM;
      END;
      IF v_err IS NOT NULL AND NOT EXISTS (SELECT FROM incentives.transaction_warnings('pg_temp.spoilt')) THEN
        RETURN QUERY SELECT t.transaction_id, m, v_err;
      END IF;
    END LOOP;
  END LOOP;
END
$$;
\set fixture growth_baseline
\i test/sql/load_fixture.psql
SELECT * FROM pg_temp.unlisted_refusals(:'properties');
\set fixture stacked_pair_up
\i test/sql/load_fixture.psql
SELECT * FROM pg_temp.unlisted_refusals(:'properties');
\set fixture rules_requirements
\i test/sql/load_fixture.psql
SELECT * FROM pg_temp.unlisted_refusals(:'properties');

-- Every fixture is a correct book: loaded with its transactions, it has no
-- warning (the period of none is outside the others' dates, and none has
-- a SKU, type or unit the data lack).
CREATE TEMP TABLE fixture_warnings (fixture text, offer_key text, path text, code text, message text);
\set fixture fixed_amount_pools
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture forecast_run_rate
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture groups_accumulate
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture groups_pool_limits
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture growth_baseline
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture rules_enrollment
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture rules_incremental_tiers
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture rules_limits
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture rules_requirements
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture stacked_multi_stack
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture stacked_pair_up
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture standard_dollars_per_unit_uom
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture standard_multi_entry
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture standard_percent
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture stepped_amount
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
\set fixture stepped_property
\i test/sql/load_fixture.psql
INSERT INTO fixture_warnings SELECT :'fixture', w.* FROM incentives.offer_warnings AS w;
SELECT * FROM fixture_warnings;
