------------------------------------------------------------------------
-- Materialized earnings and the calculation log
------------------------------------------------------------------------

CREATE TABLE incentives.calculation_runs (
    run_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at      timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    finished_at     timestamptz,
    participant_key text,
    participants    integer,
    rows            bigint,
    total_incentive numeric,
    status          text NOT NULL DEFAULT 'running',
    error           text,
    sqlstate        text,
    transactions    text NOT NULL,
    run_by          text NOT NULL DEFAULT CURRENT_USER,
    pid             integer NOT NULL DEFAULT pg_catalog.pg_backend_pid(),
    -- 0.2.0 (added at the end: an upgraded table has them there too)
    on_error        text NOT NULL DEFAULT 'raise',
    changed_only    boolean NOT NULL DEFAULT false,
    exceptions      integer,
    CONSTRAINT calculation_runs_status_check
        CHECK (status IN ('running', 'succeeded', 'completed_with_exceptions', 'failed', 'interrupted')),
    CONSTRAINT calculation_runs_on_error_check CHECK (on_error IN ('raise', 'skip'))
);
CREATE INDEX calculation_runs_started_idx ON incentives.calculation_runs (started_at);
COMMENT ON TABLE incentives.calculation_runs IS
  'One row per incentives.refresh_earnings call: when, what, how many, and how it ended (a failed run keeps its row and error when the procedure could commit; a run whose session died is marked interrupted by the next refresh)';
COMMENT ON COLUMN incentives.calculation_runs.run_id IS 'Run number (identity); incentives.earnings.run_id names the run that wrote a row';
COMMENT ON COLUMN incentives.calculation_runs.started_at IS 'When the run started';
COMMENT ON COLUMN incentives.calculation_runs.finished_at IS 'When it ended (for an interrupted run: when the next refresh found it dead); NULL while running';
COMMENT ON COLUMN incentives.calculation_runs.participant_key IS 'The participant refreshed; NULL for a refresh of every participant (or, with changed_only, of those whose inputs changed)';
COMMENT ON COLUMN incentives.calculation_runs.participants IS 'How many participants were calculated (a refresh of one participant counts 1; changed_only: those recalculated)';
COMMENT ON COLUMN incentives.calculation_runs.rows IS 'Earning rows written';
COMMENT ON COLUMN incentives.calculation_runs.total_incentive IS 'Sum of incentive_amount over the rows written';
COMMENT ON COLUMN incentives.calculation_runs.status IS
  'running; succeeded; completed_with_exceptions (on_error skip: some participants kept their previous earnings, see incentives.calculation_exceptions); failed (nothing changed); interrupted (its session or the server died; nothing changed)';
COMMENT ON COLUMN incentives.calculation_runs.error IS 'Failed and interrupted runs: the error message (and its detail)';
COMMENT ON COLUMN incentives.calculation_runs.sqlstate IS 'Failed runs: the error''s SQLSTATE';
COMMENT ON COLUMN incentives.calculation_runs.transactions IS 'The relation the transactions were read from';
COMMENT ON COLUMN incentives.calculation_runs.run_by IS 'The role that ran it';
COMMENT ON COLUMN incentives.calculation_runs.pid IS 'The backend that ran it (to find a running refresh in pg_stat_activity)';
COMMENT ON COLUMN incentives.calculation_runs.on_error IS 'raise (a failing participant fails the run) or skip (it keeps its previous earnings and gets a row in incentives.calculation_exceptions)';
COMMENT ON COLUMN incentives.calculation_runs.changed_only IS 'True when only the participants whose inputs changed since the earnings were last calculated were recalculated';
COMMENT ON COLUMN incentives.calculation_runs.exceptions IS 'How many participants failed and kept their previous earnings (on_error skip); NULL while running';

-- The earning row's 17 columns come from the type incentives.earning, with
-- their comments: the row is defined once.
--
-- incentives.earnings is partitioned (docs/lifecycle.md, "How a refresh
-- replaces the earnings"): a full refresh by the table's owner builds all
-- rows in a new table, indexes it and swaps it in as the one partition,
-- FOR VALUES FROM (MINVALUE) TO (MAXVALUE), in one transaction; readers see
-- the old rows or the new ones.  Those partitions are incentives_internal.
-- earnings_run_<run_id>, created by the refresh (not extension members; a
-- dump keeps them as they are).  incentives_internal.earnings_default holds
-- the rows while no such partition exists (a fresh install, refreshes by
-- roles that do not own the table).  The key of the rows is the primary
-- key of each partition: (participant_key, offer_key, incentive_rate_key,
-- transaction_id).
CREATE TABLE incentives.earnings (
    LIKE incentives.earning INCLUDING COMMENTS,
    transaction_date date,
    calculated_at    timestamptz NOT NULL,
    run_id           bigint NOT NULL
) PARTITION BY RANGE (run_id);
ALTER TABLE incentives.earnings
    ALTER COLUMN participant_key SET NOT NULL,
    ALTER COLUMN offer_key SET NOT NULL,
    ALTER COLUMN incentive_rate_key SET NOT NULL,
    ALTER COLUMN transaction_id SET NOT NULL;
COMMENT ON TABLE incentives.earnings IS
  'Materialized incentive_calculate rows (same 17 columns) plus the transaction date, written by incentives.refresh_earnings; one participant''s rows, some or all are replaced atomically (partitioned: a full refresh swaps in a new partition)';
COMMENT ON COLUMN incentives.earnings.transaction_date IS 'The transaction''s date, from the transactions relation at refresh (for reporting by month)';
COMMENT ON COLUMN incentives.earnings.calculated_at IS 'Start of the transaction that calculated the row';
COMMENT ON COLUMN incentives.earnings.run_id IS 'The incentives.calculation_runs row of the refresh that wrote it (the partition key)';

CREATE TABLE incentives_internal.earnings_default PARTITION OF incentives.earnings DEFAULT;
ALTER TABLE incentives_internal.earnings_default
    ADD CONSTRAINT earnings_default_pkey PRIMARY KEY (participant_key, offer_key, incentive_rate_key, transaction_id);
CREATE INDEX earnings_default_offer_idx ON incentives_internal.earnings_default (offer_key);
COMMENT ON TABLE incentives_internal.earnings_default IS
  'Default partition of incentives.earnings: holds the earnings while no refresh by the table''s owner has swapped in a partition of its own (empty afterwards)';
COMMENT ON INDEX incentives_internal.earnings_default_offer_idx IS 'Earnings by offer (the primary key serves participant and participant+offer look-ups)';

-- pg_dump keeps the materialized earnings and the run log (and the run
-- counter, so restored run ids are not handed out again).
-- (The partitioned table itself holds no rows: pg_dump dumps those of its
-- partitions; the partitions a full refresh swaps in are ordinary tables
-- and dumped as such.)
SELECT pg_catalog.pg_extension_config_dump('incentives.earnings', '');
SELECT pg_catalog.pg_extension_config_dump('incentives_internal.earnings_default', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.calculation_runs', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.calculation_runs', 'run_id'), '');

