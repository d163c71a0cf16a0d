-- products_brands_categories: programs written on brands and categories
-- (docs/reference.md, Products).  A filter on a category with an
-- excluded product; standard rates by SKU and by product, the nearest
-- product first and the first listed of two as near; a fixed pool on a
-- product; an entry's exclusions; a SKU that moves from one category to
-- another mid-season.  Each row says through which product its rate came
-- (product_key).
-- Fixture: test/fixtures/products_brands_categories/ (see its README.md).
\set fixture products_brands_categories
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- The rate each transaction took under brand_or_segment, and through which
-- product: PB-02 is in premium and glyphos at the same distance, premium
-- is listed first; PB-04 and PB-05 are the same SKU before and after its
-- move from shield to glyphos.
SELECT transaction_id, sku_key, incentive_rate_value, product_key, incentive_amount
  FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.brand_or_segment'])
 ORDER BY transaction_id;

-- The category filter: retailer_001 reaches the 2% tier on herbicides
-- without the generic; retailer_002's generic does not count.
SELECT participant_key, diagnostics ->> 'threshold_value' AS threshold_value,
       diagnostics ->> 'selected_rate_key' AS tier
  FROM incentives.incentive_diagnostics(offer_keys => ARRAY['mfr.2026.herbicides_ex_generics'])
 ORDER BY participant_key;

-- A SKU added to a brand later qualifies without an edit of the offer: a
-- new glyphos SKU sold by retailer_002 earns 3% under brand_rates.
INSERT INTO incentives.sku_products (sku_key, product_key, start_date)
VALUES ('glyphos_max_1_gal', 'glyphos', '2026-01-01');
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount)
VALUES ('PB-30', 'retailer_002', 'retailer_purchases_from_distribution', '2026-06-01',
        'glyphos_max_1_gal', 10, 'gal', 1000.00);
SELECT transaction_id, offer_key, incentive_amount, product_key
  FROM incentives.incentive_calculate('retailer_002')
 WHERE transaction_id = 'PB-30'
 ORDER BY offer_key;
-- ... and a window that ends before the sale takes it out again.
UPDATE incentives.sku_products SET end_date = '2026-05-31'
 WHERE sku_key = 'glyphos_max_1_gal';
SELECT count(*) AS rows_of_pb30
  FROM incentives.incentive_calculate('retailer_002')
 WHERE transaction_id = 'PB-30';
DELETE FROM incentives.transactions WHERE transaction_id = 'PB-30';
DELETE FROM incentives.sku_products WHERE sku_key = 'glyphos_max_1_gal';

-- The materialized earnings carry product_key too (in a database of its
-- own, so that its run is its own).
\set regress_db :DBNAME
CREATE DATABASE incentives_products;
\c incentives_products
SET client_min_messages = warning;
CREATE EXTENSION incentives;
\i test/sql/load_fixture.psql
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT offer_key, product_key, count(*) AS rows, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings
 GROUP BY offer_key, product_key
 ORDER BY offer_key, product_key NULLS FIRST;
\c :regress_db
DROP DATABASE incentives_products;

-- Bad input of the new fields, refused with the offer and the JSON path.
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.rate", "strategy_key": "standard",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "t",
                  "rates": [{"sku_key": "a", "product_key": "glyphos", "rate": 1, "measure": "percent"}]}]}');
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.dup", "strategy_key": "standard",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "t",
                  "rates": [{"product_key": "glyphos", "rate": 1, "measure": "percent"},
                            {"product_key": "glyphos", "rate": 2, "measure": "percent"}]}]}');
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.filter", "strategy_key": "stepped",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {"filters": [{"period_key": "p", "exclude_product_keys": ["shield"], "transaction_type": "t"}],
                "threshold_definition": {"type": "aggregated_amount",
                  "filters": [{"period_key": "p", "product_keys": ["herbicides"], "transaction_type": "t"}]},
                "rates": [{"threshold": 0, "value": 1, "measure": "percent"}]}}');
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.empty", "strategy_key": "stepped",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {"filters": [{"period_key": "p", "product_keys": [], "transaction_type": "t"}],
                "threshold_definition": {"type": "aggregated_amount",
                  "filters": [{"period_key": "p", "product_keys": ["herbicides"], "transaction_type": "t"}]},
                "rates": [{"threshold": 0, "value": 1, "measure": "percent"}]}}');
-- a misspelled field is suggested its name
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.field", "strategy_key": "standard",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentives": [{"period_key": "p", "transaction_type": "t",
                  "rates": [{"product": "glyphos", "rate": 1, "measure": "percent"}]}]}');
INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "bad.field2", "strategy_key": "stepped",
  "calculator_key": "percent_of_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {"filters": [{"period_key": "p", "products": ["herbicides"], "transaction_type": "t"}],
                "threshold_definition": {"type": "aggregated_amount",
                  "filters": [{"period_key": "p", "product_keys": ["herbicides"], "transaction_type": "t"}]},
                "rates": [{"threshold": 0, "value": 1, "measure": "percent"}]}}');
