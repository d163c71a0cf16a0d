------------------------------------------------------------------------
-- Privileges: who may calculate, who may edit offers (docs/security.md)
--
-- Every function of the extension runs with the caller's rights (none is
-- SECURITY DEFINER), and the views are security_invoker: what a role may
-- calculate is exactly what it may read, and row-level security on the
-- transactions applies.  The extension creates no roles (role names are
-- the DBA's, cluster-wide, and must not be created by CREATE EXTENSION);
-- it leaves PUBLIC without access to the schema and its tables, so by
-- default only the owner (the superuser who installed it) can use it.
--
-- The model a DBA applies after CREATE EXTENSION and after every ALTER
-- EXTENSION ... UPDATE -- the reader and admin roles, their grants, and
-- row-level security by participant set once on incentives.transactions
-- and followed by every participant table (code/85_row_security.sql) --
-- is written out, statement by statement, in docs/security.md;
-- test/pgtap/30_security.sql and 35_participant_rls.sql apply it.
------------------------------------------------------------------------

-- Explicit secure defaults: nothing for PUBLIC on the schemas (schema
-- incentives: the released base script), tables, views and sequences this
-- script created, even where the installing role
-- has default privileges granting PUBLIC access to new ones.  What existed
-- before the update keeps its privileges, the DBA's grants to PUBLIC
-- included (src/sql/update_begin.sql lists it).  Catalog-driven: for each
-- such schema REVOKE ALL ON SCHEMA ... FROM PUBLIC, for each such relation
-- of schema incentives REVOKE ALL ON TABLE ... FROM PUBLIC.
DO $grants$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT pg_catalog.format('SCHEMA %I', n.nspname) AS object
               FROM pg_catalog.pg_namespace AS n
               JOIN pg_catalog.pg_depend AS d
                 ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                AND d.objid OPERATOR(pg_catalog.=) n.oid
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.deptype OPERATOR(pg_catalog.=) 'e'
              WHERE d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension AS e
                                                        WHERE e.extname OPERATOR(pg_catalog.=) 'incentives')
                AND NOT EXISTS (SELECT FROM pg_temp.update_members AS m
                                 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
                                   AND m.objid OPERATOR(pg_catalog.=) n.oid)
             UNION ALL
             SELECT pg_catalog.format('TABLE %s', c.oid::pg_catalog.regclass)
               FROM pg_catalog.pg_class AS c
              WHERE c.relnamespace OPERATOR(pg_catalog.=) 'incentives'::pg_catalog.regnamespace
                AND c.relkind OPERATOR(pg_catalog.=) ANY (ARRAY['r', 'p', 'v', 'm', 'S']::"char"[])
                AND NOT EXISTS (SELECT FROM pg_temp.update_members AS m
                                 WHERE m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                                   AND m.objid OPERATOR(pg_catalog.=) c.oid)
    LOOP
        EXECUTE pg_catalog.format('REVOKE ALL ON %s FROM PUBLIC', o.object);
    END LOOP;
END
$grants$;
