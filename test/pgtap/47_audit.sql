-- 47_audit: what a role may not see it neither reads nor blocks
-- (docs/security.md).  With the model of docs/security.md applied
-- (test/ops/security_model.sql):
--   * internal functions that read as the owner are not executable by
--     readers (incentives_internal.participant_units() would give every
--     member and group key), and an admin still refreshes;
--   * the partitions of incentives.earnings carry no privilege but their
--     owner's, even where default privileges grant SELECT on new tables
--     to the readers: they are read only through incentives.earnings and
--     its row-level security;
--   * no job takes an advisory lock on a key any role could take first
--     (docs/operations.md, Concurrency);
--   * every entry point runs the same under a hostile search_path (a
--     writable schema before pg_catalog whose domains and operators call a
--     trap function): no call of the trap; every routine but the three
--     procedures that commit pins search_path;
--   * the log of removed settled offers shows a restricted role only its
--     own removals (their totals sum over participants it may not see);
--   * a reader's own relation passed as transactions => learns no group
--     of a participant it may not see in incentives.transactions.
-- Run by pg_prove as a superuser; everything is rolled back.
\ir ../sql/pgtap_begin.psql
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties, incentives.earnings, incentives.calculation_runs,
         incentives.enrollments, incentives.participant_groups;

SELECT * FROM no_plan();

INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('audit.std', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 3, "measure": "percent"}]'));
INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('s1', 'gal');
INSERT INTO incentives.transactions VALUES
  ('A-1', 'retailer_001', 'buy', '2026-02-01', 's1', 10, 'gal', 1000.00),
  ('B-1', 'retailer_002', 'buy', '2026-03-01', 's1', 12, 'gal', 1200.00),
  ('C-1', 'retailer_003', 'buy', '2026-03-05', 's1', 50, 'gal', 5000.00),
  ('D-1', 'retailer_004', 'buy', '2026-05-10', 's1', 40, 'gal', 4000.00);
-- a four-member chain, of which analyst_alice sees two members
INSERT INTO incentives.participant_groups (participant_key, group_key, start_date) VALUES
  ('retailer_001', 'chain_1', '2026-01-01'), ('retailer_002', 'chain_1', '2026-01-01'),
  ('retailer_003', 'chain_1', '2026-01-01'), ('retailer_004', 'chain_1', '2026-01-01');

\ir ../ops/security_model.sql
INSERT INTO incentives_acl.participant_access (role_name, participant_key) VALUES
  ('analyst_alice', 'retailer_004');
CREATE ROLE audit_nobody NOLOGIN;

-- ===================================================================
-- A hostile search_path
-- ===================================================================
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
CREATE FUNCTION evil.trap(anyelement) RETURNS boolean LANGUAGE plpgsql
SET search_path = pg_catalog AS $$
BEGIN
  PERFORM set_config('evil.calls',
    (COALESCE(NULLIF(current_setting('evil.calls', true), ''), '0')::int4 + 1)::text, false);
  RETURN true;
END
$$;
CREATE DOMAIN evil.text AS pg_catalog.text CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.numeric AS pg_catalog.numeric CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.date AS pg_catalog.date CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.bigint AS pg_catalog.int8 CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.integer AS pg_catalog.int4 CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.int4 AS pg_catalog.int4 CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.int8 AS pg_catalog.int8 CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.boolean AS pg_catalog.bool CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.jsonb AS pg_catalog.jsonb CHECK (evil.trap(VALUE));
CREATE DOMAIN evil.timestamptz AS pg_catalog.timestamptz CHECK (evil.trap(VALUE));
CREATE FUNCTION evil.text_eq(pg_catalog.text, pg_catalog.text) RETURNS boolean LANGUAGE sql AS
  'SELECT evil.trap($1) AND pg_catalog.texteq($1, $2)';
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.text, RIGHTARG = pg_catalog.text, FUNCTION = evil.text_eq);
CREATE FUNCTION evil.int_eq(pg_catalog.int4, pg_catalog.int4) RETURNS boolean LANGUAGE sql AS
  'SELECT evil.trap($1) AND pg_catalog.int4eq($1, $2)';
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4, FUNCTION = evil.int_eq);
CREATE FUNCTION evil.numeric_add(pg_catalog.numeric, pg_catalog.numeric) RETURNS pg_catalog.numeric LANGUAGE sql AS
  'SELECT CASE WHEN evil.trap($1) THEN pg_catalog.numeric_add($1, $2) END';
CREATE OPERATOR evil.+ (LEFTARG = pg_catalog.numeric, RIGHTARG = pg_catalog.numeric, FUNCTION = evil.numeric_add);

-- audit.std carries a field no object defines, stored under 'warning':
-- a write of it, and offer_error(), read its stored version (a field it
-- already has is kept), through a query of the C validation
SET client_min_messages = error;
SET incentives.unknown_offer_fields = 'warning';
UPDATE incentives.offers SET document = document || '{"legacy_note": "kept"}' WHERE offer_key = 'audit.std';
RESET incentives.unknown_offer_fields;
RESET client_min_messages;

-- every entry point, each under the hostile path, first in the session
-- (PL/pgSQL keeps what a body resolved for the session); the trap must
-- never run
CREATE FUNCTION pg_temp.trapped(r text, sql text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_catalog.set_config('evil.calls', '0', false);
  PERFORM pg_catalog.set_config('role', r, true);
  PERFORM pg_catalog.set_config('search_path', 'evil, pg_catalog, public', true);
  BEGIN
    EXECUTE sql;
  EXCEPTION WHEN OTHERS THEN
    -- a failure (the trap's own effects are undone with it) counts as -1
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, public', true);
    PERFORM pg_catalog.set_config('role', 'none', true);
    RAISE WARNING 'under a hostile search_path: %: %', sql, SQLERRM;
    RETURN -1;
  END;
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, public', true);
  PERFORM pg_catalog.set_config('role', 'none', true);
  RETURN pg_catalog.current_setting('evil.calls')::pg_catalog.int4;
END
$$;
SET client_min_messages = warning;
SELECT is(pg_temp.trapped('postgres', q), 0, 'no trap under a hostile search_path: ' || q)
  FROM (VALUES ('SELECT pg_catalog.count(*) FROM incentives.incentive_calculate()'),
               ('SELECT pg_catalog.count(*) FROM incentives.incentive_calculate(participant_key => ''retailer_001'')'),
               ('CALL incentives.refresh_earnings()'),
               ('CALL incentives.refresh_earnings(participant_key => ''retailer_001'')'),
               ('CALL incentives.refresh_earnings(changed_only => true)'),
               ('CALL incentives.settle(''2026-06-30'')'),
               ('CALL incentives.accrue(''2026-06-30'')'),
               ('SELECT pg_catalog.count(*) FROM incentives.incentive_diagnostics()'),
               ('SELECT pg_catalog.count(*) FROM incentives.tier_progress()'),
               ('SELECT pg_catalog.count(*) FROM incentives.stack_progress()'),
               ('SELECT pg_catalog.count(*) FROM incentives.incentive_explain(''retailer_001'', ''audit.std'')'),
               ('SELECT pg_catalog.count(*) FROM incentives.forecast(''2026-06-30'')'),
               ('SELECT pg_catalog.count(*) FROM incentives.offer_warnings()'),
               ('SELECT pg_catalog.count(*) FROM incentives.program_skus()'),
               ('SELECT pg_catalog.count(*) FROM incentives.transaction_warnings()'),
               ('UPDATE incentives.offers SET document = document WHERE offer_key OPERATOR(pg_catalog.=) ''audit.std'''),
               ('SELECT incentives.offer_error(o.document) FROM incentives.offers AS o'),
               ('SELECT pg_catalog.count(*) FROM incentives.offer_warnings'),
               ('SELECT pg_catalog.count(*) FROM incentives.programs'),
               ('SELECT pg_catalog.count(*) FROM incentives.program_rates'),
               ('INSERT INTO incentives.participant_groups VALUES (''retailer_009'', ''chain_9'', ''2026-01-01'', NULL)')) AS e(q);
-- and as an admin who is not the table's owner
SELECT is(pg_temp.trapped('manager_carol', q), 0, 'no trap for an admin under a hostile search_path: ' || q)
  FROM (VALUES ('UPDATE incentives.offers SET document = document WHERE offer_key OPERATOR(pg_catalog.=) ''audit.std'''),
               ('SELECT incentives.offer_error(o.document) FROM incentives.offers AS o'),
               ('INSERT INTO incentives.skus (sku_key, uom_key) VALUES (''s9'', ''gal'')')) AS e(q);
-- and as a reader of two members of the chain (the group read as owner)
SELECT is(pg_temp.trapped('analyst_alice', q), 0, 'no trap for a reader under a hostile search_path: ' || q)
  FROM (VALUES ('SELECT pg_catalog.count(*) FROM incentives.incentive_calculate()'),
               ('SELECT pg_catalog.count(*) FROM incentives.tier_progress()'),
               ('SELECT pg_catalog.count(*) FROM incentives.forecast(''2026-06-30'')')) AS e(q);
RESET client_min_messages;

-- ===================================================================
-- Internal functions that read as the owner
-- ===================================================================
SELECT throws_ok($$SELECT pg_temp.exec_as('analyst_alice',
                    'SELECT count(*) FROM incentives_internal.participant_units()')$$,
                 '42501', NULL,
                 'a reader cannot list every member and group key through participant_units()');
SELECT throws_ok($$SELECT pg_temp.exec_as('audit_nobody',
                    'SELECT count(*) FROM incentives_internal.participant_units()')$$,
                 '42501', NULL,
                 'nor can a role without grants');
SELECT ok(NOT has_function_privilege('incentives_reader', 'incentives_internal.participant_units()', 'EXECUTE'),
          'incentives_reader may not execute participant_units()');
SELECT ok(has_function_privilege('incentives_admin', 'incentives_internal.participant_units()', 'EXECUTE'),
          'incentives_admin may (step 2), so it refreshes');
SELECT throws_ok($$SELECT pg_temp.exec_as('analyst_alice',
                    'SELECT count(*) FROM incentives_internal.placement_units()')$$,
                 '42501', NULL,
                 'a reader cannot list every member and group key through placement_units()');
SELECT throws_ok($$SELECT pg_temp.exec_as('audit_nobody',
                    'SELECT count(*) FROM incentives_internal.placement_units()')$$,
                 '42501', NULL,
                 'nor can a role without grants');
SELECT lives_ok($$SELECT pg_temp.exec_as('incentives_admin',
                    'SELECT count(*) FROM incentives_internal.placement_units()')$$,
                'incentives_admin may (step 2), so a coordinator places with it');
-- the internal functions of the program book's checks read nothing as the
-- owner: a reader runs them (offer_warnings suggests through suggested_key
-- and judges periods through periods_outside_book)
SELECT ok(has_function_privilege('incentives_reader', 'incentives_internal.suggested_key(text, text[])', 'EXECUTE'),
          'incentives_reader may execute suggested_key()');
SELECT ok(has_function_privilege('incentives_reader', 'incentives_internal.periods_outside_book(regclass, jsonb, text)', 'EXECUTE'),
          'incentives_reader may execute periods_outside_book()');
-- A role that writes offers but may not read the transactions stores an
-- offer whose period is outside the book's dates: the check it cannot make
-- when the offer is stored is left to offer_warnings, never a refusal.
CREATE ROLE audit_offer_writer NOLOGIN;
GRANT USAGE ON SCHEMA incentives, incentives_internal TO audit_offer_writer;
GRANT SELECT, INSERT, UPDATE ON incentives.offers, incentives.offer_versions TO audit_offer_writer;
GRANT INSERT ON incentives.earnings_changes TO audit_offer_writer;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO audit_offer_writer;
SELECT lives_ok(format($$SELECT pg_temp.exec_as('audit_offer_writer', %L)$$,
                       format('INSERT INTO incentives.offers (document) VALUES (%L)',
                              jsonb_set(pg_temp.standard_offer('audit.year_off', 'percent_of_amount',
                                                               '[{"sku_key": "s1", "rate": 3, "measure": "percent"}]'),
                                        '{periods,0}', '{"key": "p", "start_date": "2024-01-01", "end_date": "2024-12-31"}'))),
                'a writer who may not read the transactions stores an offer outside the book''s dates');
SELECT is((SELECT count(*)::int FROM incentives.offer_warnings
            WHERE offer_key = 'audit.year_off' AND code = 'period_outside_book'), 1,
          'and offer_warnings lists its period (period_outside_book)');
DELETE FROM incentives.offers WHERE offer_key = 'audit.year_off';
SELECT lives_ok($$SELECT pg_temp.exec_as('manager_carol', 'CALL incentives.refresh_earnings()')$$,
                'an admin refreshes every participant');
SELECT lives_ok($$SELECT pg_temp.exec_as('manager_carol',
                    'CALL incentives.refresh_earnings(participant_key => ''retailer_001'')')$$,
                'and one participant of a group');
SELECT is((SELECT count(DISTINCT participant_key)::int FROM incentives.earnings), 4,
          'the admin''s refresh wrote the earnings of every member');
SELECT lives_ok($$SELECT pg_temp.exec_as('analyst_alice',
                    'SELECT * FROM incentives.incentive_calculate()')$$,
                'a reader still calculates (its functions need no internal function it lost)');
SELECT lives_ok($$SELECT pg_temp.exec_as('analyst_alice',
                    'SELECT * FROM incentives.offer_warnings')$$,
                'and reads the program book''s views');

-- ===================================================================
-- Refresh partitions, whatever the default privileges
-- ===================================================================
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO incentives_reader;
ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO PUBLIC;
SET client_min_messages = warning;
CALL incentives.refresh_earnings();
RESET client_min_messages;
SELECT is((SELECT count(*)::int FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'incentives.earnings'::regclass AND c.relname ~ '^earnings_run_'), 1,
          'the owner''s full refresh swapped in a new partition');
SELECT is((SELECT array_agg(i.inhrelid::regclass::text ORDER BY 1)
             FROM pg_inherits AS i
            WHERE i.inhparent = 'incentives.earnings'::regclass
              AND (has_table_privilege('incentives_reader', i.inhrelid, 'SELECT')
                   OR has_table_privilege('audit_nobody', i.inhrelid, 'SELECT'))),
          NULL,
          'no partition of incentives.earnings is readable by a reader or by PUBLIC');
SELECT is((SELECT count(*)::int FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid,
                  LATERAL aclexplode(c.relacl) AS a
            WHERE i.inhparent = 'incentives.earnings'::regclass AND a.grantee <> c.relowner), 0,
          'a partition carries no privilege but its owner''s');
CREATE FUNCTION pg_temp.partition_rows_as(r text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  p regclass;
  n bigint;
  total bigint := 0;
BEGIN
  FOR p IN SELECT i.inhrelid::regclass FROM pg_inherits AS i
            WHERE i.inhparent = 'incentives.earnings'::regclass LOOP
    PERFORM set_config('role', r, true);
    BEGIN
      EXECUTE format('SELECT count(*) FROM %s', p) INTO n;
      total := total + n;
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END;
    PERFORM set_config('role', 'none', true);
  END LOOP;
  RETURN total;
END
$$;
SELECT is(pg_temp.partition_rows_as('analyst_alice'), 0::bigint,
          'a reader reads no row of any partition directly');
-- what the reader sees through incentives.earnings stays filtered
SET ROLE analyst_alice;
SELECT is((SELECT array_agg(DISTINCT participant_key ORDER BY participant_key) FROM incentives.earnings),
          ARRAY['retailer_001', 'retailer_002', 'retailer_004'],
          'through incentives.earnings a reader sees its own participants only');
RESET ROLE;
-- a partition in leaves (a refresh with jobs, or of many rows), and each leaf
SELECT is(incentives_internal.refresh_earnings_new_partition(999999, 3)::text,
          'incentives_internal.earnings_run_999999', 'a run''s partition in three leaves');
SELECT is((SELECT count(*)::int FROM pg_partition_tree('incentives_internal.earnings_run_999999') AS t
            WHERE t.isleaf), 3, 'it has its three leaves');
SELECT is((SELECT count(*)::int FROM pg_partition_tree('incentives_internal.earnings_run_999999') AS t
                  JOIN pg_class AS c ON c.oid = t.relid,
                  LATERAL aclexplode(c.relacl) AS a
            WHERE a.grantee <> c.relowner), 0,
          'neither it nor a leaf carries a privilege but its owner''s');
SELECT is((SELECT count(*)::int FROM pg_partition_tree('incentives_internal.earnings_run_999999') AS t
            WHERE has_table_privilege('incentives_reader', t.relid, 'SELECT')
               OR has_table_privilege('audit_nobody', t.relid, 'SELECT')), 0,
          'a reader or PUBLIC reads neither it nor a leaf');
DROP TABLE incentives_internal.earnings_run_999999;
ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM incentives_reader;
ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM PUBLIC;

-- ===================================================================
-- Locks a role without grants could take
-- ===================================================================
-- The jobs' locks are table and row locks a reader cannot take
SELECT throws_ok(format($$SELECT pg_temp.exec_as(%L, %L)$$, r, q), '42501', NULL,
                 r || ' cannot take the lock of a job: ' || q)
  FROM (VALUES ('analyst_alice'), ('audit_nobody')) AS w(r),
       (VALUES ('LOCK TABLE ONLY incentives.earnings IN ROW SHARE MODE'),
               ('LOCK TABLE ONLY incentives.earnings IN EXCLUSIVE MODE'),
               ('LOCK TABLE incentives.statements IN SHARE ROW EXCLUSIVE MODE'),
               ('LOCK TABLE incentives.accruals IN SHARE ROW EXCLUSIVE MODE'),
               ('SELECT FROM incentives.refresh_locks FOR UPDATE'),
               ('DELETE FROM incentives.refresh_locks')) AS l(q);
-- A session-level advisory lock on a predictable key, taken first by any
-- role (no privilege is needed), would hang the job: no routine of the
-- extension locks such keys for refresh_earnings, settle or accrue.
SELECT is((SELECT array_agg(p.oid::regprocedure::text ORDER BY 1)
             FROM pg_proc AS p
            WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
              AND p.prosrc ~ 'pg_advisory(_xact)?_lock(_shared)?\s*\(\s*(pg_catalog\.)?hashtext\(''incentives\.(earnings|statements|accruals|calculation_runs)'''),
          NULL,
          'no job takes an advisory lock on a key any role could hold');

-- Every routine pins search_path (docs/security.md, Principles), but the
-- procedures that commit, which qualify every name of their bodies instead.
SELECT is((SELECT array_agg(p.oid::regprocedure::text ORDER BY 1)
             FROM pg_proc AS p
            WHERE p.pronamespace IN ('incentives'::regnamespace, 'incentives_internal'::regnamespace)
              AND p.oid NOT IN ('incentives.refresh_earnings(text,regclass,integer,text,boolean,integer)'::regprocedure,
                                'incentives.settle(date,text,regclass,numeric,text[])'::regprocedure,
                                'incentives.accrue(date,regclass)'::regprocedure)
              AND NOT COALESCE(p.proconfig @> ARRAY['search_path=pg_catalog, pg_temp'], false)),
          NULL,
          'every routine but the procedures that commit pins search_path = pg_catalog, pg_temp');

-- ===================================================================
-- The log of removed settled offers
-- ===================================================================
-- A settled offer removed on purpose by the owner: its row carries the
-- settled total over every participant (retailer_003's money among it,
-- which analyst_alice may not see).
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('audit.removed', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 1, "measure": "percent"}]'));
SET client_min_messages = warning;
CALL incentives.settle('2026-06-30');
SELECT incentives.remove_settled_offer('audit.removed', 'audit: a program withdrawn');
RESET client_min_messages;
SELECT is((SELECT settled_total FROM incentives.offer_removals WHERE offer_key = 'audit.removed'), 112.00,
          'the owner reads the removal with its settled total over every participant');
SET ROLE analyst_alice;
SELECT is((SELECT count(*)::int FROM incentives.offer_removals), 0,
          'a reader reads no removal of another role (its total sums over participants it may not see)');
RESET ROLE;
SET ROLE manager_carol;
SELECT is((SELECT count(*)::int FROM incentives.offer_removals), 1,
          'an admin reads every removal (step 4''s admin_all_removals)');
RESET ROLE;
-- A restricted role that may write: it removes an offer and reads its own
-- removal, with the total over the participants it sees, and no other.
CREATE ROLE audit_regional LOGIN IN ROLE incentives_reader;
GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA incentives TO audit_regional;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO audit_regional;
INSERT INTO incentives_acl.participant_access VALUES ('audit_regional', 'retailer_004');
INSERT INTO incentives.offers (document) VALUES
(pg_temp.standard_offer('audit.removed_2', 'percent_of_amount',
   '[{"sku_key": "s1", "rate": 2, "measure": "percent"}]'));
SET client_min_messages = warning;
CALL incentives.settle('2026-07-31');
RESET client_min_messages;
SELECT lives_ok($$SELECT pg_temp.exec_as('audit_regional',
                    'SELECT incentives.remove_settled_offer(''audit.removed_2'', ''audit: regional withdrawal'')')$$,
                'a restricted role that may write removes a settled offer on purpose');
-- the end-of-transaction check, now, as that role: it finds the removal
SELECT lives_ok($$SELECT pg_temp.exec_as('audit_regional', 'SET CONSTRAINTS ALL IMMEDIATE')$$,
                'its removal passes the end-of-transaction check, which reads its own removal');
SET ROLE audit_regional;
SELECT is((SELECT array_agg(offer_key || ' ' || settled_total ORDER BY offer_key) FROM incentives.offer_removals),
          ARRAY['audit.removed_2 80.00'],
          'and reads its own removal only, totalled over the participant it sees');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM incentives.offers WHERE offer_key = 'audit.removed_2'), 0,
          'and the offer is gone');

-- ===================================================================
-- A reader's own relation learns no group it may not see
-- ===================================================================
-- coop_south has members analyst_alice sees none of; chain_1 has
-- retailer_004, which she sees, and retailer_003, which she does not.
INSERT INTO incentives.participant_groups (participant_key, group_key, start_date) VALUES
  ('retailer_201', 'coop_south', '2026-01-01'), ('retailer_202', 'coop_south', '2026-01-01');
INSERT INTO incentives.offers (document) VALUES
(pg_temp.offer('audit.group', 'stepped', 'percent_of_amount', '{
   "aggregation": "group",
   "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1"], "transaction_type": "buy"}],
                 "threshold_definition": {"type": "aggregated_amount",
                                          "filters": [{"period_key": "p", "sku_keys": ["s1"], "transaction_type": "buy"}]},
                 "rates": [{"threshold": 0, "value": 1, "measure": "percent"}]}}'));
SELECT lives_ok($$SELECT pg_temp.exec_as('analyst_alice',
  'CREATE TEMP TABLE alice_lines AS SELECT * FROM incentives.transactions WITH NO DATA;
   INSERT INTO alice_lines VALUES
     (''X-1'', ''retailer_003'', ''buy'', ''2026-02-01'', ''s1'', 1, ''gal'', 100.00),
     (''X-2'', ''retailer_201'', ''buy'', ''2026-02-01'', ''s1'', 1, ''gal'', 100.00),
     (''X-3'', ''retailer_004'', ''buy'', ''2026-02-01'', ''s1'', 1, ''gal'', 100.00)')$$,
  'a reader writes invented rows into a relation of its own');
SET ROLE analyst_alice;
SELECT is((SELECT array_agg(participant_key || ' ' || COALESCE(group_key, '-') ORDER BY participant_key)
             FROM incentives.incentive_calculate(offer_keys => ARRAY['audit.group'],
                                                 transactions => 'pg_temp.alice_lines')),
          ARRAY['retailer_003 -', 'retailer_004 chain_1', 'retailer_201 -'],
          'its own relation gives group keys only for members it sees in incentives.transactions');
SELECT is((SELECT array_agg(participant_key || ' ' || COALESCE(group_key, '-') ORDER BY participant_key)
             FROM incentives.incentive_diagnostics(offer_keys => ARRAY['audit.group'],
                                                   transactions => 'pg_temp.alice_lines')),
          ARRAY['retailer_003 -', 'retailer_004 chain_1', 'retailer_201 -'],
          'and so do its diagnostics');
SELECT is((SELECT array_agg(participant_key || ' ' || COALESCE(group_key, '-') ORDER BY participant_key)
             FROM incentives.incentive_calculate(offer_keys => ARRAY['audit.group'])),
          ARRAY['retailer_001 chain_1', 'retailer_002 chain_1', 'retailer_004 chain_1'],
          'while incentives.transactions still gives its members their group''s figures');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
