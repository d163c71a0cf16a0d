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
    status          text NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running', 'succeeded', 'failed')),
    error           text,
    sqlstate        text,
    transactions    text NOT NULL,
    run_by          text NOT NULL DEFAULT CURRENT_USER,
    pid             integer NOT NULL DEFAULT pg_catalog.pg_backend_pid()
);
CREATE INDEX calculation_runs_started_idx ON incentives.calculation_runs (started_at);
COMMENT ON TABLE incentives.calculation_runs IS
  'One row per incentives.refresh_earnings call: when, what, how many, and how it ended (a failed run keeps its row and error when the procedure could commit)';
COMMENT ON COLUMN incentives.calculation_runs.run_id IS 'Run number (identity); incentives.earnings.run_id names the run that wrote a row';
COMMENT ON COLUMN incentives.calculation_runs.started_at IS 'When the run started';
COMMENT ON COLUMN incentives.calculation_runs.finished_at IS 'When it succeeded or failed; NULL while running (or when its session died)';
COMMENT ON COLUMN incentives.calculation_runs.participant_key IS 'The participant refreshed; NULL for a refresh of every participant';
COMMENT ON COLUMN incentives.calculation_runs.participants IS 'How many participants were calculated (a refresh of one participant counts 1)';
COMMENT ON COLUMN incentives.calculation_runs.rows IS 'Earning rows written';
COMMENT ON COLUMN incentives.calculation_runs.total_incentive IS 'Sum of incentive_amount over the rows written';
COMMENT ON COLUMN incentives.calculation_runs.status IS 'running, succeeded or failed';
COMMENT ON COLUMN incentives.calculation_runs.error IS 'Failed runs: the error message (and its detail)';
COMMENT ON COLUMN incentives.calculation_runs.sqlstate IS 'Failed runs: the error''s SQLSTATE';
COMMENT ON COLUMN incentives.calculation_runs.transactions IS 'The relation the transactions were read from';
COMMENT ON COLUMN incentives.calculation_runs.run_by IS 'The role that ran it';
COMMENT ON COLUMN incentives.calculation_runs.pid IS 'The backend that ran it (to find a running refresh in pg_stat_activity)';

-- The earning row's 17 columns come from the type incentives.earning, with
-- their comments: the row is defined once.
CREATE TABLE incentives.earnings (
    LIKE incentives.earning INCLUDING COMMENTS,
    transaction_date date,
    calculated_at    timestamptz NOT NULL,
    run_id           bigint NOT NULL,
    PRIMARY KEY (participant_key, offer_key, incentive_rate_key, transaction_id)
);
CREATE INDEX earnings_offer_idx ON incentives.earnings (offer_key);
COMMENT ON TABLE incentives.earnings IS
  'Materialized incentive_calculate rows (same 17 columns) plus the transaction date, written by incentives.refresh_earnings; one participant''s rows, or all, are replaced atomically';
COMMENT ON INDEX incentives.earnings_offer_idx IS 'Earnings by offer (the primary key serves participant and participant+offer look-ups)';
COMMENT ON COLUMN incentives.earnings.transaction_date IS 'The transaction''s date, copied from the transactions relation at refresh (for reporting by month)';
COMMENT ON COLUMN incentives.earnings.calculated_at IS 'Start of the transaction that wrote the row';
COMMENT ON COLUMN incentives.earnings.run_id IS 'The incentives.calculation_runs row of the refresh that wrote it';

-- pg_dump keeps the materialized earnings and the run log (and the run
-- counter, so restored run ids are not handed out again).
SELECT pg_catalog.pg_extension_config_dump('incentives.earnings', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.calculation_runs', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.calculation_runs', 'run_id'), '');

