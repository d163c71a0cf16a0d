-- offer_keys: offer keys are well formed and unique regardless of letter
-- case, and enrollments name stored offers (docs/reference.md, Offers and
-- Enrollment; code/11_offer_keys.sql).  Every row it writes has a key
-- starting "keys." and is removed at the end.
\set VERBOSITY default
\set SHOW_CONTEXT never
CREATE FUNCTION pg_temp.offer(offer_key text, rate numeric DEFAULT 1) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object(
        'offer_key', offer_key, 'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
        'periods', jsonb_build_array(jsonb_build_object('key', 'p', 'start_date', '2026-01-01', 'end_date', '2026-12-31')),
        'incentives', jsonb_build_array(jsonb_build_object('period_key', 'p', 'transaction_type', 'buy',
            'rates', jsonb_build_array(jsonb_build_object('sku_key', 's', 'rate', rate, 'measure', 'percent')))))
$$;

INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base_cp'));

-- Malformed keys (22023), the key shown as a JSON string.
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(''));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base_cp '));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(' keys.base_cp'));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(E'keys.base_cp\t'));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(E'keys.base\ncp'));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(E'keys.base_cp\u00a0'));
\echo :SQLSTATE
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer(E'keys.base\u0085cp'));
\echo :SQLSTATE
-- white space inside a key is allowed
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base cp'));

-- A key equal to another's but for case (23505, naming the existing one),
-- by INSERT, by an upsert and by an UPDATE that changes the key.
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('KEYS.base_cp'));
\echo :SQLSTATE
SELECT incentives_internal.put_offer(pg_temp.offer('Keys.Base_CP'));
\echo :SQLSTATE
UPDATE incentives.offers SET document = pg_temp.offer('KEYS.BASE_CP') WHERE offer_key = 'keys.base cp';
\echo :SQLSTATE
-- and a malformed key by an UPDATE
UPDATE incentives.offers SET document = pg_temp.offer(' keys.base cp') WHERE offer_key = 'keys.base cp';
\echo :SQLSTATE

-- Not conflicts: an UPDATE of the row itself (the document, or its key's
-- case), an upsert of a stored key, a delete and a re-insert of one key in
-- one transaction, a key that differs in more than case.
UPDATE incentives.offers SET document = pg_temp.offer('keys.base_cp', 2) WHERE offer_key = 'keys.base_cp';
SELECT incentives_internal.put_offer(pg_temp.offer('keys.base_cp', 3));
UPDATE incentives.offers SET document = pg_temp.offer('Keys.Base CP') WHERE offer_key = 'keys.base cp';
BEGIN;
DELETE FROM incentives.offers WHERE offer_key = 'keys.base_cp';
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base_cp', 4));
COMMIT;
BEGIN;
DELETE FROM incentives.offers WHERE offer_key = 'keys.base_cp';
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('KEYS.BASE_CP', 4));
ROLLBACK;
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base_cp2'));
SELECT offer_key, document #>> '{incentives,0,rates,0,rate}' AS rate
  FROM incentives.offers WHERE lower(offer_key) LIKE 'keys.%' ORDER BY offer_key COLLATE "C";

-- Enrollments name a stored offer (23503, the offer meant as a hint: one
-- that differs by case, or a near key, by the rule of a misspelt field).
INSERT INTO incentives.enrollments VALUES ('r1', 'keys.base_cp', '2026-01-01', NULL);
INSERT INTO incentives.enrollments VALUES ('r1', 'keys.adjuvent_club', '2026-01-01', NULL);
\echo :SQLSTATE
INSERT INTO incentives.enrollments VALUES ('r1', 'KEYS.BASE_CP', '2026-01-01', NULL);
\echo :SQLSTATE
SELECT incentives_internal.put_enrollment('r2', 'keys.nothing', '2026-01-01');
\echo :SQLSTATE
UPDATE incentives.enrollments SET offer_key = 'keys.nothing' WHERE participant_key = 'r1';
\echo :SQLSTATE
-- two letters swapped, the start of a key
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('pas26.st_bonus'));
INSERT INTO incentives.enrollments VALUES ('r3', 'pas26.st_bonsu', '2026-01-01', NULL);
\echo :SQLSTATE
SELECT incentives_internal.put_enrollment('r3', 'keys.base', '2026-01-01');
\echo :SQLSTATE
DELETE FROM incentives.offers WHERE offer_key = 'pas26.st_bonus';
-- an update that keeps the offer, an upsert of a stored window
UPDATE incentives.enrollments SET end_date = '2026-06-30' WHERE participant_key = 'r1';
SELECT incentives_internal.put_enrollment('r1', 'keys.base_cp', '2026-01-01', '2026-09-30');
-- deleting the offer leaves its enrollments, which stay editable
DELETE FROM incentives.offers WHERE offer_key = 'keys.base_cp2';
INSERT INTO incentives.enrollments VALUES ('r3', 'keys.base_cp', '2026-01-01', NULL);
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('keys.base_cp2'));
INSERT INTO incentives.enrollments VALUES ('r3', 'keys.base_cp2', '2026-01-01', NULL);
DELETE FROM incentives.offers WHERE offer_key = 'keys.base_cp2';
SELECT incentives_internal.put_enrollment('r3', 'keys.base_cp2', '2026-01-01', '2026-12-31');
SELECT * FROM incentives.enrollments WHERE offer_key LIKE 'keys.%' ORDER BY 1, 2, 3;

-- A calculation request's enrollments name offers too (22023).
SELECT incentives.calculate('{"participant_key": "r1", "enrollments": [{"offer_key": "keys.base_cp", "start_date": "2026-01-01"},
                                                                      {"offer_key": "keys.nothing", "start_date": "2026-01-01"}]}');
SELECT incentives.calculate('{"participant_key": "r1", "offer_keys": ["keys.base_cp"],
                              "enrollments": [{"offer_key": "keys.base_cp", "start_date": "2026-01-01"}]}');

-- A restore (row_security and check_function_bodies off, as pg_dump's
-- scripts and pg_restore set them; either is enough) stores what it is
-- given and reports it.
SET check_function_bodies = off;
SET client_min_messages = notice;
INSERT INTO incentives.offers (document) VALUES (pg_temp.offer('KEYS.base_cp')), (pg_temp.offer('keys.trailing '));
INSERT INTO incentives.enrollments VALUES ('r4', 'keys.restored_nothing', '2026-01-01', NULL);
RESET check_function_bodies;
RESET client_min_messages;
-- a stored case duplicate stays editable, and its enrollments too
UPDATE incentives.offers SET document = pg_temp.offer('KEYS.base_cp', 5) WHERE offer_key = 'KEYS.base_cp';
SELECT incentives_internal.put_offer(pg_temp.offer('keys.trailing ', 6));
SELECT incentives_internal.put_enrollment('r4', 'keys.restored_nothing', '2026-01-01', '2026-03-31');
SELECT offer_key, document #>> '{incentives,0,rates,0,rate}' AS rate
  FROM incentives.offers WHERE lower(offer_key) LIKE 'keys.%' ORDER BY offer_key COLLATE "C";

-- Clean up.
DELETE FROM incentives.enrollments WHERE offer_key ILIKE 'keys.%';
DELETE FROM incentives.offers WHERE offer_key ILIKE 'keys.%';
\set VERBOSITY terse
