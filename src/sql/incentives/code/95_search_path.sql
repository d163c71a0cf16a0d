
------------------------------------------------------------------------
-- search_path, set once: every SQL and PL/pgSQL function (not procedure)
-- of the extension, in both schemas, runs with search_path = pg_catalog,
-- pg_temp, set here rather than by a SET clause on each CREATE FUNCTION.
-- Procedures keep none (PostgreSQL refuses COMMIT in a procedure with a
-- SET clause; refresh_earnings and settle commit), and C functions keep
-- what their CREATE FUNCTION says.  test/pgtap/00_surface.sql checks the
-- rule from the catalog.  This part comes last: it sees every function.
------------------------------------------------------------------------

DO $search_path$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid
               FROM pg_catalog.pg_depend d
               JOIN pg_catalog.pg_proc p ON p.oid = d.objid
               JOIN pg_catalog.pg_language l ON l.oid = p.prolang
              WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
                AND d.refobjid = (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = '@extension@')
                AND d.deptype = 'e'
                AND p.prokind = 'f'
                AND l.lanname IN ('sql', 'plpgsql')
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$search_path$;
