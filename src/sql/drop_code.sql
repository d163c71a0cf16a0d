-- drop_code.sql: the first part of every upgrade script (Makefile; the
-- build puts the extension's name in place of @extension@).  It drops the
-- code of the version being left -- triggers, row-level security
-- policies of its tables, views, functions and procedures of the
-- extension -- so that the code parts after the
-- version's own changes create the new version's exactly as a fresh
-- install does.  Tables, types and their data stay.  Privileges granted on
-- the dropped objects go with them: run the GRANT model again after an
-- update (docs/backup-and-upgrade.md).  A user object that depends on
-- one of them (a view over incentive_calculate, say) stops the update
-- with an error naming it: drop it first and create it again after.
DO $drop_code$
DECLARE
    extension_oid oid := (SELECT e.oid FROM pg_catalog.pg_extension AS e
                           WHERE e.extname OPERATOR(pg_catalog.=) '@extension@');
    members oid[];
    o record;
BEGIN
    -- every function and procedure of the extension
    members := ARRAY(SELECT d.objid FROM pg_catalog.pg_depend AS d
                      WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                        AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                        AND d.refobjid OPERATOR(pg_catalog.=) extension_oid
                        AND d.deptype OPERATOR(pg_catalog.=) 'e');
    -- triggers calling them
    FOR o IN SELECT t.tgname, t.tgrelid::pg_catalog.regclass AS relation
               FROM pg_catalog.pg_trigger AS t
              WHERE NOT t.tgisinternal AND t.tgfoid OPERATOR(pg_catalog.=) ANY (members)
    LOOP
        EXECUTE pg_catalog.format('DROP TRIGGER %I ON %s', o.tgname, o.relation);
    END LOOP;
    -- row-level security policies of the extension's tables that use them
    -- (code/85_row_security.sql creates them again)
    FOR o IN SELECT DISTINCT po.polname, po.polrelid::pg_catalog.regclass AS relation
               FROM pg_catalog.pg_policy AS po
               JOIN pg_catalog.pg_depend AS d
                 ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_policy'::pg_catalog.regclass
                AND d.objid OPERATOR(pg_catalog.=) po.oid
               JOIN pg_catalog.pg_depend AS m
                 ON m.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                AND m.objid OPERATOR(pg_catalog.=) po.polrelid
              WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                AND d.refobjid OPERATOR(pg_catalog.=) ANY (members)
                AND m.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND m.refobjid OPERATOR(pg_catalog.=) extension_oid
                AND m.deptype OPERATOR(pg_catalog.=) 'e'
    LOOP
        EXECUTE pg_catalog.format('DROP POLICY %I ON %s', o.polname, o.relation);
    END LOOP;
    -- views (they may use the functions), newest first
    FOR o IN SELECT c.oid::pg_catalog.regclass AS view
               FROM pg_catalog.pg_depend AS d
               JOIN pg_catalog.pg_class AS c ON c.oid OPERATOR(pg_catalog.=) d.objid
              WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
                AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.refobjid OPERATOR(pg_catalog.=) extension_oid
                AND d.deptype OPERATOR(pg_catalog.=) 'e'
                AND c.relkind OPERATOR(pg_catalog.=) 'v'
              ORDER BY c.oid DESC
    LOOP
        EXECUTE pg_catalog.format('DROP VIEW %s', o.view);
    END LOOP;
    -- the functions and procedures
    FOR o IN SELECT p.oid::pg_catalog.regprocedure AS routine,
                    CASE p.prokind WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END AS kind
               FROM pg_catalog.pg_proc AS p
              WHERE p.oid OPERATOR(pg_catalog.=) ANY (members)
              ORDER BY p.oid DESC
    LOOP
        EXECUTE pg_catalog.format('DROP %s %s', o.kind, o.routine);
    END LOOP;
END
$drop_code$;
