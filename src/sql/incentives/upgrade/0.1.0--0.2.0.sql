-- incentives 0.1.0 -> 0.2.0: the changes to schemas, tables and types.
-- The upgrade script is src/sql/drop_code.sql (0.1.0's functions, views
-- and triggers go), this file, then the code parts (0.2.0's come).

-- Internals have a schema of their own.
CREATE SCHEMA incentives_internal;
COMMENT ON SCHEMA incentives_internal IS
  'incentives internals: trigger functions, helpers of the procedures and views, and the functions a sharded coordinator calls; not for direct use';

-- incentives.earnings takes its 17 earning columns' comments from the
-- type incentives.earning, as a fresh install's LIKE ... INCLUDING COMMENTS.
DO $upgrade$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT a.attname, pg_catalog.col_description(a.attrelid, a.attnum) AS comment
               FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid OPERATOR(pg_catalog.=) 'incentives.earning'::pg_catalog.regclass
                AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
    LOOP
        EXECUTE pg_catalog.format('COMMENT ON COLUMN incentives.earnings.%I IS %L', c.attname, c.comment);
    END LOOP;
END
$upgrade$;
