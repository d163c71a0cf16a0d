------------------------------------------------------------------------
-- Row-level security by participant (docs/security.md, the authoritative
-- account).
--
-- The DBA decides once, on incentives.transactions, which participants a
-- role may see (row-level security policies of their own).  Everything
-- derived from or kept per participant follows from that: every table of
-- the extension in schema incentives with a participant_key column (except
-- incentives.transactions itself) gets row-level security enabled (not
-- forced: the owner and superusers see everything) and one policy: the
-- run log incentives.calculation_runs the policy run_visible below, every
-- other table the policy participant_visible, created by the loop at the
-- end of this part for whatever tables exist when the extension is
-- installed or updated -- a table added by a later version needs nothing
-- more than its participant_key column.  The views are security_invoker,
-- so they show what their tables show.
--
-- participant_visible: a role sees (and may change) a row when
--   * the row names no participant (participant_key IS NULL: a refresh of
--     every participant in incentives.calculation_runs), or
--   * row-level security is not active on incentives.transactions for the
--     role (it is disabled there, or the role owns the table, is a
--     superuser or has BYPASSRLS): then the role sees every transaction,
--     and every row, or
--   * the role can see at least one transaction of that participant,
--     through the transactions' own policies:
--     incentives.visible_participants().
-- The policy is FOR ALL: what a role may not see it may not insert,
-- update or delete either (docs/security.md, Refreshing).
--
-- run_visible: a run of every participant (participant_key NULL) carries
-- the program's totals (participants, rows, total_incentive, exceptions)
-- and its error may name any participant's transaction.  So where
-- row-level security on incentives.transactions applies to a role, the
-- role sees the runs of its visible participants and its own runs
-- (run_by), and no run of every participant by another role; a DBA lets a
-- role see those too with a policy of its own (docs/security.md, step 4,
-- does so for incentives_admin).
--
-- removal_visible: a row of incentives.offer_removals names no
-- participant, yet its settled_total and participants are a sum over
-- every participant the remover could see (with two participants, one
-- hidden participant's settled money).  So where row-level security on
-- incentives.transactions applies to a role, the role sees only its own
-- removals; a DBA lets a role see the others with a policy of its own
-- (docs/security.md, step 4, does so for incentives_admin).
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.visible_participants()
RETURNS SETOF text
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    -- The distinct participant keys of the transactions the caller can
    -- see (its row-level security applies), walked through the index on
    -- (participant_key COLLATE "C", transaction_id COLLATE "C") one key at
    -- a time: one index probe per visible participant, plus the index
    -- entries the caller may not see stepped over.
    WITH RECURSIVE p(participant_key) AS (
        (SELECT t.participant_key COLLATE "C"
           FROM incentives.transactions AS t
          ORDER BY 1
          LIMIT 1)
        UNION ALL
        SELECT (SELECT t.participant_key COLLATE "C"
                  FROM incentives.transactions AS t
                 WHERE t.participant_key COLLATE "C" > p.participant_key
                 ORDER BY 1
                 LIMIT 1)
          FROM p
         WHERE p.participant_key IS NOT NULL)
    SELECT p.participant_key FROM p WHERE p.participant_key IS NOT NULL
$function$;
COMMENT ON FUNCTION incentives.visible_participants() IS
  'The participants of which the caller can see at least one row of incentives.transactions (through its row-level security); the row-level security policy participant_visible of every participant table uses it (docs/security.md)';

-- Catalog-driven (the one loop that creates objects in these parts): for
-- every table of the extension in schema incentives with a participant_key
-- column but incentives.transactions and incentives.calculation_runs
-- (below), it runs ALTER TABLE ... ENABLE ROW LEVEL SECURITY, and DROP
-- POLICY IF EXISTS, CREATE POLICY and COMMENT ON POLICY of
-- participant_visible (written out in docs/security.md, "The convention
-- for a new table"): an update creates the policy again, as every trigger.
DO $row_security$
DECLARE
    t record;
BEGIN
    FOR t IN SELECT c.oid::pg_catalog.regclass AS rel
               FROM pg_catalog.pg_depend AS d
               JOIN pg_catalog.pg_extension AS x ON x.oid OPERATOR(pg_catalog.=) d.refobjid
               JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) d.objid
               JOIN pg_catalog.pg_attribute AS a ON a.attrelid OPERATOR(pg_catalog.=) c.oid
              WHERE x.extname OPERATOR(pg_catalog.=) 'incentives'
                AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.deptype OPERATOR(pg_catalog.=) 'e'
                AND c.relnamespace OPERATOR(pg_catalog.=) 'incentives'::pg_catalog.regnamespace
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p']::"char"[])
                AND c.oid OPERATOR(pg_catalog.<>) 'incentives.transactions'::pg_catalog.regclass
                AND c.oid OPERATOR(pg_catalog.<>) 'incentives.calculation_runs'::pg_catalog.regclass
                AND a.attname OPERATOR(pg_catalog.=) 'participant_key'
                AND NOT a.attisdropped
              ORDER BY c.relname
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t.rel);
        EXECUTE pg_catalog.format('DROP POLICY IF EXISTS participant_visible ON %s', t.rel);
        EXECUTE pg_catalog.format($policy$
            CREATE POLICY participant_visible ON %s
                USING (participant_key IS NULL
                       OR NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
                       OR participant_key IN (SELECT incentives.visible_participants()))$policy$, t.rel);
        EXECUTE pg_catalog.format($comment$
            COMMENT ON POLICY participant_visible ON %s IS
              'Rows of the participants the role can see in incentives.transactions (and rows naming no participant); docs/security.md'$comment$,
            t.rel);
    END LOOP;
END
$row_security$;

-- The types of groups (docs/security.md, Participant groups): a reader
-- sees the row of a group it sees as a participant or of which it sees a
-- member (a membership row of incentives.participant_groups, under that
-- table's policy), never one none of whose members it sees.
ALTER TABLE incentives.groups ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS group_visible ON incentives.groups;
CREATE POLICY group_visible ON incentives.groups
    USING (NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
           OR group_key IN (SELECT incentives.visible_participants())
           OR EXISTS (SELECT FROM incentives.participant_groups AS m
                       WHERE m.group_key OPERATOR(pg_catalog.=) groups.group_key
                         AND m.participant_key IN (SELECT incentives.visible_participants())));
COMMENT ON POLICY group_visible ON incentives.groups IS
  'Rows of the groups the role can see as a participant in incentives.transactions or of which it can see a member; docs/security.md';

-- The run log.
ALTER TABLE incentives.calculation_runs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS run_visible ON incentives.calculation_runs;
CREATE POLICY run_visible ON incentives.calculation_runs
    USING (NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
           OR participant_key IN (SELECT incentives.visible_participants())
           OR (participant_key IS NULL AND run_by OPERATOR(pg_catalog.=) CURRENT_USER::text));
COMMENT ON POLICY run_visible ON incentives.calculation_runs IS
  'Runs of the participants the role can see in incentives.transactions, and the role''s own runs; a run of every participant by another role only where row-level security on incentives.transactions does not apply to the role (it carries the program''s totals); docs/security.md';

-- The log of offers removed with their settled money.
ALTER TABLE incentives.offer_removals ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS removal_visible ON incentives.offer_removals;
CREATE POLICY removal_visible ON incentives.offer_removals
    USING (NOT pg_catalog.row_security_active('incentives.transactions'::pg_catalog.regclass)
           OR removed_by OPERATOR(pg_catalog.=) CURRENT_USER::text);
COMMENT ON POLICY removal_visible ON incentives.offer_removals IS
  'The role''s own removals; another role''s (their settled totals sum over participants the role may not see) only where row-level security on incentives.transactions does not apply to the role; docs/security.md';
