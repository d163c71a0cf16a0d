-- 30_security: the calculation runs with the caller's rights
-- (docs/operations.md, Security and privileges): no SECURITY DEFINER
-- anywhere, a pinned search_path, the GRANT model of
-- src/sql/incentives/code/90_grants.sql (readers calculate, only admins
-- write offers), row-level security on incentives.transactions giving two
-- roles only their own participants' earnings, hostile functions and
-- operators in public (a search_path hijack) that cannot change results,
-- and relation names and values that cannot inject SQL.  The roles are
-- created here (and vanish with the ROLLBACK).  Run by pg_prove as a
-- superuser; everything is rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;

SELECT plan(40);

-- ===================================================================
-- Data: a standard and a stepped offer, four participants.
-- ===================================================================
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('sec.std', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 3, "measure": "percent"}, {"sku_key": "s2", "rate": 2.5, "measure": "percent"}]')),
(pg_temp.offer('sec.step', 'stepped', 'dollars_per_unit', '{
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1", "s2"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "aggregated_quantity",
                                          "filters": [{"period_key": "p", "sku_keys": ["s1", "s2"], "transaction_type": "buy"}]},
                 "rates": [{"threshold": 10, "value": 0.5, "measure": "dollars"},
                           {"threshold": 40, "value": 1.25, "measure": "dollars"}]}}'));
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s1', 'gal'), ('s2', 'gal');
INSERT INTO incentives.transactions VALUES
  ('A-1', 'r1', 'buy', '2026-02-01', 's1', 10, 'gal', 1000.00),
  ('A-2', 'r1', 'buy', '2026-02-02', 's2', 8, 'qt', 333.33),
  ('A-3', 'r1', 'buy', '2026-02-03', 's1', 35, 'gal', 3500.00),
  ('B-1', 'r2', 'buy', '2026-03-01', 's2', 12, 'gal', 1200.00),
  ('B-2', 'r2', 'buy', '2026-03-02', 's1', -2, 'gal', -200.00),
  ('C-1', 'r3', 'buy', '2026-04-01', 's1', 20, 'gal', 2000.00),
  ('C-2', 'r3', 'buy', '2026-04-02', 's2', 1, 'gal', 0.50),
  ('D-1', 'r4', 'buy', '2026-05-01', 's1', 100, 'gal', 10000.00);

-- What the owner (superuser) calculates, before anything below.
CREATE TEMP TABLE all_rows AS SELECT * FROM incentives.incentive_calculate();

-- ===================================================================
-- Caller's rights: no SECURITY DEFINER, search_path pinned.
-- ===================================================================
SELECT is(
  (SELECT prosecdef FROM pg_proc
    WHERE oid = 'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'::regprocedure),
  false, 'incentive_calculate is not SECURITY DEFINER (it runs with the caller''s rights)');
SELECT is(
  (SELECT proconfig FROM pg_proc
    WHERE oid = 'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)'::regprocedure),
  ARRAY['search_path=pg_catalog, pg_temp'],
  'incentive_calculate pins search_path = pg_catalog, pg_temp');
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text
      FROM pg_proc p
      JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
      JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'incentives'
     WHERE p.prosecdef$$,
  'no routine of the extension is SECURITY DEFINER');
-- SQL and PL/pgSQL routines resolve names at run time: each must pin
-- search_path.  The documented exceptions, the procedures that COMMIT
-- (incentives.refresh_earnings, incentives.settle and incentives.accrue),
-- cannot (COMMIT is refused in a procedure with a SET clause) and qualify
-- every name instead.
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text
      FROM pg_proc p
      JOIN pg_language l ON l.oid = p.prolang
      JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
      JOIN pg_extension x ON x.oid = d.refobjid AND x.extname = 'incentives'
     WHERE l.lanname IN ('sql', 'plpgsql')
       AND p.oid::regprocedure::text NOT LIKE 'incentives.refresh_earnings(%'
       AND p.oid::regprocedure::text NOT LIKE 'incentives.settle(%'
       AND p.oid::regprocedure::text NOT LIKE 'incentives.accrue(%'
       AND NOT coalesce(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)$$,
  'every SQL and PL/pgSQL routine of the extension pins search_path = pg_catalog, pg_temp');
SELECT is_empty(
  $$SELECT c.relname::text
      FROM pg_class c
     WHERE c.relnamespace = 'incentives'::regnamespace AND c.relkind = 'v'
       AND NOT coalesce(c.reloptions @> ARRAY['security_invoker=true'], false)$$,
  'every view of the extension is security_invoker (row-level security applies through it)');

-- ===================================================================
-- The GRANT model (src/sql/incentives/code/90_grants.sql), applied to test roles.
-- ===================================================================
SELECT is(has_schema_privilege('public', 'incentives', 'USAGE'), false,
  'PUBLIC has no USAGE on schema incentives');
SELECT is_empty(
  $$SELECT c.relname::text
      FROM pg_class c, aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
     WHERE c.relnamespace = 'incentives'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p', 'S')
       AND a.grantee = 0$$,
  'PUBLIC has no privilege on any table, view or sequence of the extension');

CREATE ROLE incentives_test_reader NOLOGIN;
CREATE ROLE incentives_test_admin NOLOGIN;
CREATE ROLE incentives_test_alice NOLOGIN IN ROLE incentives_test_reader;
CREATE ROLE incentives_test_bob NOLOGIN IN ROLE incentives_test_reader;
CREATE ROLE incentives_test_dave NOLOGIN IN ROLE incentives_test_reader;
CREATE ROLE incentives_test_carol NOLOGIN IN ROLE incentives_test_admin;
CREATE ROLE incentives_test_nobody NOLOGIN;

-- the DBA's script of src/sql/incentives/code/90_grants.sql, with the test roles
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_test_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO incentives_test_reader;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives TO incentives_test_reader;
GRANT incentives_test_reader TO incentives_test_admin;
GRANT INSERT, UPDATE, DELETE
   ON incentives.offers, incentives.skus, incentives.uom_conversions,
      incentives.participant_properties, incentives.transactions,
      incentives.earnings, incentives.calculation_runs
   TO incentives_test_admin;
GRANT INSERT, UPDATE ON incentives.offer_versions TO incentives_test_admin;
GRANT INSERT ON incentives.statements, incentives.statement_lines,
                incentives.accruals, incentives.accrual_lines,
                incentives.calculation_exceptions TO incentives_test_admin;
GRANT SELECT, INSERT, DELETE ON incentives.earnings_changes TO incentives_test_admin;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_test_admin;
GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA incentives TO incentives_test_admin;

-- row-level security by participant: one policy for all readers
CREATE SCHEMA incentives_test_acl;
CREATE TABLE incentives_test_acl.participant_access (
  role_name name, participant_key text, PRIMARY KEY (role_name, participant_key));
INSERT INTO incentives_test_acl.participant_access VALUES
  ('incentives_test_alice', 'r1'), ('incentives_test_alice', 'r2'), ('incentives_test_bob', 'r3');
GRANT USAGE ON SCHEMA incentives_test_acl TO incentives_test_reader;
GRANT SELECT ON incentives_test_acl.participant_access TO incentives_test_reader;
ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
CREATE POLICY reader_participants ON incentives.transactions
  FOR SELECT TO incentives_test_reader
  USING (participant_key IN (SELECT a.participant_key FROM incentives_test_acl.participant_access a
                              WHERE a.role_name = current_user));

-- calc_as(role, participant): incentive_calculate as that role (as
-- exec_as(role, sql) of test/sql/pgtap_begin.psql runs a statement).
CREATE FUNCTION pg_temp.calc_as(r text, participant text DEFAULT NULL)
RETURNS SETOF incentives.earning LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('role', r, true);
  RETURN QUERY SELECT * FROM incentives.incentive_calculate(participant_key => participant);
  PERFORM set_config('role', 'none', true);
END
$$;

SELECT ok(has_table_privilege('incentives_test_alice', 'incentives.offers', 'SELECT')
          AND has_table_privilege('incentives_test_alice', 'incentives.skus', 'SELECT')
          AND has_table_privilege('incentives_test_alice', 'incentives.uom_conversions', 'SELECT')
          AND has_table_privilege('incentives_test_alice', 'incentives.participant_properties', 'SELECT')
          AND has_function_privilege('incentives_test_alice',
                'incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date)', 'EXECUTE'),
  'a reader may read the reference tables and execute the calculation');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_alice',
      $q$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "sec.by_reader", "strategy_key": "standard",
          "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
          "incentives": [{"period_key": "p", "transaction_type": "buy", "rates": [{"sku_key": "s1", "rate": 50, "measure": "percent"}]}]}')$q$)$$,
  '42501', NULL, 'a reader cannot insert an offer');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_alice',
      $q$UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '50')
          WHERE offer_key = 'sec.std'$q$)$$,
  '42501', NULL, 'a reader cannot update an offer');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_alice', $q$DELETE FROM incentives.offers$q$)$$,
  '42501', NULL, 'a reader cannot delete offers');
SELECT throws_ok(
  format($$SELECT pg_temp.exec_as('incentives_test_alice', %L)$$, stmt),
  '42501', NULL, 'a reader cannot ' || what)
  FROM (VALUES ($q$INSERT INTO incentives.transactions VALUES ('X-1', 'r1', 'buy', '2026-02-01', 's1', 1000, 'gal', 1e6)$q$,
                'insert a transaction'),
               ($q$UPDATE incentives.skus SET uom_key = 'qt'$q$, 'change a SKU''s unit'),
               ($q$INSERT INTO incentives.uom_conversions VALUES ('gal', 'drop', 1e9)$q$, 'add a unit conversion'),
               ($q$INSERT INTO incentives.participant_properties VALUES ('r1', 'x', 1)$q$, 'set a stored property'))
       AS v(stmt, what);
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('incentives_test_carol',
      $q$INSERT INTO incentives.offers (document) VALUES ('{"offer_key": "sec.by_admin", "strategy_key": "standard",
          "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
          "incentives": [{"period_key": "p", "transaction_type": "buy", "rates": [{"sku_key": "s9", "rate": 1, "measure": "percent"}]}]}')$q$)$$,
  'an admin inserts an offer');
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('incentives_test_carol',
      $q$UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '2')
          WHERE offer_key = 'sec.by_admin'$q$)$$,
  'an admin updates an offer');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_carol',
      $q$UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '-2')
          WHERE offer_key = 'sec.by_admin'$q$)$$,
  '22023', NULL, 'an admin''s writes are still validated');
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('incentives_test_carol', $q$DELETE FROM incentives.offers WHERE offer_key = 'sec.by_admin'$q$)$$,
  'an admin deletes an offer');
SELECT throws_ok(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_nobody')$$,
  '42501', 'permission denied for schema incentives',
  'a role without the reader grants cannot calculate');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_nobody', 'SELECT * FROM incentives.offers')$$,
  '42501', NULL, 'a role without the reader grants cannot read the offers');

-- ===================================================================
-- Row-level security: each role gets only its own participants' earnings.
-- ===================================================================
SELECT results_eq(
  $$SELECT count(DISTINCT participant_key) FROM all_rows$$, $$VALUES (4::bigint)$$,
  'the owner (not subject to row-level security) calculates every participant');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_alice')$$,
  $$SELECT * FROM all_rows WHERE participant_key IN ('r1', 'r2')$$,
  'alice gets exactly the earnings of r1 and r2, row for row');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_bob')$$,
  $$SELECT * FROM all_rows WHERE participant_key = 'r3'$$,
  'bob gets exactly the earnings of r3, row for row');
SELECT is_empty(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_alice', 'r3')$$,
  'alice asking for bob''s participant gets nothing');
SELECT is_empty(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_bob', 'r4')$$,
  'bob asking for a participant nobody is granted gets nothing');
SELECT is_empty(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_dave')$$,
  'a reader mapped to no participant gets nothing');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.calc_as('incentives_test_alice', 'r2')$$,
  $$SELECT * FROM all_rows WHERE participant_key = 'r2'$$,
  'alice asking for one of her participants gets its earnings');

-- a what-if over a relation of the caller's own, under the same rights
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('incentives_test_alice',
      $q$CREATE TEMP TABLE alice_whatif AS SELECT * FROM incentives.transactions$q$)$$,
  'alice copies the transactions she may read');
SELECT bag_eq(
  $$SELECT * FROM incentives.incentive_calculate(transactions => 'alice_whatif')$$,
  $$SELECT * FROM all_rows WHERE participant_key IN ('r1', 'r2')$$,
  '... and her copy holds only her participants');

-- a relation the caller may not read stays unreadable through the function
CREATE TABLE incentives_test_acl.secret_txns AS SELECT * FROM incentives.transactions;
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('incentives_test_alice',
      $q$SELECT * FROM incentives.incentive_calculate(transactions => 'incentives_test_acl.secret_txns')$q$)$$,
  '42501', 'permission denied for table secret_txns',
  'a reader cannot calculate over a relation she may not read');

-- ===================================================================
-- A search_path hijack: hostile functions and operators in public, ahead
-- of pg_catalog in the caller's search_path, and hostile temp tables.
-- ===================================================================
CREATE FUNCTION public.hostile_true(text, text) RETURNS boolean
  LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.hostile_true);
CREATE FUNCTION public.hostile_zero(numeric, numeric) RETURNS numeric
  LANGUAGE sql IMMUTABLE AS 'SELECT 0::numeric';
CREATE OPERATOR public.* (LEFTARG = numeric, RIGHTARG = numeric, FUNCTION = public.hostile_zero);
CREATE OPERATOR public./ (LEFTARG = numeric, RIGHTARG = numeric, FUNCTION = public.hostile_zero);
CREATE OPERATOR public.+ (LEFTARG = numeric, RIGHTARG = numeric, FUNCTION = public.hostile_zero);
CREATE FUNCTION public.text(character varying) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$SELECT 'hijacked'::pg_catalog.text$$;
CREATE FUNCTION public.text(integer) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$SELECT 'hijacked'::pg_catalog.text$$;
CREATE FUNCTION public.numeric(integer) RETURNS numeric
  LANGUAGE sql IMMUTABLE AS 'SELECT 1000000::pg_catalog.numeric';
CREATE FUNCTION public.round(numeric, integer) RETURNS numeric
  LANGUAGE sql IMMUTABLE AS 'SELECT 0::pg_catalog.numeric';
CREATE FUNCTION public.jsonb_array_elements(jsonb) RETURNS SETOF jsonb
  LANGUAGE sql IMMUTABLE AS $$SELECT '{}'::pg_catalog.jsonb WHERE false$$;
CREATE FUNCTION public.jsonb_extract_path_text(jsonb, VARIADIC text[]) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$SELECT 'hijacked'::pg_catalog.text$$;
CREATE FUNCTION public.lower(text) RETURNS text
  LANGUAGE sql IMMUTABLE AS $$SELECT 'hijacked'::pg_catalog.text$$;
CREATE TEMP TABLE offers (offer_key text, document jsonb);
CREATE TEMP TABLE uom_conversions (from_uom_key text, to_uom_key text, factor numeric);
INSERT INTO pg_temp.uom_conversions VALUES ('qt', 'gal', 1000);
CREATE TEMP TABLE skus (sku_key text, uom_key text);

-- a view with varchar keys and integer quantities, built before the hijack
CREATE VIEW public.erp_lines AS
SELECT transaction_id::varchar(40) AS transaction_id, participant_key::varchar AS participant_key,
       transaction_type::varchar AS transaction_type, transaction_date, sku_key::varchar AS sku_key,
       quantity::integer AS quantity, uom_key::varchar AS uom_key, amount
  FROM incentives.transactions;
CREATE TEMP TABLE erp_rows AS SELECT * FROM incentives.incentive_calculate(transactions => 'public.erp_lines');

-- (no pgTAP call while the hijack is on: pgTAP's own functions would meet
-- the hostile operators too)
SET LOCAL search_path = public, pg_catalog, incentives;
CREATE TEMP TABLE hostile_probe AS SELECT 'a'::text = 'b'::text AS a_equals_b;
CREATE TEMP TABLE hijacked_rows AS SELECT * FROM incentives.incentive_calculate();
CREATE TEMP TABLE hijacked_r3 AS SELECT * FROM incentives.incentive_calculate(participant_key => 'r3');
CREATE TEMP TABLE hijacked_erp AS SELECT * FROM incentives.incentive_calculate(transactions => 'public.erp_lines');
RESET search_path;

SELECT is((SELECT a_equals_b FROM hostile_probe), true,
  'the hostile = in public does win in the caller''s own queries (the hijack is live)');

SELECT bag_eq(
  $$SELECT * FROM hijacked_rows$$, $$SELECT * FROM all_rows$$,
  'with hostile =, *, /, +, text(), numeric(), round(), jsonb functions in public ahead of pg_catalog and hostile temp tables, the results are unchanged');
SELECT bag_eq(
  $$SELECT * FROM hijacked_r3$$, $$SELECT * FROM all_rows WHERE participant_key = 'r3'$$,
  'the participant filter is not hijacked by a hostile = (r3 only)');
SELECT bag_eq(
  $$SELECT * FROM hijacked_erp$$, $$SELECT * FROM erp_rows$$,
  'a varchar/integer view calculates the same under the hijack (casts are not hijacked)');
SELECT isnt_empty($$SELECT * FROM hijacked_rows$$, '(the hijacked calculation did return rows)');

-- ===================================================================
-- Values are parameters, relation names quoted identifiers.
-- ===================================================================
SELECT is_empty(
  $$SELECT * FROM incentives.incentive_calculate(participant_key => $v$r1' OR 'x' = 'x$v$)$$,
  'a participant_key with quotes is a value, not SQL');
SELECT throws_ok(
  $$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY[$v$x'); DELETE FROM incentives.offers; --$v$])$$,
  '22023', $v$offer "x'); DELETE FROM incentives.offers; --" does not exist$v$,
  'an offer key with quotes is a value, not SQL');
CREATE SCHEMA "Sec ""Schema"";";
CREATE VIEW "Sec ""Schema"";"."tx; DELETE FROM incentives.offers; --" AS
SELECT * FROM incentives.transactions;
SELECT bag_eq(
  $$SELECT * FROM incentives.incentive_calculate(
      transactions => '"Sec ""Schema"";"."tx; DELETE FROM incentives.offers; --"')$$,
  $$SELECT * FROM all_rows$$,
  'a relation whose schema and name hold quotes and SQL is read as a quoted identifier');
SELECT results_eq(
  $$SELECT count(*) FROM incentives.offers$$, $$VALUES (2::bigint)$$,
  'and the offers are all still there');

SELECT * FROM finish();
ROLLBACK;
