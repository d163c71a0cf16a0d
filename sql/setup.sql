-- setup: create the extension and show what it installs.  Every later
-- regression test runs in this database and relies on it.
CREATE EXTENSION incentives;

-- The extension's objects (what \dx+ incentives lists), in a stable order.
SELECT pg_describe_object(classid, objid, 0) AS object
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'incentives')
   AND deptype = 'e'
 ORDER BY pg_describe_object(classid, objid, 0) COLLATE "C";

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
