------------------------------------------------------------------------
-- incentives_internal.refresh_write: a full refresh's rows written from
-- C into the run's new partition (docs/lifecycle.md, "How a refresh
-- replaces the earnings"; src/pg/refresh/refresh.h)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.refresh_write(
    target                   regclass,
    run_id                   bigint,
    transactions             regclass,
    progress_every           integer,
    skip                     boolean,
    jobs                     integer,
    OUT participants         integer,
    OUT rows                 bigint,
    OUT total                numeric,
    OUT failed_participants  text[],
    OUT failed_transactions  text[],
    OUT failed_sqlstates     text[],
    OUT failed_messages      text[],
    OUT partial_participants text[])
AS 'MODULE_PATHNAME', 'incentives_refresh_write'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.refresh_write(regclass, bigint, regclass, integer, boolean, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): calculates every participant of the transactions relation in one snapshot, by jobs processes (a participant group with all its members in one), and writes the rows straight into target (a table this transaction created, without indexes); returns the participants read, the rows and total written, and the participants skipped (skip: participant, transaction, SQLSTATE, message; those with rows already written apart)';
