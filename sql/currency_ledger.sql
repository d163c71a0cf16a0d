-- currency_ledger: what the SQL surfaces say of currencies
-- (docs/reference.md, Currencies; docs/lifecycle.md, Statements per
-- currency): the warnings no_exchange_rate
-- and mixed_currencies, statements, accruals and reporting views per
-- currency, and a currency that cannot change once settled.
-- Fixture: test/fixtures/currency_cad/ (see its README.md).
--
-- The fixture's rows themselves are compared by currency_cad.sql; the
-- statements below clear the transactions' currency, so that each line's
-- amount reads off the transactions as they are, and show how the lines
-- and views keep the offers' currencies apart.
\set fixture currency_cad
\i test/sql/load_fixture.psql

-- A correct book says nothing: every USD and CAD transaction has a rate
-- into the other currency on its date.
SELECT * FROM incentives.offer_warnings;
SELECT * FROM incentives.transaction_warnings;

-- no_exchange_rate: without the USD -> CAD rows before 2026-02-01 (and
-- with no inverse row then), CX-01 (2025-11-15) cannot be converted into
-- the CAD offer; the USD offer reads it as it is.
BEGIN;
DELETE FROM incentives.exchange_rates WHERE rate_date < '2026-02-01';
SELECT participant_key, transaction_id, code, message FROM incentives.transaction_warnings;
ROLLBACK;

-- mixed_currencies: an offer without a currency over CAD and USD purchases
-- adds them as they are; a transaction without currency is not one.
BEGIN;
INSERT INTO incentives.offers (document)
SELECT jsonb_set(document - 'currency', '{offer_key}', '"mfr.2026.no_currency"')
  FROM incentives.offers WHERE offer_key = 'mfr.2026.us_base';
SELECT offer_key, path, code, message FROM incentives.offer_warnings;
ROLLBACK;

-- Statements per currency, in a database of their own (settled offers stay
-- settled).  retailer_ca1 has a CAD line and a USD line: its statement is a
-- row per currency, and settle's NOTICE gives a total per currency.
\set regress_db :DBNAME
CREATE DATABASE incentives_currency;
\c incentives_currency
SET client_min_messages = warning;
CREATE EXTENSION incentives;
\i test/sql/load_fixture.psql
UPDATE incentives.transactions SET currency = NULL;
CALL incentives.refresh_earnings();
RESET client_min_messages;

-- Each row in its offer's currency.
SELECT offer_key, transaction_id, currency, exchange_rate, provided_amount, incentive_amount
  FROM incentives.earnings
 ORDER BY offer_key, transaction_id;

-- The reporting views never add CAD and USD: one row per currency.
SELECT participant_key, currency, offers, incentive_amount
  FROM incentives.earnings_by_participant ORDER BY participant_key, currency;
SELECT offer_key, currency, participants, incentivized_amount, incentive_amount
  FROM incentives.earnings_by_offer ORDER BY offer_key, currency;
SELECT sku_key, currency, incentive_amount
  FROM incentives.earnings_by_sku ORDER BY sku_key, currency;
SELECT month, currency, incentive_amount
  FROM incentives.earnings_by_month ORDER BY month, currency;

CALL incentives.settle('2026-09-30');
SELECT s.statement_date, l.participant_key, l.offer_key, l.currency, l.earned_to_date,
       l.settled_before, l.amount_due, l.kind
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s USING (statement_id)
 ORDER BY l.participant_key, l.offer_key;
SELECT participant_key, currency, offers, earned_to_date, amount_due, lines -> 0 ->> 'offer_key' AS first_offer
  FROM incentives.participant_statements ORDER BY participant_key, currency;
SELECT participant_key, offer_key, currency, settled_total, last_kind
  FROM incentives.settlement_balances ORDER BY participant_key, offer_key;
SELECT participant_key, offer_key, currency, accrued, settled, unsettled
  FROM incentives.unsettled_earnings ORDER BY participant_key, offer_key;

-- A late purchase of retailer_ca3 in the season: the next statement
-- trues up each currency on its own.
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount, currency)
VALUES ('CX-34', 'retailer_ca3', 'retailer_purchases_from_distribution', '2026-09-15',
        'herbicide_x_1_gal', 10, 'gal', 1000.00, NULL);
CALL incentives.settle('2026-10-31');
SELECT l.participant_key, l.offer_key, l.currency, l.earned_to_date, l.settled_before,
       l.amount_due, l.kind
  FROM incentives.statement_lines AS l
 WHERE l.statement_id = (SELECT max(statement_id) FROM incentives.statements)
 ORDER BY l.participant_key, l.offer_key;

-- Accruals carry the currency too, and their balances net only lines of
-- one currency.
CALL incentives.accrue('2026-10-31');
SELECT participant_key, offer_key, currency, accrued_to_date, delta
  FROM incentives.accrual_lines ORDER BY participant_key, offer_key;
SELECT participant_key, offer_key, currency, accrued, settled, accrued_unsettled
  FROM incentives.accrual_balances ORDER BY participant_key, offer_key;

-- Once a line covers it, an offer's currency cannot change (22023): not
-- changed, not removed, and not by a delete and re-insert.  Its rates may.
\set VERBOSITY default
UPDATE incentives.offers SET document = jsonb_set(document, '{currency}', '"USD"')
 WHERE offer_key = 'mfr.2026.ca_volume';
UPDATE incentives.offers SET document = document - 'currency'
 WHERE offer_key = 'mfr.2026.us_base';
BEGIN;
DELETE FROM incentives.offers WHERE offer_key = 'mfr.2026.us_base';
INSERT INTO incentives.offers (document)
SELECT jsonb_set(document, '{currency}', '"EUR"') FROM incentives.offer_versions
 WHERE offer_key = 'mfr.2026.us_base' AND version = 1;
ROLLBACK;
\set VERBOSITY terse
DO $$
BEGIN
    UPDATE incentives.offers SET document = jsonb_set(document, '{currency}', '"EUR"')
     WHERE offer_key = 'mfr.2026.ca_volume';
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'refused with SQLSTATE %', SQLSTATE;
END
$$;
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '2')
 WHERE offer_key = 'mfr.2026.us_base';
SELECT offer_key, document ->> 'currency' AS currency FROM incentives.offers ORDER BY 1;
\c :regress_db
DROP DATABASE incentives_currency;

-- An offer no line covers may change its currency.
UPDATE incentives.offers SET document = jsonb_set(document, '{currency}', '"EUR"')
 WHERE offer_key = 'mfr.2026.us_base';
SELECT offer_key, document ->> 'currency' AS currency FROM incentives.offers ORDER BY 1;
