-- read_only: in a read-only transaction (on a standby every transaction
-- is one) the procedures and the functions that write the ledger fail at
-- once with 25006, naming themselves (docs/operations.md, Standbys); the
-- calculations read as ever.  In a database of its own.
\set regress_db :DBNAME
CREATE DATABASE incentives_read_only;
\c incentives_read_only
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set fixture fixed_amount_pools
\i test/sql/load_fixture.psql
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
\set VERBOSITY default
BEGIN READ ONLY;
CALL incentives.refresh_earnings();
ROLLBACK;
-- with nothing logged as changed it used to return without a word
TRUNCATE incentives.earnings_changes;
BEGIN READ ONLY;
CALL incentives.refresh_earnings(changed_only => true);
ROLLBACK;
BEGIN READ ONLY;
CALL incentives.settle('2026-06-30');
ROLLBACK;
BEGIN READ ONLY;
CALL incentives.accrue('2026-06-30');
ROLLBACK;
SET default_transaction_read_only = on;
SELECT incentives.remove_settled_offer('bayer.2026.retailer.fixed_bonus', 'withdrawn');
SELECT incentives.change_rates('bayer.2026.retailer.fixed_bonus', '2026-06-01', (SELECT document FROM incentives.offers WHERE offer_key = 'bayer.2026.retailer.fixed_bonus'));
SELECT incentives.cancel_rate_change('bayer.2026.retailer.fixed_bonus');
SELECT incentives.void_statement(1, 'a typo');
SELECT incentives.void_accrual(1, 'a typo');
-- what reads works
SELECT count(*) AS rows, sum(incentive_amount) AS total FROM incentives.incentive_calculate();
SELECT count(*) AS rows FROM incentives.forecast('2026-06-30');
RESET default_transaction_read_only;
\c :regress_db
DROP DATABASE incentives_read_only;
