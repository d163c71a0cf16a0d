-- returns_original_sale: returns against their sale (docs/reference.md,
-- Returns against their sale).  A return that names its original sale
-- (original_transaction_id: same participant and SKU, dated on or before
-- it) counts at the sale's date for every "which date" question --
-- periods, enrollment windows, tiers -- and at its own date for "when did
-- it happen": through_date and statements.  A return that names nothing
-- usable keeps its own date.
-- Fixture: test/fixtures/returns_original_sale/ (see its README.md).
\set fixture returns_original_sale
\i test/sql/load_fixture.psql

\i test/sql/fixture_checks.psql

-- Through the season's last day, the credits dated after it are not read
-- yet: retailer_001 earns RT-01 alone, at 2% in the tiers ($10,000).
SELECT offer_key, transaction_id, incentive_rate_key, incentive_amount
  FROM incentives.incentive_calculate('retailer_001', through_date => '2026-09-30')
 ORDER BY offer_key, transaction_id;

-- A statement at the season's end, then one a month later (in a database
-- of its own: settled offers stay settled): the credit memos of October,
-- matched to their March sale, claw back on the second (RT-02 and RT-08
-- at 3%, and the tier falling from 2% to 1%).  The materialized earnings
-- keep each transaction's own date.
\set regress_db :DBNAME
CREATE DATABASE incentives_returns;
\c incentives_returns
SET client_min_messages = warning;
CREATE EXTENSION incentives;
\i test/sql/load_fixture.psql
CALL incentives.refresh_earnings();
CALL incentives.settle('2026-09-30', 'retailer_001');
CALL incentives.settle('2026-10-31', 'retailer_001');
RESET client_min_messages;
SELECT s.statement_date, l.offer_key, l.earned_to_date, l.settled_before, l.amount_due
  FROM incentives.statement_lines AS l
  JOIN incentives.statements AS s USING (statement_id)
 WHERE l.participant_key = 'retailer_001'
 ORDER BY s.statement_date, l.offer_key;
SELECT transaction_id, transaction_date, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings
 WHERE participant_key = 'retailer_001'
 GROUP BY 1, 2 ORDER BY 1;
\c :regress_db
DROP DATABASE incentives_returns;

-- The original must be of the same participant: RT-11, retailer_001's
-- return naming retailer_002's sale RT-21, keeps its own date (after the
-- season: no row); RT-12 is retailer_002's own return of RT-21, dated in
-- December: -$3.00 and -$1.00 (retailer_002 stays in the 1% tier).
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount,
                                     original_transaction_id)
VALUES ('RT-11', 'retailer_001', 'retailer_purchases_from_distribution', '2026-10-02',
        'herbicide_x_1_gal', -1, 'gal', -100.00, 'RT-21'),
       ('RT-12', 'retailer_002', 'retailer_purchases_from_distribution', '2026-12-01',
        'herbicide_x_1_gal', -1, 'gal', -100.00, 'RT-21');
SELECT participant_key, offer_key, transaction_id, incentive_amount
  FROM incentives.incentive_calculate()
 WHERE transaction_id IN ('RT-11', 'RT-12')
 ORDER BY 1, 2, 3;

-- A relation without original_transaction_id reads every return at its
-- own date: the October credits then count for nothing.
CREATE VIEW public.returns_without_originals AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       quantity, uom_key, amount
  FROM incentives.transactions;
SELECT offer_key, sum(incentive_amount) AS incentive_amount
  FROM incentives.incentive_calculate('retailer_001', transactions => 'public.returns_without_originals')
 GROUP BY offer_key ORDER BY offer_key;
DROP VIEW public.returns_without_originals;

-- An original_transaction_id of another type than text is named like any
-- column of the wrong type.
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE VIEW public.returns_bad_original AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key,
       quantity, uom_key, amount, 1 AS original_transaction_id
  FROM incentives.transactions;
SELECT count(*) FROM incentives.incentive_calculate(transactions => 'public.returns_bad_original');
\echo :SQLSTATE
DROP VIEW public.returns_bad_original;
\set VERBOSITY terse

-- refresh_earnings(changed_only => true) (docs/lifecycle.md,
-- "changed_only => true"): an update of a transaction's grower_key,
-- currency or original_transaction_id logs its participant (the original
-- is the same participant's: no one else moves); a change of
-- incentives.exchange_rates logs everyone.  The changed_only refresh then
-- equals a calculation of everyone.  (In a transaction rolled back: the
-- tests after this one expect no refresh.)
BEGIN;
SET LOCAL client_min_messages = warning;
CALL incentives.refresh_earnings();
DELETE FROM incentives.earnings_changes;
-- RT-02 no longer names its sale: it falls back to its own date (October)
UPDATE incentives.transactions SET original_transaction_id = NULL WHERE transaction_id = 'RT-02';
SELECT participant_key FROM incentives.earnings_changes ORDER BY 1;
DELETE FROM incentives.earnings_changes;
-- RT-03 names its sale now: it counts at March's date
UPDATE incentives.transactions SET original_transaction_id = 'RT-01' WHERE transaction_id = 'RT-03';
UPDATE incentives.transactions SET grower_key = 'farm_1' WHERE transaction_id = 'RT-12';
UPDATE incentives.transactions SET currency = 'USD' WHERE transaction_id = 'RT-21';
SELECT participant_key FROM incentives.earnings_changes ORDER BY 1;
CALL incentives.refresh_earnings(changed_only => true);
SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
SELECT count(*) AS differing
  FROM ((SELECT participant_key, offer_key, transaction_id, incentive_amount, grower_key, currency
           FROM incentives.earnings
         EXCEPT ALL
         SELECT participant_key, offer_key, transaction_id, incentive_amount, grower_key, currency
           FROM incentives.incentive_calculate())
        UNION ALL
        (SELECT participant_key, offer_key, transaction_id, incentive_amount, grower_key, currency
           FROM incentives.incentive_calculate()
         EXCEPT ALL
         SELECT participant_key, offer_key, transaction_id, incentive_amount, grower_key, currency
           FROM incentives.earnings)) AS d;
SELECT transaction_id, grower_key, sum(incentive_amount) AS incentive_amount
  FROM incentives.earnings WHERE transaction_id IN ('RT-02', 'RT-03', 'RT-12')
 GROUP BY 1, 2 ORDER BY 1;
-- exchange rates: any row inserted, updated or deleted, or a TRUNCATE, is
-- a change of everyone; a statement that changes no row logs nothing
DELETE FROM incentives.earnings_changes;
INSERT INTO incentives.exchange_rates VALUES ('CAD', 'USD', '2026-01-01', 0.73);
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
DELETE FROM incentives.earnings_changes;
UPDATE incentives.exchange_rates SET rate = 0.74 WHERE from_currency = 'CAD';
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
CALL incentives.refresh_earnings(changed_only => true);
SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1;
DELETE FROM incentives.exchange_rates WHERE from_currency = 'EUR';
SELECT count(*) AS logged FROM incentives.earnings_changes;
DELETE FROM incentives.exchange_rates WHERE from_currency = 'CAD';
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
DELETE FROM incentives.earnings_changes;
TRUNCATE incentives.exchange_rates;
SELECT participant_key IS NULL AS everyone FROM incentives.earnings_changes;
ROLLBACK;
