-- setup: create the extension and show what it installs.  Every later
-- regression test runs in this database and relies on it.
CREATE EXTENSION incentives;

-- The extension's objects (what \dx+ incentives lists), in a stable order.
-- The types that come with another object (a table's or view's row type,
-- an array type) are left out: PostgreSQL 17 records them as members of
-- the extension, 15 does not, and they are not the extension's to list.
SELECT pg_describe_object(d.classid, d.objid, 0) AS object
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'incentives')
   AND d.deptype = 'e'
   AND NOT EXISTS (SELECT 1
                     FROM pg_type t
                     LEFT JOIN pg_class c ON c.oid = t.typrelid
                    WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
                      AND (t.typcategory = 'A' OR c.relkind <> 'c'))
 ORDER BY pg_describe_object(d.classid, d.objid, 0) COLLATE "C";

-- The unit conversions it ships.
SELECT from_uom_key, to_uom_key, factor
  FROM incentives.uom_conversions
 ORDER BY from_uom_key COLLATE "C", to_uom_key COLLATE "C";

-- The columns of the earning row, in order, named and typed as
-- docs/reference.md, Earning rows, says.
SELECT attnum, attname, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute
 WHERE attrelid = 'incentives.earning'::regclass
   AND attnum > 0 AND NOT attisdropped
 ORDER BY attnum;

-- The calculation's signature and labels.
SELECT p.oid::regprocedure AS function,
       pg_get_function_result(p.oid) AS result,
       p.provolatile AS volatility, p.proparallel AS parallel,
       p.prosecdef AS security_definer, p.prorows AS rows
  FROM pg_proc p
 WHERE p.pronamespace = 'incentives'::regnamespace
 ORDER BY p.oid::regprocedure::text COLLATE "C";
