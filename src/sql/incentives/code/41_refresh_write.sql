------------------------------------------------------------------------
-- incentives_internal.refresh_write: a refresh's rows written from C into
-- a table of the run's transaction: the new partition of a full refresh,
-- or the temporary table a batch moves into the earnings in place
-- (docs/lifecycle.md, "How a refresh replaces the earnings";
-- src/pg/refresh/refresh.h)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_write(
    target                   regclass,
    run_id                   bigint,
    transactions             regclass,
    progress_every           integer,
    skip                     boolean,
    jobs                     integer,
    participant              text DEFAULT NULL,
    OUT participants         integer,
    OUT rows                 bigint,
    OUT total                numeric,
    OUT failed_participants  text[],
    OUT failed_transactions  text[],
    OUT failed_sqlstates     text[],
    OUT failed_messages      text[],
    OUT partial_participants text[])
AS 'MODULE_PATHNAME', 'incentives_refresh_write'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer, text) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): calculates every participant of the transactions relation (or only participant, with its groups'' members) in one snapshot, by jobs processes (a participant group with all its members in one), and writes the rows straight into target (a table this transaction created, without indexes); a NOTICE every progress_every participants (0: none); returns the participants read, the rows and total written, and the participants skipped (skip: participant, transaction, SQLSTATE, message; those with rows already written apart)';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_hold()
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_refresh_hold'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_hold() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the lock a refresh with jobs > 1 holds across its transactions (incentives.earnings in EXCLUSIVE mode, for the session; the privileges LOCK TABLE asks for that mode), released by refresh_release, by an error that ends the transaction or by the session''s end';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_try_hold()
RETURNS boolean
AS 'MODULE_PATHNAME', 'incentives_refresh_try_hold'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_try_hold() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): takes the lock of refresh_hold if no other session holds a conflicting one, without waiting; false when it could not';

CREATE OR REPLACE FUNCTION incentives_internal.refresh_release()
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_refresh_release'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_release() IS
  'Part of incentives.refresh_earnings (call the procedure, not this): releases the lock refresh_hold took, if this session holds it';

CREATE OR REPLACE FUNCTION incentives_internal.run_log_keep()
RETURNS interval
AS 'MODULE_PATHNAME', 'incentives_run_log_keep'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.run_log_keep() IS
  'Part of incentives.refresh_earnings: the setting incentives.run_log_keep as an interval, NULL when it is -1 (keep every run)';

CREATE OR REPLACE FUNCTION incentives_internal.changed_only_limit()
RETURNS integer
AS 'MODULE_PATHNAME', 'incentives_changed_only_limit'
LANGUAGE C STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.changed_only_limit() IS
  'Part of incentives.refresh_earnings: the setting incentives.changed_only_limit, NULL when it is -1 (no limit)';
