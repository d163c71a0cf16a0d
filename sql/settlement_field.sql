-- settlement_field: the offer field "settlement": {"holdback_percent": h}
-- (docs/reference.md, Offer documents): h is required, a number with
-- 0 <= h < 100; anything else is an invalid offer (22023) naming its path,
-- an unknown field inside it is refused like any other.  settle reads it
-- from the stored document; the calculation does not, so an UPDATE that
-- changes only the settlement keeps a rate schedule, like an annotation
-- edit (docs/lifecycle.md, Prospective rate changes).  In a database of
-- its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_settlement_field;
\c incentives_settlement_field
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set fixture stepped_amount
\i test/sql/load_fixture.psql
\set VERBOSITY default

-- An offer with a settlement, and a function that writes one with a
-- settlement value of the caller's.
CREATE FUNCTION pg_temp.offer(settlement jsonb) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'offer_key', 'settled', 'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
        'periods', '[{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}]'::jsonb,
        'incentives', '[{"period_key": "p", "transaction_type": "t",
                         "rates": [{"sku_key": "a", "rate": 3, "measure": "percent"}]}]'::jsonb,
        'settlement', settlement)
$$;

-- Valid: 0, 10, 12.5, 99.99 (each replaces the last).
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": 0}'));
UPDATE incentives.offers SET document = pg_temp.offer('{"holdback_percent": 10}') WHERE offer_key = 'settled';
UPDATE incentives.offers SET document = pg_temp.offer('{"holdback_percent": 12.5}') WHERE offer_key = 'settled';
UPDATE incentives.offers SET document = pg_temp.offer('{"holdback_percent": 99.99}') WHERE offer_key = 'settled';
-- the value settle reads, exactly as written
SELECT offer_key, document -> 'settlement' ->> 'holdback_percent' AS holdback_percent
  FROM incentives.offers WHERE offer_key = 'settled';
DELETE FROM incentives.offers WHERE offer_key = 'settled';

-- Refused: an invalid offer, 22023, the path named.
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{}'));
\echo :LAST_ERROR_SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": -1}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": 100}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": 100.00}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": "10"}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": null}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('10'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('[{"holdback_percent": 10}]'));
-- unknown fields, with the field meant where one fits by the rule of
-- every suggestion (pct is no start of percent and 4 edits from it: none)
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_pct": 10}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback": 10}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_percent": 10, "Holdback_Percent": 10}'));
INSERT INTO incentives.offers (document)
VALUES (pg_temp.offer(NULL) - 'settlement' || '{"holdback_percent": 10}');
-- nothing was stored
SELECT count(*) AS settled_offers FROM incentives.offers WHERE offer_key = 'settled';
-- offer_error says the same without writing
SELECT incentives.offer_error(pg_temp.offer('{"holdback_percent": 100}'));
-- under unknown_offer_fields = warning an unknown field inside it is
-- stored with a WARNING; the required field is still required
SET incentives.unknown_offer_fields = 'warning';
INSERT INTO incentives.offers (document)
VALUES (pg_temp.offer('{"holdback_percent": 5, "pay_after": "final"}'));
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('{"holdback_pct": 5}'));
RESET incentives.unknown_offer_fields;
DELETE FROM incentives.offers WHERE offer_key = 'settled';

-- A rate schedule of offer_a: its top tier's value changes from May 1,
-- and a purchase of May 10 takes it.
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount)
VALUES ('may_10', 'retailer_001', 'retailer_purchases_from_distribution', '2026-05-10',
        'agri_shield_insecticide_2.5_gal_53551', 10, 'gal', 500.00);
SELECT incentives.change_rates('offer_a', '2026-05-01',
                               (SELECT jsonb_set(document, '{incentive,rates,0,value}', '16')
                                  FROM incentives.offers WHERE offer_key = 'offer_a')) AS version;
SELECT version, effective_from FROM incentives_internal.rate_schedule('offer_a');

-- An UPDATE that adds a settlement, then one that changes it: no WARNING,
-- each version keeps the schedule's date, the schedule stays.
UPDATE incentives.offers SET document = document || '{"settlement": {"holdback_percent": 10}}'
 WHERE offer_key = 'offer_a';
UPDATE incentives.offers SET document = jsonb_set(document, '{settlement,holdback_percent}', '12.5')
 WHERE offer_key = 'offer_a';
SELECT version, effective_from, document -> 'settlement' AS settlement
  FROM incentives.offer_versions WHERE offer_key = 'offer_a' ORDER BY version;
SELECT version, effective_from FROM incentives_internal.rate_schedule('offer_a');
-- the purchase of May 10 still takes the new value, the earlier ones the old
SELECT transaction_id, incentive_rate_key, incentive_rate_value, incentive_amount
  FROM incentives.incentive_calculate('retailer_001') WHERE offer_key = 'offer_a'
 ORDER BY transaction_id;

-- An invalid settlement is refused on UPDATE too, and the offer stays.
UPDATE incentives.offers SET document = jsonb_set(document, '{settlement,holdback_percent}', '100')
 WHERE offer_key = 'offer_a';
SELECT document -> 'settlement' AS settlement FROM incentives.offers WHERE offer_key = 'offer_a';

-- change_rates changes rate values: a document that changes only the
-- settlement is an UPDATE.
SELECT incentives.change_rates('offer_a', '2026-06-01',
                               (SELECT jsonb_set(document, '{settlement,holdback_percent}', '5')
                                  FROM incentives.offers WHERE offer_key = 'offer_a'));
-- nor may it change the settlement beside a rate value: a holdback is no
-- rate value and starts from no date
SELECT incentives.change_rates('offer_a', '2026-06-01',
                               (SELECT jsonb_set(jsonb_set(document, '{settlement,holdback_percent}', '5'),
                                                 '{incentive,rates,0,value}', '17')
                                  FROM incentives.offers WHERE offer_key = 'offer_a'));
-- the same settlement is no change: accepted
SELECT incentives.change_rates('offer_a', '2026-06-01',
                               (SELECT jsonb_set(document, '{incentive,rates,0,value}', '17')
                                  FROM incentives.offers WHERE offer_key = 'offer_a')) AS version;
SELECT version, effective_from, document -> 'settlement' AS settlement
  FROM incentives_internal.rate_schedule('offer_a');

-- Removing the settlement keeps the schedule too; a change of anything
-- else replaces it, with a WARNING.
UPDATE incentives.offers SET document = document - 'settlement' WHERE offer_key = 'offer_a';
SELECT version, effective_from FROM incentives_internal.rate_schedule('offer_a');
UPDATE incentives.offers SET document = jsonb_set(document, '{prices,0,price}', '55')
 WHERE offer_key = 'offer_a';
SELECT version, effective_from FROM incentives_internal.rate_schedule('offer_a');

\c :regress_db
DROP DATABASE incentives_settlement_field;
