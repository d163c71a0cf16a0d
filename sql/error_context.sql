-- error_context: what an error a user meets says (docs/reference.md,
-- Error context): its message, detail, hint and SQLSTATE as they are, and
-- a CONTEXT of the caller's own frames and the calculation's note of what
-- failed, never a frame of the extension's own routines or of the
-- statements they run.  A refused settle, change_rates,
-- remove_settled_offer and DELETE of a settled offer show no CONTEXT;
-- called from a function of the user's, that function's frames stay;
-- \set VERBOSITY verbose still shows the SQLSTATE and the LOCATION.  In a
-- database of its own: a statement, once settled, stays.
\set regress_db :DBNAME
CREATE DATABASE incentives_error_context;
\c incentives_error_context
SET client_min_messages = warning;
CREATE EXTENSION incentives;
RESET client_min_messages;
\set fixture stepped_amount
\i test/sql/load_fixture.psql
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
CALL incentives.settle('2026-03-31');
RESET client_min_messages;
\set VERBOSITY default
\set SHOW_CONTEXT errors

-- A settle earlier than the latest statement.
CALL incentives.settle('2026-03-30');
\echo :LAST_ERROR_SQLSTATE

-- change_rates refused by its own checks (a hint; a detail and a hint),
-- and by the offers' validation under its UPDATE.
SELECT incentives.change_rates('offer_a', '2026-05-01',
                               (SELECT document FROM incentives.offers WHERE offer_key = 'offer_a'));
SELECT incentives.change_rates('offer_a', '2026-03-01',
                               (SELECT jsonb_set(document, '{incentive,rates,0,value}', '3')
                                  FROM incentives.offers WHERE offer_key = 'offer_a'));
SELECT incentives.change_rates('offer_a', '2026-05-01',
                               (SELECT jsonb_set(document, '{incentive,rates,0,value}', '-3')
                                  FROM incentives.offers WHERE offer_key = 'offer_a'));

-- remove_settled_offer without a reason.
SELECT incentives.remove_settled_offer('offer_a', NULL);

-- A DELETE of the settled offer: refused at the end of the statement, and
-- at COMMIT inside a transaction block (the trigger is deferred).
DELETE FROM incentives.offers WHERE offer_key = 'offer_a';
BEGIN;
DELETE FROM incentives.offers WHERE offer_key = 'offer_a';
COMMIT;
\echo :LAST_ERROR_SQLSTATE

-- A calculation that fails under settle: the note of the transaction and
-- participant it failed at stays, the frames of settle do not.
CREATE VIEW public.lines_without_amount AS
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key,
       NULL::numeric AS amount
  FROM incentives.transactions;
CALL incentives.settle('2026-04-30', transactions => 'public.lines_without_amount');

-- From a function of the user's: its own frames stay, as PL/pgSQL writes
-- them, and so does what a handler of the user's reads.
CREATE FUNCTION public.month_end(d date) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    CALL incentives.settle(d);
END
$$;
SELECT public.month_end('2026-03-30');
DO $$
DECLARE
    v_context text;
BEGIN
    PERFORM public.month_end('2026-03-30');
EXCEPTION WHEN invalid_parameter_value THEN
    GET STACKED DIAGNOSTICS v_context = PG_EXCEPTION_CONTEXT;
    RAISE NOTICE 'caught, with the context: %', v_context;
END
$$;

-- A session whose search_path holds incentives names settle without its
-- schema: its frame is left out all the same.
\c incentives_error_context
SET search_path = incentives, public;
\set VERBOSITY default
\set SHOW_CONTEXT errors
CALL settle('2026-03-30');
RESET search_path;

-- VERBOSITY verbose: the SQLSTATE and the LOCATION are there (the line of
-- src/pg/base/error_context.c that raises).
\set VERBOSITY verbose
CALL incentives.settle('2026-03-30');
SELECT public.month_end('2026-03-30');
\set VERBOSITY default

\c :regress_db
DROP DATABASE incentives_error_context;
