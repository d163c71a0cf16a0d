-- currency_cad: offers in a currency over transactions in several
-- (docs/reference.md, Currencies).  A CAD offer over USD and CAD lines,
-- converted at the later of the direct and the inverse pair's latest rate
-- on each transaction's date (the direct one on a tie), and a USD offer
-- over the same lines; a line without a currency taken as it is.
-- Fixture: test/fixtures/currency_cad/ (see its README.md).
\set fixture currency_cad
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- The rate each line took into each offer's currency.
SELECT transaction_id, offer_key, currency, exchange_rate, provided_amount, incentivized_amount
  FROM incentives.incentive_calculate()
 ORDER BY transaction_id, offer_key;

-- The forecast names each offer's currency.
SELECT participant_key, offer_key, currency, earned_to_date
  FROM incentives.forecast('2026-09-30')
 ORDER BY participant_key, offer_key;

-- A line whose rate is missing is an error where its figure is computed:
-- a EUR line in the CAD offer, dated before any EUR rate.
\set VERBOSITY default
\set SHOW_CONTEXT never
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount, currency)
VALUES ('CX-90', 'retailer_ca9', 'retailer_purchases_from_distribution', '2026-03-01',
        'herbicide_x_1_gal', 1, 'gal', 100.00, 'EUR');
SELECT count(*) FROM incentives.incentive_calculate('retailer_ca9');
\echo :SQLSTATE
-- ... and a rate of the day makes it a figure.
INSERT INTO incentives.exchange_rates VALUES ('EUR', 'CAD', '2026-01-01', 1.5),
                                             ('EUR', 'USD', '2026-01-01', 1.1);
SELECT offer_key, exchange_rate, incentivized_amount, incentive_amount
  FROM incentives.incentive_calculate('retailer_ca9')
 ORDER BY offer_key;

-- The table's checks.
INSERT INTO incentives.exchange_rates VALUES ('usd', 'CAD', '2026-01-01', 1.3);
\echo :SQLSTATE
INSERT INTO incentives.exchange_rates VALUES ('USD', 'USD', '2026-01-01', 1);
\echo :SQLSTATE
INSERT INTO incentives.exchange_rates VALUES ('USD', 'CAD', '2026-01-02', 0);
\echo :SQLSTATE
-- An offer's currency is three upper-case letters.
UPDATE incentives.offers SET document = jsonb_set(document, '{currency}', '"cad"')
 WHERE offer_key = 'mfr.2026.ca_volume';
\set VERBOSITY terse
