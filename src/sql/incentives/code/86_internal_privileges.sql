------------------------------------------------------------------------
-- The partitions of incentives.earnings (docs/security.md, Refresh
-- partitions): incentives_internal.earnings_default and the partition
-- each full refresh by the owner builds
-- (incentives_internal.earnings_run_<run_id>) are read only through
-- incentives.earnings, whose row-level security they do not carry.  So
-- nobody but their owner holds a privilege on them, whatever the default
-- privileges (ALTER DEFAULT PRIVILEGES ... GRANT SELECT ON TABLES) gave
-- at creation: the refresh revokes them from each new partition, and the
-- install and every update from the partitions that exist.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.earnings_partition_revoke(partition pg_catalog.regclass)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_grantee pg_catalog.oid;
BEGIN
    -- no ACL: the default, its owner's privileges alone (left as it is)
    IF (SELECT c.relacl FROM pg_catalog.pg_class AS c
         WHERE c.oid OPERATOR(pg_catalog.=) partition) IS NULL THEN
        RETURN;
    END IF;
    EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM PUBLIC', partition);
    FOR v_grantee IN
        SELECT DISTINCT a.grantee
          FROM pg_catalog.pg_class AS c,
               LATERAL pg_catalog.aclexplode(c.relacl) AS a
         WHERE c.oid OPERATOR(pg_catalog.=) partition
           AND a.grantee OPERATOR(pg_catalog.<>) c.relowner
           AND a.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON TABLE %s FROM %I', partition,
                                  pg_catalog.pg_get_userbyid(v_grantee));
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.earnings_partition_revoke(pg_catalog.regclass) IS
  'Part of incentives.refresh_earnings: revokes every privilege but its owner''s on a partition of incentives.earnings, which is read only through incentives.earnings and its row-level security (docs/security.md)';

DO $partitions$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT t.relid AS rel
               FROM pg_catalog.pg_partition_tree('incentives.earnings'::pg_catalog.regclass) AS t
              WHERE t.level OPERATOR(pg_catalog.>) 0
              ORDER BY 1
    LOOP
        PERFORM incentives_internal.earnings_partition_revoke(p.rel);
    END LOOP;
END
$partitions$;

------------------------------------------------------------------------
-- Internal functions that read as the owner (docs/security.md, Internal
-- functions).  incentives_internal.participant_units() reads
-- incentives.participant_groups as its owner, past the row-level security
-- of the caller: every member and group key.  Only the refresh and a
-- coordinator's placement need it (placement_units() refuses a role that
-- may not execute it), so PUBLIC may not execute it; the roles that may
-- refresh are granted it
-- (docs/security.md, step 2, grants every function of the schema to
-- incentives_admin).  An update grants it to every role that may already
-- run incentives.refresh_earnings, so what refreshed before still does.
------------------------------------------------------------------------
DO $owner_reads$
DECLARE
    f pg_catalog.regprocedure;
    r record;
BEGIN
    FOREACH f IN ARRAY ARRAY['incentives_internal.participant_units()']::pg_catalog.regprocedure[] LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        FOR r IN SELECT DISTINCT pg_catalog.pg_get_userbyid(a.grantee) AS grantee
                   FROM pg_catalog.pg_proc AS p,
                        LATERAL pg_catalog.aclexplode(p.proacl) AS a
                  WHERE p.oid OPERATOR(pg_catalog.=) 'incentives.refresh_earnings'::pg_catalog.regproc
                    AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
                    AND a.grantee OPERATOR(pg_catalog.<>) 0::pg_catalog.oid
                    AND a.grantee OPERATOR(pg_catalog.<>) p.proowner
        LOOP
            EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %I', f, r.grantee);
        END LOOP;
    END LOOP;
END
$owner_reads$;
