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

-- Explicit secure defaults: nothing for PUBLIC on the schema and the
-- tables, even where the installing role has default privileges granting
-- PUBLIC access to new tables.
REVOKE ALL ON SCHEMA incentives, incentives_internal FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA incentives FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA incentives FROM PUBLIC;
