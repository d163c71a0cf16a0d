-- 35_participant_rls: row-level security by participant reaches everything
-- derived from the transactions (docs/security.md).  The model of
-- docs/security.md (test/ops/security_model.sql, applied as written) gives
-- analyst_alice retailer_001 and retailer_002, analyst_bob retailer_003,
-- and manager_carol (incentives_admin) every participant and every run,
-- all through the policies on incentives.transactions (and, for the run
-- log, the admins' policy of step 4).  Then, found from the catalog so
-- that nothing can be forgotten:
--   * every table of schema incentives with a participant_key column
--     (but the transactions) has row-level security enabled, not forced,
--     and its policy through incentives.visible_participants():
--     participant_visible, or run_visible on the run log;
--   * every table and view of schemas incentives and incentives_internal
--     shows each role exactly the rows the owner sees once every other
--     participant's rows are gone and, but for carol, every run of all
--     participants by another role: no other participant's row, no
--     all-participant total and no error of a run over everyone; and no
--     value of any row a reader sees names a participant it may not see;
--   * every set-returning function of schema incentives callable without
--     arguments (and incentives.forecast with its date) whose rows have a
--     participant_key shows each role exactly
--     the participants it may see;
-- participant groups: each reader gets its members' rows computed over
-- the whole group, and sees no other member; and the refresh: an admin
-- replaces every row, a restricted role only its own participants' and
-- cannot refresh another's, a reader cannot refresh at all.  Run by pg_prove as a superuser; everything is rolled
-- back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties, incentives.earnings, incentives.calculation_runs,
         incentives.enrollments, incentives.participant_groups;

SELECT * FROM no_plan();

-- ===================================================================
-- Data: a standard, a stepped (by property) and a stacked offer, and one
-- with program rules (enrollment, a requirement); four participants, each
-- with transactions, a stored property and an enrollment window.
-- ===================================================================
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('rls.std', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 3, "measure": "percent"}, {"sku_key": "s2", "rate": 2.5, "measure": "percent"}]')),
(pg_temp.offer('rls.step', 'stepped', 'dollars_per_unit', '{
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1", "s2"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "property", "property": {"key": "plan"}},
                 "rates": [{"threshold": 50, "value": 0.5, "measure": "dollars"},
                           {"threshold": 100, "value": 1.25, "measure": "dollars"}]}}')),
(pg_temp.offer('rls.stack', 'stacked', 'dollars_per_coverage_unit', '{
   "incentive": {"sku_sets": [
       {"key": "a", "period_key": "p", "transaction_type": "buy",
        "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "s1", "rate": 0.5, "from": "gal"}]},
        "rates": [{"sku_key": "s1", "rate": 1, "measure": "dollars"}]},
       {"key": "b", "period_key": "p", "transaction_type": "buy",
        "conversion": {"coverage_unit": "acre", "rates": [{"sku_key": "s2", "rate": 0.25, "from": "gal"}]},
        "rates": [{"sku_key": "s2", "rate": 2, "measure": "dollars"}]}],
     "stacks": [{"sku_set_keys": ["a", "b"]}]}}')),
(pg_temp.standard_offer('rls.rules', 'dollars_per_unit', '[{"sku_key": "s1", "rate": 1, "measure": "dollars"}]')
 || '{"enrollment": "required",
      "requirements": [{"key": "plan", "type": "property", "property": {"key": "plan"}, "minimum": 70}]}');
-- Participant groups (docs/security.md, Participant groups):
-- retailer_001, _002 and _003 are the group coop_rls.  rls.group pays 2% on
-- the group's $5,233.33 of purchases (alice's two members alone buy
-- $2,833.33, bob's one $2,400.00: neither reaches the tier);
-- rls.group_plan picks its tier on coop_rls's own stored plan (150).
INSERT INTO incentives.offers (document) VALUES
(pg_temp.offer('rls.group', 'stepped', 'percent_of_amount', '{
   "aggregation": "group",
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1", "s2"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "aggregated_amount",
                                          "filters": [{"period_key": "p", "sku_keys": ["s1", "s2"], "transaction_type": "buy"}]},
                 "rates": [{"threshold": 5000, "value": 2, "measure": "percent"}]}}')),
(pg_temp.offer('rls.group_plan', 'stepped', 'dollars_per_unit', '{
   "aggregation": "group",
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "property", "property": {"key": "plan"}},
                 "rates": [{"threshold": 140, "value": 3, "measure": "dollars"}]}}'));
INSERT INTO incentives.participant_groups VALUES
  ('retailer_001', 'coop_rls', '2026-01-01', NULL), ('retailer_002', 'coop_rls', '2026-01-01', NULL),
  ('retailer_003', 'coop_rls', '2026-01-01', NULL);
INSERT INTO incentives.participant_properties VALUES ('coop_rls', 'plan', 150);
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s1', 'gal'), ('s2', 'gal');
INSERT INTO incentives.transactions VALUES
  ('A-1', 'retailer_001', 'buy', '2026-02-01', 's1', 10, 'gal', 1000.00),
  ('A-2', 'retailer_001', 'buy', '2026-02-02', 's2', 8, 'qt', 333.33),
  ('B-1', 'retailer_002', 'buy', '2026-03-01', 's2', 12, 'gal', 1200.00),
  ('B-2', 'retailer_002', 'buy', '2026-03-02', 's1', 3, 'gal', 300.00),
  ('C-1', 'retailer_003', 'buy', '2026-04-01', 's1', 20, 'gal', 2000.00),
  ('C-2', 'retailer_003', 'buy', '2026-04-02', 's2', 4, 'gal', 400.00),
  ('D-1', 'retailer_004', 'buy', '2026-05-01', 's1', 100, 'gal', 10000.00),
  ('D-2', 'retailer_004', 'buy', '2026-05-02', 's2', 50, 'gal', 5000.00);
INSERT INTO incentives.participant_properties VALUES
  ('retailer_001', 'plan', 60), ('retailer_002', 'plan', 120),
  ('retailer_003', 'plan', 100), ('retailer_004', 'plan', 75);
INSERT INTO incentives.enrollments VALUES
  ('retailer_001', 'rls.rules', '2026-01-01', NULL), ('retailer_002', 'rls.rules', '2026-01-01', NULL),
  ('retailer_003', 'rls.rules', '2026-01-01', '2026-03-31'), ('retailer_004', 'rls.rules', '2026-05-01', NULL);
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
CALL incentives.refresh_earnings(participant_key => 'retailer_003');
CALL incentives.refresh_earnings(participant_key => 'retailer_001');
-- The lifecycle's participant tables (docs/lifecycle.md): a statement of
-- every participant and two of one participant each, and the exceptions of a refresh that skipped two of
-- them (a unit without conversion), which the change log keeps pending.
CALL incentives.settle('2026-11-30');
CALL incentives.settle('2026-11-30', 'retailer_002');
CALL incentives.settle('2026-11-30', 'retailer_003');
-- Accruals of every participant, twice (docs/lifecycle.md, Accruals).
CALL incentives.accrue('2026-03-31');
CALL incentives.accrue('2026-06-30');
INSERT INTO incentives.transactions VALUES
  ('A-9', 'retailer_001', 'buy', '2026-06-01', 's1', 1, 'drum', 10.00),
  ('B-9', 'retailer_002', 'buy', '2026-06-01', 's1', 1, 'drum', 10.00);
CALL incentives.refresh_earnings(on_error => 'skip');
DELETE FROM incentives.transactions WHERE transaction_id IN ('A-9', 'B-9');
-- A failed run of every participant whose error names one of them (what a
-- CALL outside a transaction block commits before it raises; here, inside
-- the test's transaction, written as the procedure writes it).
INSERT INTO incentives.calculation_runs (participant_key, transactions, status, finished_at, sqlstate, error)
VALUES (NULL, 'incentives.transactions', 'failed', clock_timestamp(), '22023',
        'no unit conversion from "drum" to "gal" for transaction "D-9" (sku "s1")' || chr(10)
        || 'CONTEXT: calculating transaction "D-9" of participant "retailer_004"');
-- A settled offer removed on purpose by the owner: the removal's totals
-- sum over every participant it settled (docs/security.md, Removals of
-- settled offers), written as incentives.remove_settled_offer writes it.
INSERT INTO incentives.offer_removals (offer_key, reason, settled_total, participants,
                                       last_statement_date, document)
VALUES ('rls.withdrawn', 'a program withdrawn', 8100.00, 2, '2026-11-30', '{}');
RESET client_min_messages;

-- ===================================================================
-- The model of docs/security.md, as written there.
-- ===================================================================
\ir ../ops/security_model.sql

-- A restricted role that may refresh: the admin's write privileges, but
-- not incentives_admin's policy (so it sees retailer_001 only).
CREATE ROLE regional_dave LOGIN IN ROLE incentives_reader;
GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA incentives TO regional_dave;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO regional_dave;
INSERT INTO incentives_acl.participant_access VALUES ('regional_dave', 'retailer_001');

-- Who may see whom ('(none)': rows that name no participant).
CREATE TEMP TABLE allowed (role_name text, participant_key text);
INSERT INTO allowed VALUES
  ('analyst_alice', 'retailer_001'), ('analyst_alice', 'retailer_002'), ('analyst_alice', '(none)'),
  ('analyst_bob', 'retailer_003'), ('analyst_bob', '(none)'),
  ('manager_carol', 'retailer_001'), ('manager_carol', 'retailer_002'),
  ('manager_carol', 'retailer_003'), ('manager_carol', 'retailer_004'), ('manager_carol', '(none)');
GRANT SELECT ON allowed TO PUBLIC;
-- Who may see the runs of every participant by other roles (their totals
-- and errors) and the removals of settled offers by other roles (their
-- totals): the admins (step 4's policies admin_all_runs and
-- admin_all_removals).
CREATE TEMP TABLE sees_all_runs (role_name text);
INSERT INTO sees_all_runs VALUES ('manager_carol');

-- participants_as(role, query): the distinct participant keys of a query's
-- rows as that role (NULL: as the owner).
CREATE FUNCTION pg_temp.participants_as(r text, query text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  IF r IS NOT NULL THEN PERFORM set_config('role', r, true); END IF;
  RETURN QUERY EXECUTE format('SELECT DISTINCT coalesce(q.participant_key::text, ''(none)'') FROM (%s) AS q', query);
  PERFORM set_config('role', 'none', true);
END
$$;

-- ===================================================================
-- Every participant table: row-level security enabled (not forced) with
-- the policy participant_visible.
-- ===================================================================
CREATE TEMP TABLE participant_tables AS
SELECT c.oid::regclass::text AS rel, c.relrowsecurity, c.relforcerowsecurity
  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'participant_key' AND NOT a.attisdropped
 WHERE c.relnamespace = 'incentives'::regnamespace AND c.relkind IN ('r', 'p')
   AND c.oid <> 'incentives.transactions'::regclass;
SELECT cmp_ok((SELECT count(*) FROM participant_tables), '>=', 3::bigint,
  'the catalog lists the participant tables (earnings, calculation_runs, participant_properties, ...)');
SELECT ok(t.relrowsecurity AND NOT t.relforcerowsecurity,
          t.rel || ': row-level security enabled, not forced')
  FROM participant_tables t ORDER BY t.rel;
SELECT ok(EXISTS (SELECT FROM pg_policy p
                   WHERE p.polrelid = t.rel::regclass
                     AND p.polname = CASE t.rel WHEN 'incentives.calculation_runs' THEN 'run_visible'
                                                ELSE 'participant_visible' END
                     AND p.polcmd = '*' AND p.polpermissive AND p.polroles = '{0}'
                     AND pg_get_expr(p.polqual, p.polrelid) LIKE '%incentives.visible_participants()%'),
          t.rel || ': policy ' || CASE t.rel WHEN 'incentives.calculation_runs' THEN 'run_visible'
                                             ELSE 'participant_visible' END
                || ' (FOR ALL, through incentives.visible_participants())')
  FROM participant_tables t ORDER BY t.rel;

-- ===================================================================
-- Every table and view, as each role: the rows the owner sees once every
-- other participant's rows are gone (and, but for those who may see them,
-- the runs of every participant by other roles).
-- ===================================================================
-- rows_as(role, relation): the relation's rows, as text, read as the role.
CREATE FUNCTION pg_temp.rows_as(r text, rel regclass)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('role', r, true);
  RETURN QUERY EXECUTE format('SELECT x::text FROM %s AS x', rel);
  PERFORM set_config('role', 'none', true);
END
$$;
-- rows_limited_to(role, relation): the relation's rows as the owner reads
-- them after deleting (in a subtransaction, undone) every row of a
-- participant the role may not see from every participant table, the
-- transactions included, and the runs of every participant by other roles
-- and the removals of settled offers by other roles, unless the role may
-- see them (append-only triggers off meanwhile).
CREATE FUNCTION pg_temp.rows_limited_to(r text, rel regclass)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  t regclass;
  v_rows text[];
BEGIN
  BEGIN
    PERFORM set_config('session_replication_role', 'replica', true);
    FOR t IN SELECT c.oid::regclass
               FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'participant_key' AND NOT a.attisdropped
              WHERE c.relnamespace = 'incentives'::regnamespace AND c.relkind IN ('r', 'p') LOOP
      EXECUTE format('DELETE FROM %s AS d WHERE d.participant_key IS NOT NULL
                         AND d.participant_key NOT IN (SELECT a.participant_key FROM allowed a WHERE a.role_name = %L)', t, r);
    END LOOP;
    IF NOT EXISTS (SELECT FROM sees_all_runs s WHERE s.role_name = r) THEN
      DELETE FROM incentives.calculation_runs AS d WHERE d.participant_key IS NULL AND d.run_by <> r;
      DELETE FROM incentives.offer_removals AS d WHERE d.removed_by <> r;
    END IF;
    EXECUTE format('SELECT array_agg(x::text) FROM %s AS x', rel) INTO v_rows;
    RAISE EXCEPTION 'undone';
  EXCEPTION WHEN raise_exception THEN
    NULL;
  END;
  RETURN QUERY SELECT unnest(v_rows);
END
$$;

CREATE TEMP TABLE relations AS
SELECT c.oid::regclass AS rel,
       CASE c.relkind WHEN 'v' THEN 'view ' WHEN 'm' THEN 'materialized view ' ELSE 'table ' END
         || c.oid::regclass::text AS what
  FROM pg_class c
 WHERE c.relnamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
   AND c.relkind IN ('r', 'p', 'v', 'm');
SELECT cmp_ok((SELECT count(*) FROM relations WHERE what LIKE 'view %'), '>=', 9::bigint,
  'the catalog lists the views (programs, earnings_by_*, participant_statements, ...)');
SELECT cmp_ok((SELECT count(*) FROM relations WHERE what LIKE 'table incentives.%'), '>=', 14::bigint,
  'the catalog lists the tables of schema incentives');
-- A relation without rows of two participants or without a run of
-- everyone proves little: the data above has both.
SELECT cmp_ok((SELECT count(*) FROM incentives.calculation_runs WHERE participant_key IS NULL), '>=', 3::bigint,
  '(the run log holds runs of every participant, one of them failed)');

SELECT CASE WHEN has_table_privilege(r.role_name, x.rel, 'SELECT')
            THEN bag_eq(format('SELECT * FROM pg_temp.rows_as(%L, %L)', r.role_name, x.rel),
                        format('SELECT * FROM pg_temp.rows_limited_to(%L, %L)', r.role_name, x.rel),
                        format('%s shows %s exactly the rows of the participants (and runs) it may see', x.what, r.role_name))
            ELSE pass(format('%s: %s may not read it', x.what, r.role_name)) END
  FROM relations x,
       (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY x.what, r.role_name;

-- The partitions of incentives.earnings (schema incentives_internal) would
-- bypass its policy: no reader may read them.
SELECT ok(NOT has_table_privilege(r.role_name, i.inhrelid, 'SELECT'),
          format('%s may not read the partition %s of incentives.earnings', r.role_name, i.inhrelid::regclass))
  FROM pg_inherits i, (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 WHERE i.inhparent = 'incentives.earnings'::regclass
 ORDER BY i.inhrelid, r.role_name;

-- No value a reader sees anywhere names a participant it may not see (an
-- error text of a run, an exception's message, ...).
SELECT is_empty(
         format($q$SELECT x.what, v.row
                     FROM relations AS x
                    CROSS JOIN LATERAL pg_temp.rows_as(%L, x.rel) AS v(row)
                    WHERE has_table_privilege(%L, x.rel, 'SELECT')
                      AND EXISTS (SELECT FROM (VALUES ('retailer_001'), ('retailer_002'), ('retailer_003'), ('retailer_004')) AS p(k)
                                   WHERE v.row LIKE '%%' || p.k || '%%'
                                     AND p.k NOT IN (SELECT a.participant_key FROM allowed a WHERE a.role_name = %L))$q$,
                r.role_name, r.role_name, r.role_name),
         format('no row %s can read names a participant it may not see', r.role_name))
  FROM (VALUES ('analyst_alice'), ('analyst_bob')) AS r(role_name);
SELECT isnt_empty(
  $$SELECT * FROM pg_temp.rows_as('analyst_bob', 'incentives.calculation_runs')$$,
  'bob, limited to one participant, sees runs: those of retailer_003');
SELECT is_empty(
  $$SELECT * FROM pg_temp.rows_as('analyst_bob', 'incentives.calculation_runs')
    EXCEPT
    SELECT c::text FROM incentives.calculation_runs AS c WHERE c.participant_key = 'retailer_003'$$,
  '... and only those: no run of every participant, so no program total (participants, rows, total_incentive) and no error of one');

-- ===================================================================
-- Every set-returning function with a participant_key in its rows, as
-- each role: exactly the participants it may see.
-- ===================================================================
CREATE TEMP TABLE participant_sources AS
SELECT format('SELECT participant_key FROM %s()', p.oid::regproc) AS query, 'function ' || p.oid::regproc::text || '()' AS what
  FROM pg_proc p
 WHERE p.pronamespace = 'incentives'::regnamespace AND p.prokind = 'f' AND p.proretset
   AND p.pronargs = p.pronargdefaults
   AND (EXISTS (SELECT FROM unnest(p.proargnames, p.proargmodes) AS m(name, mode)
                 WHERE m.name = 'participant_key' AND m.mode IN ('t', 'o'))
        OR EXISTS (SELECT FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
                    WHERE t.oid = p.prorettype AND a.attname = 'participant_key'));
SELECT cmp_ok((SELECT count(*) FROM participant_sources), '>=', 3::bigint,
  'the catalog lists the functions with participant rows');
-- A source without rows of two participants here proves little: say so.
SELECT diag(s.what || ' has rows of fewer than two participants in this test''s data')
  FROM participant_sources s
 WHERE (SELECT count(*) FROM pg_temp.participants_as(NULL, s.query) AS p WHERE p <> '(none)') < 2;

SELECT set_eq(
         format('SELECT * FROM pg_temp.participants_as(%L, %L)', r.role_name, s.query),
         format('SELECT p FROM pg_temp.participants_as(NULL, %L) AS p
                  WHERE p IN (SELECT a.participant_key FROM allowed AS a WHERE a.role_name = %L)',
                s.query, r.role_name),
         format('%s shows %s exactly the participants it may see', s.what, r.role_name))
  FROM participant_sources s,
       (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY s.what, r.role_name;

-- incentives.forecast needs its as_of_date: as each role, exactly its
-- participants too.
SELECT set_eq(
         format('SELECT * FROM pg_temp.participants_as(%L, %L)', r.role_name,
                $q$SELECT participant_key FROM incentives.forecast('2026-06-30')$q$),
         format('SELECT p FROM pg_temp.participants_as(NULL, %L) AS p
                  WHERE p IN (SELECT a.participant_key FROM allowed AS a WHERE a.role_name = %L)',
                $q$SELECT participant_key FROM incentives.forecast('2026-06-30')$q$, r.role_name),
         format('function incentives.forecast(''2026-06-30'') shows %s exactly the participants it may see', r.role_name))
  FROM (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY r.role_name;
SELECT cmp_ok((SELECT count(DISTINCT p) FROM pg_temp.participants_as(NULL,
                 $q$SELECT participant_key FROM incentives.forecast('2026-06-30')$q$) AS p), '>=', 3::bigint,
  '(the forecast has rows of three participants or more)');

SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as('analyst_alice', 'SELECT incentives.visible_participants() AS participant_key')$$,
  $$VALUES ('retailer_001'), ('retailer_002')$$,
  'incentives.visible_participants() lists what the transactions policy shows alice');

-- incentives.groups (docs/security.md, Participant groups): a reader sees
-- the type of a group of which it sees a member, never of one none of
-- whose members it sees.
INSERT INTO incentives.participant_groups VALUES
  ('retailer_003', 'chain_bob', '2025-01-01', '2025-12-31'),
  ('retailer_009', 'chain_hidden', '2026-01-01', NULL);
INSERT INTO incentives.groups VALUES
  ('coop_rls', 'coop', NULL), ('chain_bob', 'chain', NULL), ('chain_hidden', 'chain', 'Hidden chain');
SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as('analyst_alice', 'SELECT group_key AS participant_key FROM incentives.groups')$$,
  $$VALUES ('coop_rls')$$,
  'incentives.groups: alice sees the group of her members only');
SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as('analyst_bob', 'SELECT group_key AS participant_key FROM incentives.groups')$$,
  $$VALUES ('coop_rls'), ('chain_bob')$$,
  'incentives.groups: bob sees the groups his member was ever in, not chain_hidden');
SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as(NULL, 'SELECT group_key AS participant_key FROM incentives.groups')$$,
  $$VALUES ('coop_rls'), ('chain_bob'), ('chain_hidden')$$,
  '(the owner sees every group)');
DELETE FROM incentives.participant_groups WHERE group_key IN ('chain_bob', 'chain_hidden');
TRUNCATE incentives.groups;
SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as('analyst_bob',
      $q$SELECT (e ->> 'participant_key') AS participant_key
           FROM jsonb_array_elements(incentives.calculate('{"participant_key": "retailer_003", "include_stored": true,
                  "transactions": [{"transaction_id": "X-1", "transaction_type": "buy", "transaction_date": "2026-06-01",
                                    "sku_key": "s1", "quantity": 1, "uom_key": "gal", "amount": 100}]}')
                -> 'potential_earnings') AS e$q$)$$,
  $$VALUES ('retailer_003')$$,
  'calculate(jsonb) with include_stored: bob gets his own participant');
SELECT is(
  (SELECT jsonb_array_length(incentives.calculate('{"participant_key": "retailer_003", "include_stored": true}') -> 'potential_earnings')) > 0,
  true, '(the owner''s include_stored calculation for retailer_003 has rows)');
SELECT is_empty(
  $$SELECT * FROM pg_temp.participants_as('analyst_alice',
      $q$SELECT (e ->> 'participant_key') AS participant_key
           FROM jsonb_array_elements(incentives.calculate('{"participant_key": "retailer_003", "include_stored": true}')
                -> 'potential_earnings') AS e$q$)$$,
  'calculate(jsonb) with include_stored: alice gets nothing of bob''s participant');

-- ===================================================================
-- Participant groups under row-level security (docs/security.md,
-- Participant groups): a reader who sees a member gets that member's rows
-- computed over the whole group, and the group's figures, never another
-- member's rows or contribution unless it sees that member too.
-- ===================================================================
-- rows_as(role, query): the query's rows as text, run as that role.
CREATE FUNCTION pg_temp.rows_as(r text, query text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('role', r, true);
  RETURN QUERY EXECUTE format('SELECT q::text FROM (%s) AS q', query);
  PERFORM set_config('role', 'none', true);
END
$$;
SELECT is((SELECT sum(incentive_amount) FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group'])
            WHERE group_key = 'coop_rls'),
          104.67, '(the owner: the group''s $5,233.33 earn 2%, $104.67 in all)');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group', 'rls.group_plan'])$q$)$$,
  $$SELECT e::text FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group', 'rls.group_plan']) AS e
     WHERE e.participant_key IN ('retailer_001', 'retailer_002')$$,
  'alice gets her members'' rows of the group offers, computed over the whole group');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_bob', $q$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group', 'rls.group_plan'])$q$)$$,
  $$SELECT e::text FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group', 'rls.group_plan']) AS e
     WHERE e.participant_key = 'retailer_003'$$,
  'bob gets his member''s rows, computed over the whole group');
SELECT bag_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_bob', $q$SELECT * FROM incentives.incentive_calculate('retailer_003', offer_keys => ARRAY['rls.group'])$q$)$$,
  $$SELECT e::text FROM incentives.incentive_calculate('retailer_003', offer_keys => ARRAY['rls.group']) AS e$$,
  '... and the same calling for it alone');
SELECT is_empty(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT * FROM incentives.incentive_calculate('retailer_003', offer_keys => ARRAY['rls.group'])$q$)$$,
  'alice gets nothing of bob''s member, calling for it by name');
SELECT is_empty(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT * FROM incentives.incentive_diagnostics('retailer_003', offer_keys => ARRAY['rls.group'])$q$)$$,
  '... nor of its diagnostics');
SELECT results_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT participant_key, threshold_value, current_rate_key, group_key
                                                      FROM incentives.tier_progress() WHERE offer_key = 'rls.group' ORDER BY 1$q$)$$,
  $$VALUES ('(retailer_001,5233.33,2_percent_greater_than_or_equal_to_5000,coop_rls)'),
           ('(retailer_002,5233.33,2_percent_greater_than_or_equal_to_5000,coop_rls)')$$,
  'alice''s tier progress shows the group''s value and tier');
-- What a reader of one member learns of the others over time
-- (docs/security.md, Participant groups): the group's value at two dates,
-- less its own members' transactions between them, is the hidden member's
-- combined volume between them (retailer_003 bought $2,400.00 on 1 and 2
-- April), by design; never that member's rows, keys or share.
SELECT results_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT threshold_value
                                                      FROM incentives.tier_progress('retailer_001', through_date => date '2026-03-31')
                                                     WHERE offer_key = 'rls.group'$q$)$$,
  $$VALUES ('(2833.33)')$$,
  'through 31 March, alice''s group value is her two members'' own purchases');
SELECT results_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT threshold_value
                                                      FROM incentives.tier_progress('retailer_001', through_date => date '2026-04-30')
                                                     WHERE offer_key = 'rls.group'$q$)$$,
  $$VALUES ('(5233.33)')$$,
  '... through 30 April it is 2,400.00 more: the hidden member''s combined April volume, as documented');
SELECT is_empty(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT d FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['rls.group'],
                                                                                                   through_date => date '2026-04-30') AS d
                                                     WHERE d::text ~ 'retailer_003|C-1|C-2'$q$)$$,
  '... while no diagnostics of that date name the member or its transactions');
SELECT results_eq(
  $$SELECT * FROM pg_temp.rows_as('analyst_alice', $q$SELECT m ->> 'participant_key'
                                                      FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['rls.group']) AS d,
                                                           jsonb_array_elements(d.diagnostics -> 'aggregation' -> 'members') AS m
                                                     ORDER BY 1$q$)$$,
  $$VALUES ('(retailer_001)'), ('(retailer_002)')$$,
  'the members'' contributions alice sees are her members'' only');
SELECT results_eq(
  $$SELECT m ->> 'participant_key'
      FROM incentives.incentive_diagnostics('retailer_001', offer_keys => ARRAY['rls.group']) AS d,
           jsonb_array_elements(d.diagnostics -> 'aggregation' -> 'members') AS m
     ORDER BY 1$$,
  $$VALUES ('retailer_001'), ('retailer_002'), ('retailer_003')$$,
  '(the owner sees every member''s)');
SELECT is(
  (SELECT count(*) FROM pg_temp.rows_as('analyst_alice', $q$SELECT * FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group_plan'])$q$)),
  2::bigint, 'the group''s stored property picks alice''s tier, though no reader sees the group''s row');

-- ===================================================================
-- Refreshing under row-level security.
-- ===================================================================
SET client_min_messages = warning;
-- Change every participant's transactions, so that each refresh shows.
UPDATE incentives.transactions SET amount = amount * 2, quantity = quantity * 2;
CREATE TEMP TABLE earnings_before AS SELECT * FROM incentives.earnings;
-- incentives.earnings as the calculation's rows: its columns of the type
-- incentives.earning
CREATE TEMP VIEW earning_rows AS
SELECT (jsonb_populate_record(NULL::incentives.earning, to_jsonb(e))).* FROM incentives.earnings AS e;

SELECT throws_ok(
  $$SELECT pg_temp.exec_as('analyst_alice', 'CALL incentives.refresh_earnings()')$$,
  '42501', NULL, 'a reader cannot refresh the earnings');

-- a restricted role with write privileges: its own participants only
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('regional_dave', 'CALL incentives.refresh_earnings()')$$,
  'a restricted role refreshes every participant it can see');
SELECT bag_eq(
  $$SELECT * FROM earning_rows WHERE participant_key = 'retailer_001'$$,
  $$SELECT * FROM incentives.incentive_calculate('retailer_001')$$,
  '... which replaces the earnings of its participant with the new calculation');
SELECT bag_eq(
  $$SELECT * FROM incentives.earnings WHERE participant_key <> 'retailer_001'$$,
  $$SELECT * FROM earnings_before WHERE participant_key <> 'retailer_001'$$,
  '... and leaves every other participant''s earnings as they were');
SELECT throws_ok(
  $$SELECT pg_temp.exec_as('regional_dave', $q$CALL incentives.refresh_earnings(participant_key => 'retailer_003')$q$)$$,
  '42501', NULL, 'a restricted role cannot refresh a participant it cannot see');

-- an admin who sees every transaction: every row whose figures moved
-- replaced, the others left as they were
CREATE TEMP TABLE earnings_before_admin AS SELECT * FROM incentives.earnings;
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('manager_carol', 'CALL incentives.refresh_earnings()')$$,
  'an admin refreshes the earnings');
SELECT bag_eq(
  $$SELECT * FROM earning_rows$$,
  $$SELECT * FROM incentives.incentive_calculate()$$,
  '... and afterwards incentives.earnings equals a full calculation row for row');
SELECT bag_eq(
  $$SELECT e.* FROM incentives.earnings e
      JOIN incentives.calculation_runs r ON r.run_id = e.run_id
     WHERE r.run_by IS DISTINCT FROM 'manager_carol'$$,
  $$SELECT b.* FROM earnings_before_admin b
     WHERE EXISTS (SELECT FROM incentives.earnings e
                    WHERE e.participant_key = b.participant_key AND e.offer_key = b.offer_key
                      AND e.incentive_rate_key = b.incentive_rate_key AND e.transaction_id = b.transaction_id
                      AND e.run_id = b.run_id)$$,
  '... every row of it written by the admin''s run, or as it was before');
SELECT cmp_ok(
  (SELECT count(*) FROM incentives.earnings e
     JOIN incentives.calculation_runs r ON r.run_id = e.run_id
    WHERE r.run_by = 'manager_carol'), '>', 0::bigint,
  '... and the admin''s run wrote the rows whose figures moved');
SELECT lives_ok(
  $$SELECT pg_temp.exec_as('manager_carol', $q$CALL incentives.refresh_earnings(participant_key => 'retailer_004')$q$)$$,
  'an admin refreshes one participant');
SELECT results_eq(
  $$SELECT status, participant_key FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1$$,
  $$VALUES ('succeeded', 'retailer_004')$$,
  '... and its run is logged');

-- Rows the admin wrote are read back through the same policies.
SELECT set_eq(
  $$SELECT * FROM pg_temp.participants_as('analyst_bob', 'SELECT participant_key FROM incentives.earnings')$$,
  $$VALUES ('retailer_003')$$,
  'after the admin''s refresh bob still sees only his participant''s earnings');

-- ===================================================================
-- Checking a program book (docs/security.md): the transactions a
-- restricted role counts in incentives.program_skus and the refused lines
-- of incentives.transaction_warnings are those of its participants.
-- ===================================================================
INSERT INTO incentives.transactions VALUES
  ('A-8', 'retailer_001', 'buy', '2026-06-01', 's1', 1, 'drum', 10.00),
  ('B-8', 'retailer_002', 'buy', '2026-06-01', 's2', 1, 'drum', 10.00),
  ('C-8', 'retailer_003', 'buy', '2026-06-01', 's1', 1, 'drum', 10.00),
  ('D-8', 'retailer_004', 'buy', '2026-06-01', 's2', 1, 'drum', 10.00);
SELECT set_eq(
  $$SELECT transaction_id FROM incentives.transaction_warnings$$,
  $$VALUES ('A-8'), ('B-8'), ('C-8'), ('D-8')$$,
  '(the owner: transaction_warnings lists the four lines in drums)');
SELECT bag_eq(
  format('SELECT * FROM pg_temp.rows_as(%L, %L)', r.role_name, 'SELECT * FROM incentives.transaction_warnings'),
  format('SELECT w::text FROM incentives.transaction_warnings AS w
           WHERE w.participant_key IN (SELECT a.participant_key FROM allowed AS a WHERE a.role_name = %L)',
         r.role_name),
  format('transaction_warnings shows %s the refused lines of its participants only', r.role_name))
  FROM (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY r.role_name;
SELECT set_eq(
  $$SELECT transaction_id FROM pg_temp.rows_as('analyst_bob', 'SELECT transaction_id FROM incentives.transaction_warnings()') AS r(transaction_id)$$,
  $$VALUES ('(C-8)')$$,
  '... bob''s are retailer_003''s');
-- program_skus as each role: the counts of the transactions it sees, as the
-- owner counts them in a relation of those transactions alone.
CREATE TEMP TABLE role_transactions AS
SELECT a.role_name, t.* FROM incentives.transactions AS t JOIN allowed AS a USING (participant_key);
CREATE FUNCTION pg_temp.program_skus_of(r text)
RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  DROP TABLE IF EXISTS pg_temp.these_transactions;
  CREATE TEMP TABLE these_transactions AS
  SELECT t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date, t.sku_key,
         t.quantity, t.uom_key, t.amount
    FROM role_transactions AS t WHERE t.role_name = r;
  RETURN QUERY SELECT s::text FROM incentives.program_skus('pg_temp.these_transactions') AS s;
END
$$;
SELECT bag_eq(
  format('SELECT * FROM pg_temp.rows_as(%L, %L)', r.role_name, 'SELECT * FROM incentives.program_skus'),
  format('SELECT * FROM pg_temp.program_skus_of(%L)', r.role_name),
  format('program_skus counts for %s the transactions of its participants only', r.role_name))
  FROM (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY r.role_name;
SELECT results_eq(
  $$SELECT q FROM pg_temp.rows_as('analyst_bob', $q$SELECT transactions FROM incentives.program_skus WHERE offer_key = 'rls.std' AND sku_key = 's1'$q$) AS q$$,
  $$VALUES ('(2)')$$,
  '... bob counts 2 transactions of s1 in rls.std (retailer_003''s), where the owner counts 6');
SELECT is((SELECT transactions FROM incentives.program_skus WHERE offer_key = 'rls.std' AND sku_key = 's1'),
          6::bigint, '(the owner counts 6)');
DELETE FROM incentives.transactions WHERE transaction_id IN ('A-8', 'B-8', 'C-8', 'D-8');

-- A hidden member's transaction that cannot be calculated (a unit without
-- a conversion): alice's group calculation fails, naming only the group.
CREATE FUNCTION pg_temp.failure_as(r text, sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  m text;
  c text;
BEGIN
  PERFORM pg_temp.exec_as(r, sql);
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, c = PG_EXCEPTION_CONTEXT;
  RETURN m || ' / ' || c;
END
$$;
INSERT INTO incentives.transactions VALUES ('SECRET-1', 'retailer_003', 'buy', '2026-03-01', 's1', 1, 'drum', 100);
SELECT matches(pg_temp.failure_as('analyst_alice',
                 $q$SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group'])$q$),
               '^a transaction of another member of group "coop_rls" cannot be calculated / ',
               'a hidden member''s bad transaction fails alice''s group calculation, naming the group only');
SELECT doesnt_match(pg_temp.failure_as('analyst_alice',
                      $q$SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group'])$q$),
                    'SECRET|retailer_003',
                    '... neither its message nor its context names the transaction or the member');
SELECT matches(pg_temp.failure_as('analyst_bob',
                 $q$SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['rls.group'])$q$),
               'transaction "SECRET-1"',
               'bob, who sees retailer_003, is told which transaction');
DELETE FROM incentives.transactions WHERE transaction_id = 'SECRET-1';

-- ===================================================================
-- Closing a season (docs/lifecycle.md, Settlement statements): the rows
-- each line summed and why a line moved, and what moved in a closed
-- offer, are the reader's participants' only; the closings and
-- reopenings, offer-level, are logs no role changes.
-- ===================================================================
SET client_min_messages = warning;
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('rls.closing', 'percent_of_amount', '[{"sku_key": "s3", "rate": 10, "measure": "percent"}]')
 || '{"periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-09-30"}]}');
INSERT INTO incentives.transactions VALUES
  ('A-C1', 'retailer_001', 'buy', '2026-06-01', 's3', 1, 'gal', 100.00),
  ('B-C1', 'retailer_002', 'buy', '2026-06-01', 's3', 1, 'gal', 200.00),
  ('C-C1', 'retailer_003', 'buy', '2026-06-01', 's3', 1, 'gal', 300.00);
CALL incentives.refresh_earnings();
CALL incentives.settle('2026-11-30', final_offer_keys => ARRAY['rls.closing']);
-- late transactions of the closed offer's season
INSERT INTO incentives.transactions VALUES
  ('A-C2', 'retailer_001', 'buy', '2026-09-15', 's3', 1, 'gal', 50.00),
  ('C-C2', 'retailer_003', 'buy', '2026-09-15', 's3', 1, 'gal', 70.00);
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT set_eq($$SELECT participant_key, change FROM incentives.closed_offer_changes$$,
              $$VALUES ('retailer_001', 5.00::numeric), ('retailer_003', 7.00)$$,
              '(the owner sees what moved in the closed offer for retailer_001 and retailer_003)');
SELECT cmp_ok((SELECT count(DISTINCT participant_key) FROM incentives.statement_kept_rows), '>=', 3::bigint,
              '(the owner sees the kept rows of lines of three participants and more)');
SELECT set_eq(format('SELECT * FROM pg_temp.participants_as(%L, %L)', r.role_name, 'SELECT participant_key FROM ' || x.rel),
              format($q$SELECT a.participant_key FROM allowed a WHERE a.role_name = %L
                        INTERSECT SELECT DISTINCT participant_key FROM %s$q$, r.role_name, x.rel),
              format('%s shows %s its participants'' rows only', x.rel, r.role_name))
  FROM (VALUES ('incentives.statement_kept_rows'), ('incentives.statement_line_rows'),
               ('incentives.statement_line_changes'), ('incentives.closed_offer_changes')) AS x(rel),
       (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY x.rel, r.role_name;
SELECT bag_eq(format('SELECT * FROM pg_temp.rows_as(%L, %L::regclass)', r.role_name, x.rel),
              format('SELECT * FROM pg_temp.rows_limited_to(%L, %L)', r.role_name, x.rel),
              format('%s shows %s exactly the rows the owner sees of its participants', x.rel, r.role_name))
  FROM (VALUES ('incentives.statement_kept_rows'), ('incentives.statement_line_rows'),
               ('incentives.statement_line_changes'), ('incentives.closed_offer_changes'),
               ('incentives.offer_warnings')) AS x(rel),
       (VALUES ('analyst_alice'), ('analyst_bob'), ('manager_carol')) AS r(role_name)
 ORDER BY x.rel, r.role_name;
SELECT is((SELECT array_agg(v ORDER BY v) FROM pg_temp.participants_as('analyst_alice',
             $q$SELECT participant_key FROM incentives.closed_offer_changes$q$) AS v),
          ARRAY['retailer_001'], 'alice sees what moved for retailer_001, not for retailer_003');
SELECT is((SELECT array_agg(v ORDER BY v) FROM pg_temp.participants_as('analyst_bob',
             $q$SELECT participant_key FROM incentives.closed_offer_changes$q$) AS v),
          ARRAY['retailer_003'], 'bob sees what moved for retailer_003 only');
SELECT matches((SELECT r FROM pg_temp.rows_as('analyst_alice',
                  $q$SELECT message FROM incentives.offer_warnings WHERE code = 'closed_offer_changed'$q$) AS r),
               'the earnings of 1 participant differ from their final lines by 5\.00 in total',
               'alice''s closed_offer_changed counts her participant and its change only');
SELECT is((SELECT count(*) FROM pg_temp.rows_as('analyst_alice', 'SELECT * FROM incentives.offer_closings')),
          1::bigint, 'the closings are offer-level: a reader reads every one');
SELECT lives_ok($$SELECT incentives.reopen_offer('rls.closing', 'late September sales')$$, '(reopened)');
SELECT throws_ok(format('%s incentives.%s', c.cmd, t.tbl), '42501', NULL,
                 format('%s of incentives.%s is refused: append-only', c.cmd, t.tbl))
  FROM (VALUES ('statement_kept_rows'), ('offer_closings'), ('offer_reopenings')) AS t(tbl),
       (VALUES ('DELETE FROM'), ('TRUNCATE')) AS c(cmd)
 ORDER BY t.tbl, c.cmd;
SELECT throws_ok(format('UPDATE incentives.%s SET %s', t.tbl, t.sets), '42501', NULL,
                 format('UPDATE of incentives.%s is refused: append-only', t.tbl))
  FROM (VALUES ('statement_kept_rows', 'offer_keys = offer_keys'), ('offer_closings', 'offer_key = offer_key'),
               ('offer_reopenings', 'reason = reason')) AS t(tbl, sets)
 ORDER BY t.tbl;
SELECT throws_ok($$SELECT pg_temp.exec_as('analyst_alice', 'INSERT INTO incentives.offer_reopenings (offer_key, reason, statement_id) VALUES (''rls.closing'', ''x'', 1)')$$,
                 '42501', NULL, 'a reader may not write a reopening');
SELECT throws_ok($$SELECT pg_temp.exec_as('analyst_alice', $q$SELECT incentives.reopen_offer('rls.closing', 'x')$q$)$$,
                 '42501', NULL, 'nor reopen an offer');

SELECT * FROM finish();
ROLLBACK;
