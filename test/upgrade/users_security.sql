-- test/upgrade/users_security.sql: a DBA's privileges and row-level
-- security around the incentives extension, as users_create.sql sets them
-- up; valid on every version (what a version lacks is skipped).  Run as a
-- superuser; again after an update (test/upgrade/users.sh), as the DBA
-- runs step 2 of docs/security.md, for what the update added.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;

-- bi_analysts (bi_owner, who owns the user's objects, and bi_reader) and
-- bi_limited may read everything of the extension (a calculation reads
-- the transactions as the role that calls it, through a view too); the
-- calculation is not PUBLIC's (an update must keep that).
GRANT USAGE ON SCHEMA incentives TO bi_analysts, bi_limited;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO bi_analysts, bi_limited;
GRANT EXECUTE ON ALL ROUTINES IN SCHEMA incentives TO bi_analysts, bi_limited;
SELECT format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', p.oid::regprocedure)
  FROM pg_proc p
 WHERE p.pronamespace = 'incentives'::regnamespace AND p.proname = 'incentive_calculate'
\gexec
SELECT g FROM unnest(ARRAY['GRANT USAGE ON SCHEMA incentives_internal TO bi_analysts, bi_limited',
                           'GRANT EXECUTE ON ALL ROUTINES IN SCHEMA incentives_internal TO bi_analysts, bi_limited']) AS g
 WHERE to_regnamespace('incentives_internal') IS NOT NULL
\gexec

-- Row-level security on the transactions: bi_analysts see every
-- participant, bi_limited one.
ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS bi_all ON incentives.transactions;
CREATE POLICY bi_all ON incentives.transactions TO bi_analysts USING (true);
DROP POLICY IF EXISTS bi_limited_rows ON incentives.transactions;
CREATE POLICY bi_limited_rows ON incentives.transactions FOR SELECT TO bi_limited
    USING (participant_key = 'retailer_0001');
RESET client_min_messages;
