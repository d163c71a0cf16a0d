-- incentives 0.1.0 -> 0.2.0: what changes in schemas, tables and types,
-- and the 0.1.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.2.0, created or replaced in place;
-- triggers and policies created again), 0.1.0--0.2.0.finish.sql, then
-- src/sql/update_end.sql (the Makefile).  A fresh install runs the
-- released 0.1.0 script and then this same update script, so this file is
-- where 0.2.0's tables and types are defined.  What the update does to
-- each object a user can depend on: docs/backup-and-upgrade.md, Upgrade.

-- Internals have a schema of their own.
CREATE SCHEMA incentives_internal;
COMMENT ON SCHEMA incentives_internal IS
  'incentives internals: trigger functions, helpers of the procedures and views, and the functions a sharded coordinator calls; not for direct use';

------------------------------------------------------------------------
-- 0.1.0 routines whose signature changes (as_of and through_date, and
-- named result types: docs/architecture.md, Install and upgrade scripts).
-- They cannot keep their oid: the user's views over each are set aside
-- and its privileges kept for its successor (update_begin.sql), and it is
-- dropped; the code parts create the successor, and update_end.sql the
-- views again over it.
------------------------------------------------------------------------

SELECT pg_temp.update_replace_function('incentives.incentive_calculate(text, jsonb, text[], regclass)');
SELECT pg_temp.update_replace_function('incentives.incentive_diagnostics(text, jsonb, text[], regclass)');
SELECT pg_temp.update_replace_function('incentives.incentive_explain(text, text, jsonb, regclass)');
SELECT pg_temp.update_replace_function('incentives.tier_progress(text, jsonb, regclass)');
SELECT pg_temp.update_replace_function('incentives.stack_progress(text, regclass)');
SELECT pg_temp.update_replace_function('incentives.refresh_earnings(text, regclass, integer)');
-- incentives.earnings becomes partitioned (below): the 0.1.0 table cannot
-- stay; the new one gets its privileges, the old one keeps only its
-- owner's (it may live on as a partition, which no reader must read past
-- the table's policies).
SELECT pg_temp.update_replace_relation('incentives.earnings');
-- 0.1.0 helpers of the refresh that 0.2.0 replaces by internals of other
-- signatures (nothing of a user's may depend on them).
SELECT pg_temp.update_drop_function('incentives.refresh_earnings_begin(text, regclass)');
SELECT pg_temp.update_drop_function('incentives.refresh_earnings_work(bigint, text, regclass, integer)');
SELECT pg_temp.update_drop_function('incentives.refresh_earnings_run(text, regclass, integer)');
-- Anything of the user's in the way stops the update here.
SELECT pg_temp.update_check();

DROP FUNCTION incentives.incentive_calculate(text, jsonb, text[], regclass);
DROP FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], regclass);
DROP FUNCTION incentives.incentive_explain(text, text, jsonb, regclass);
DROP FUNCTION incentives.tier_progress(text, jsonb, regclass);
DROP FUNCTION incentives.stack_progress(text, regclass);
DROP PROCEDURE incentives.refresh_earnings(text, regclass, integer);
DROP FUNCTION incentives.refresh_earnings_begin(text, regclass);
DROP FUNCTION incentives.refresh_earnings_work(bigint, text, regclass, integer);
DROP FUNCTION incentives.refresh_earnings_run(text, regclass, integer);

-- 0.1.0 functions that become internals with their signature: moved, they
-- keep their oid (and whatever depends on it); the code parts replace
-- their definitions.
ALTER FUNCTION incentives.offers_validate() SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.calculate_is_date(text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.explain_totals(incentives.earning[], text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.explain_rows(incentives.earning[], text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.progress_figure(text, numeric) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_offer(jsonb) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.delete_offer(text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_sku(text, text, text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.delete_sku(text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_uom_conversion(text, text, numeric) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.delete_uom_conversion(text, text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_participant_property(text, text, numeric) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.delete_participant_property(text, text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_transactions(jsonb[]) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.put_transaction(text, text, text, date, text, numeric, text, numeric) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.delete_transaction(text, text) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.load_transactions(jsonb) SET SCHEMA incentives_internal;
ALTER FUNCTION incentives.shard_summary(integer, integer) SET SCHEMA incentives_internal;

------------------------------------------------------------------------
-- Named result types: the set-returning functions return a type of their
-- own, so that a later version adds a column with ALTER TYPE ... ADD
-- ATTRIBUTE and CREATE OR REPLACE FUNCTION, keeping the function (and the
-- user's views over it).
------------------------------------------------------------------------

CREATE TYPE incentives.diagnostics_row AS (
    participant_key text,
    offer_key       text,
    strategy_key    text,
    diagnostics     jsonb
);
COMMENT ON TYPE incentives.diagnostics_row IS 'One row of incentives.incentive_diagnostics: the engine''s account of one participant and offer';
COMMENT ON COLUMN incentives.diagnostics_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.diagnostics_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.diagnostics_row.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.diagnostics_row.diagnostics IS 'The engine''s account as JSON (docs/analyst-guide.md, incentive_diagnostics)';

CREATE TYPE incentives.tier_progress_row AS (
    participant_key      text,
    offer_key            text,
    threshold_type       text,
    property_key         text,
    threshold_value      numeric,
    current_rate_key     text,
    current_threshold    numeric,
    next_rate_key        text,
    next_threshold       numeric,
    gap_to_next          numeric,
    earning_transactions integer,
    earned_now           numeric,
    earned_at_next       numeric,
    tier_mode            text,
    blended_rate         numeric,
    blended_rate_at_next numeric,
    qualified            boolean,
    requirement_gaps     jsonb,
    limit_applied        text
);
COMMENT ON TYPE incentives.tier_progress_row IS 'One row of incentives.tier_progress: a participant''s progress through the tiers of one stepped offer';
COMMENT ON COLUMN incentives.tier_progress_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.tier_progress_row.offer_key IS 'The stepped offer';
COMMENT ON COLUMN incentives.tier_progress_row.threshold_type IS 'aggregated_amount, aggregated_quantity or property';
COMMENT ON COLUMN incentives.tier_progress_row.property_key IS 'The property that picks the tier (threshold_type property); NULL otherwise';
COMMENT ON COLUMN incentives.tier_progress_row.threshold_value IS 'Dollars (aggregated_amount, at least 2 decimals), quantity in the SKUs'' units (aggregated_quantity) or the property value (NULL when missing)';
COMMENT ON COLUMN incentives.tier_progress_row.current_rate_key IS 'The tier applied (NULL: none reached)';
COMMENT ON COLUMN incentives.tier_progress_row.current_threshold IS 'Its threshold';
COMMENT ON COLUMN incentives.tier_progress_row.next_rate_key IS 'The lowest tier above it (NULL: at the top)';
COMMENT ON COLUMN incentives.tier_progress_row.next_threshold IS 'Its threshold';
COMMENT ON COLUMN incentives.tier_progress_row.gap_to_next IS 'next_threshold - threshold_value (NULL when the value is unknown)';
COMMENT ON COLUMN incentives.tier_progress_row.earning_transactions IS 'Transactions that earn under the offer';
COMMENT ON COLUMN incentives.tier_progress_row.earned_now IS 'What the calculation pays now, after requirements and limits (0.00 when no tier is reached)';
COMMENT ON COLUMN incentives.tier_progress_row.earned_at_next IS 'What the earning transactions would pay at the next tier (before requirements and limits)';
COMMENT ON COLUMN incentives.tier_progress_row.tier_mode IS 'all_volume or incremental';
COMMENT ON COLUMN incentives.tier_progress_row.blended_rate IS 'Incremental tiers: the rate every earning transaction gets now, in the tiers'' measure';
COMMENT ON COLUMN incentives.tier_progress_row.blended_rate_at_next IS 'Incremental tiers: the blended rate once the threshold value reaches the next tier';
COMMENT ON COLUMN incentives.tier_progress_row.qualified IS 'False when a requirement of the offer is unmet';
COMMENT ON COLUMN incentives.tier_progress_row.requirement_gaps IS 'Each unmet requirement''s distance to its minimum (null for a missing property); {} when qualified';
COMMENT ON COLUMN incentives.tier_progress_row.limit_applied IS 'minimum, maximum or NULL: the payout limit that applied';

CREATE TYPE incentives.requirement_progress_row AS (
    participant_key  text,
    offer_key        text,
    strategy_key     text,
    requirement_key  text,
    requirement_type text,
    property_key     text,
    value            numeric,
    minimum          numeric,
    gap              numeric,
    met              boolean,
    qualified        boolean
);
COMMENT ON TYPE incentives.requirement_progress_row IS 'One row of incentives.requirement_progress: one requirement of one offer for one participant';
COMMENT ON COLUMN incentives.requirement_progress_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.requirement_progress_row.offer_key IS 'The offer with requirements';
COMMENT ON COLUMN incentives.requirement_progress_row.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.requirement_progress_row.requirement_key IS 'The requirement';
COMMENT ON COLUMN incentives.requirement_progress_row.requirement_type IS 'aggregated_amount, aggregated_quantity or property';
COMMENT ON COLUMN incentives.requirement_progress_row.property_key IS 'The property measured (requirement_type property); NULL otherwise';
COMMENT ON COLUMN incentives.requirement_progress_row.value IS 'The participant''s value (NULL for a missing property)';
COMMENT ON COLUMN incentives.requirement_progress_row.minimum IS 'The minimum the value must reach';
COMMENT ON COLUMN incentives.requirement_progress_row.gap IS 'How much is still missing (0 when met; NULL for a missing property)';
COMMENT ON COLUMN incentives.requirement_progress_row.met IS 'Whether the value reaches the minimum';
COMMENT ON COLUMN incentives.requirement_progress_row.qualified IS 'Whether every requirement of the offer is met';

CREATE TYPE incentives.stack_progress_row AS (
    participant_key text,
    offer_key       text,
    stack_key       text,
    sku_set_key     text,
    coverage_unit   text,
    coverage        numeric,
    overlap         numeric,
    factor          numeric,
    earns           boolean,
    uncovered       numeric,
    shortfall       numeric
);
COMMENT ON TYPE incentives.stack_progress_row IS 'One row of incentives.stack_progress: one SKU set of one stack of a stacked offer for one participant';
COMMENT ON COLUMN incentives.stack_progress_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.stack_progress_row.offer_key IS 'The stacked offer';
COMMENT ON COLUMN incentives.stack_progress_row.stack_key IS 'The stack (its key, or its set keys joined with _and_)';
COMMENT ON COLUMN incentives.stack_progress_row.sku_set_key IS 'The SKU set';
COMMENT ON COLUMN incentives.stack_progress_row.coverage_unit IS 'The set''s coverage unit (e.g. acre)';
COMMENT ON COLUMN incentives.stack_progress_row.coverage IS 'The set''s coverage, 6 places';
COMMENT ON COLUMN incentives.stack_progress_row.overlap IS 'The stack''s overlap: the coverage every set of it reaches, 6 places';
COMMENT ON COLUMN incentives.stack_progress_row.factor IS 'The set''s factor: overlap / coverage, 6 places';
COMMENT ON COLUMN incentives.stack_progress_row.earns IS 'Whether the stack pays';
COMMENT ON COLUMN incentives.stack_progress_row.uncovered IS 'The set''s coverage that does not pay, 6 places';
COMMENT ON COLUMN incentives.stack_progress_row.shortfall IS 'How much more of this set would let every set of the stack pay in full, 6 places';

CREATE TYPE incentives.program_version_row AS (
    offer_key      text,
    label          text,
    strategy_key   text,
    calculator_key text,
    document       jsonb,
    tier_mode      text,
    enrollment     text,
    requirements   jsonb,
    limit_minimum  numeric,
    limit_maximum  numeric,
    version        integer,
    valid_from     timestamptz,
    valid_to       timestamptz
);
COMMENT ON TYPE incentives.program_version_row IS 'One row of incentives.programs(as_of): an offer as incentives.programs shows it, in the version in force then';
COMMENT ON COLUMN incentives.program_version_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_version_row.label IS 'The offer''s optional label (NULL when absent)';
COMMENT ON COLUMN incentives.program_version_row.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.program_version_row.calculator_key IS 'percent_of_amount, dollars_per_unit, fixed_amount or dollars_per_coverage_unit';
COMMENT ON COLUMN incentives.program_version_row.document IS 'The offer document of the version';
COMMENT ON COLUMN incentives.program_version_row.tier_mode IS 'Stepped: all_volume or incremental; NULL for the other strategies';
COMMENT ON COLUMN incentives.program_version_row.enrollment IS 'open or required';
COMMENT ON COLUMN incentives.program_version_row.requirements IS 'The qualification gates as compiled ([] when none)';
COMMENT ON COLUMN incentives.program_version_row.limit_minimum IS 'Minimum payout per participant (NULL: none)';
COMMENT ON COLUMN incentives.program_version_row.limit_maximum IS 'Maximum payout per participant (NULL: none)';
COMMENT ON COLUMN incentives.program_version_row.version IS 'The version in force at as_of (incentives.offer_versions)';
COMMENT ON COLUMN incentives.program_version_row.valid_from IS 'When that version came into force';
COMMENT ON COLUMN incentives.program_version_row.valid_to IS 'When the next change or the delete ended it (NULL: current)';

-- The internal results the programs views read (the C functions fill them
-- by position).
CREATE TYPE incentives_internal.offer_summary_row AS (
    label          text,
    strategy_key   text,
    calculator_key text,
    tier_mode      text,
    enrollment     text,
    requirements   jsonb,
    limit_minimum  numeric,
    limit_maximum  numeric
);
COMMENT ON TYPE incentives_internal.offer_summary_row IS 'incentives_internal.offer_summary: an offer''s key fields and program rules as compiled (the columns of incentives.programs beside offer_key and document)';
CREATE TYPE incentives_internal.offer_rate_row AS (
    offer_key              text,
    strategy_key           text,
    calculator_key         text,
    rate_key               text,
    sku_key                text,
    rate_value             numeric,
    measure                text,
    threshold              numeric,
    threshold_type         text,
    period_key             text,
    period_start_date      date,
    period_end_date        date,
    transaction_type       text,
    sku_set_key            text,
    stack_key              text,
    threshold_property_key text,
    price                  numeric,
    coverage_unit          text,
    coverage_rate          numeric,
    coverage_uom_key       text,
    tier_mode              text
);
COMMENT ON TYPE incentives_internal.offer_rate_row IS 'incentives_internal.offer_rates: one rate of an offer as a flat row (the columns of incentives.program_rates)';

-- Comments that cite docs/reference.md instead of documents users never see.
COMMENT ON COLUMN incentives.offers.document IS 'The offer document, in the shape of the programs response (docs/reference.md, Offer documents)';
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows)';

-- The shipped unit conversions survive pg_dump/pg_restore as they are
-- (code/12_uom_conversions.sql): the shipped pairs
-- get a table of their own, and what became of each in this database
-- (edited or deleted under 0.1.0) is recorded now.
CREATE TABLE incentives_internal.shipped_uom_conversions (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric NOT NULL,
    PRIMARY KEY (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives_internal.shipped_uom_conversions IS
  'The unit conversions this version of the extension ships (copied into incentives.uom_conversions by CREATE EXTENSION); extension data, not dumped';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.from_uom_key IS 'Unit converted from';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.to_uom_key IS 'Unit converted to';
COMMENT ON COLUMN incentives_internal.shipped_uom_conversions.factor IS 'The shipped factor';
INSERT INTO incentives_internal.shipped_uom_conversions (from_uom_key, to_uom_key, factor) VALUES
    ('gal', 'qt', 4),
    ('gal', 'pt', 8),
    ('gal', 'fl_oz', 128),
    ('gal', 'l', 3.785411784),
    ('l', 'ml', 1000),
    ('lb', 'oz', 16),
    ('ton', 'lb', 2000),
    ('kg', 'g', 1000),
    ('lb', 'kg', 0.45359237);

CREATE TABLE incentives.uom_conversion_changes (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric,
    PRIMARY KEY (from_uom_key, to_uom_key),
    FOREIGN KEY (from_uom_key, to_uom_key)
        REFERENCES incentives_internal.shipped_uom_conversions (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives.uom_conversion_changes IS
  'Edits and deletions of the shipped unit conversions (maintained by a trigger on incentives.uom_conversions), so that pg_dump/pg_restore reproduces incentives.uom_conversions exactly';
COMMENT ON COLUMN incentives.uom_conversion_changes.from_uom_key IS 'Unit converted from (a shipped pair)';
COMMENT ON COLUMN incentives.uom_conversion_changes.to_uom_key IS 'Unit converted to (a shipped pair)';
COMMENT ON COLUMN incentives.uom_conversion_changes.factor IS 'The factor the pair has now; NULL when the row was deleted';
INSERT INTO incentives.uom_conversion_changes (from_uom_key, to_uom_key, factor)
SELECT s.from_uom_key, s.to_uom_key, c.factor
  FROM incentives_internal.shipped_uom_conversions AS s
  LEFT JOIN incentives.uom_conversions AS c
    ON c.from_uom_key OPERATOR(pg_catalog.=) s.from_uom_key
   AND c.to_uom_key OPERATOR(pg_catalog.=) s.to_uom_key
 WHERE c.factor::text IS DISTINCT FROM s.factor::text;

SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversions',
  $$WHERE (from_uom_key, to_uom_key) NOT IN (SELECT s.from_uom_key, s.to_uom_key FROM incentives_internal.shipped_uom_conversions AS s)$$);
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversion_changes', '');

-- Enrollments (docs/reference.md, Enrollment).
CREATE TABLE incentives.enrollments (
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    start_date      date NOT NULL,
    end_date        date NULL,
    PRIMARY KEY (participant_key, offer_key, start_date),
    CONSTRAINT enrollments_end_date_check CHECK (end_date >= start_date)
);
COMMENT ON TABLE incentives.enrollments IS
  'Enrollment windows of participants in offers whose enrollment is "required": a transaction counts for such an offer only when a window of its participant contains its date; two windows of one participant and offer may not overlap';
COMMENT ON COLUMN incentives.enrollments.participant_key IS 'The participant enrolled';
COMMENT ON COLUMN incentives.enrollments.offer_key IS 'The offer it is enrolled in';
COMMENT ON COLUMN incentives.enrollments.start_date IS 'First day of the window (inclusive)';
COMMENT ON COLUMN incentives.enrollments.end_date IS 'Last day of the window (inclusive); NULL: open ended';
COMMENT ON CONSTRAINT enrollments_end_date_check ON incentives.enrollments IS 'A window ends on or after the day it starts';
SELECT pg_catalog.pg_extension_config_dump('incentives.enrollments', '');

-- The participant index covers every transaction column, so a
-- one-participant calculation reads its transactions from the index alone
-- (docs/operations.md, Performance).  Rebuilt here: on a large table this
-- step takes about as long as building the index did.
DROP INDEX incentives.transactions_participant_idx;
CREATE INDEX transactions_participant_idx ON incentives.transactions (participant_key COLLATE "C", transaction_id COLLATE "C")
    INCLUDE (transaction_type, transaction_date, sku_key, quantity, uom_key, amount);
COMMENT ON INDEX incentives.transactions_participant_idx IS
  'A participant''s transactions, every column: what a one-participant calculation reads (an index-only scan)';

------------------------------------------------------------------------
-- The earnings lifecycle (docs/lifecycle.md)
------------------------------------------------------------------------

-- calculation_runs: the new statuses and columns, at the end as in a fresh
-- install.
ALTER TABLE incentives.calculation_runs DROP CONSTRAINT calculation_runs_status_check;
ALTER TABLE incentives.calculation_runs
    ADD COLUMN on_error     text NOT NULL DEFAULT 'raise',
    ADD COLUMN changed_only boolean NOT NULL DEFAULT false,
    ADD COLUMN exceptions   integer,
    ADD CONSTRAINT calculation_runs_status_check
        CHECK (status IN ('running', 'succeeded', 'completed_with_exceptions', 'failed', 'interrupted')),
    ADD CONSTRAINT calculation_runs_on_error_check CHECK (on_error IN ('raise', 'skip'));
COMMENT ON TABLE incentives.calculation_runs IS
  'One row per incentives.refresh_earnings call: when, what, how many, and how it ended (a failed run keeps its row and error when the procedure could commit; a run whose session died is marked interrupted by the next refresh)';
COMMENT ON COLUMN incentives.calculation_runs.finished_at IS 'When it ended (for an interrupted run: when the next refresh found it dead); NULL while running';
COMMENT ON COLUMN incentives.calculation_runs.participant_key IS 'The participant refreshed; NULL for a refresh of every participant (or, with changed_only, of those whose inputs changed)';
COMMENT ON COLUMN incentives.calculation_runs.participants IS 'How many participants were calculated (a refresh of one participant counts 1; changed_only: those recalculated)';
COMMENT ON COLUMN incentives.calculation_runs.status IS
  'running; succeeded; completed_with_exceptions (on_error skip: some participants kept their previous earnings, see incentives.calculation_exceptions); failed (nothing changed); interrupted (its session or the server died; nothing changed)';
COMMENT ON COLUMN incentives.calculation_runs.error IS 'Failed and interrupted runs: the error message (and its detail)';
COMMENT ON COLUMN incentives.calculation_runs.on_error IS 'raise (a failing participant fails the run) or skip (it keeps its previous earnings and gets a row in incentives.calculation_exceptions)';
COMMENT ON COLUMN incentives.calculation_runs.changed_only IS 'True when only the participants whose inputs changed since the earnings were last calculated were recalculated';
COMMENT ON COLUMN incentives.calculation_runs.exceptions IS 'How many participants failed and kept their previous earnings (on_error skip); NULL while running';

-- incentives.earnings becomes partitioned.  The 0.1.0 table, rows and
-- indexes as they are, leaves the extension and becomes its first
-- partition (the next full refresh by the owner replaces it, like any).
-- The user's views over it were set aside above (update_end.sql creates
-- them again over the new table); the reporting views of the extension
-- read it until the code parts replace them.
ALTER TABLE incentives.earnings RENAME TO earnings_run_0;
ALTER TABLE incentives.earnings_run_0 SET SCHEMA incentives_internal;
ALTER EXTENSION @extension@ DROP TABLE incentives_internal.earnings_run_0;
ALTER TABLE incentives_internal.earnings_run_0 RENAME CONSTRAINT earnings_pkey TO earnings_run_0_pkey;
ALTER INDEX incentives_internal.earnings_offer_idx RENAME TO earnings_run_0_offer_idx;
COMMENT ON TABLE incentives_internal.earnings_run_0 IS
  'Partition of incentives.earnings: the earnings materialized by incentives 0.1.0, until the next full refresh swaps in its own';
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
-- (The partitioned table itself holds no rows: pg_dump dumps those of its
-- partitions; the partitions a full refresh swaps in are ordinary tables
-- and dumped as such.)
SELECT pg_catalog.pg_extension_config_dump('incentives.earnings', '');
SELECT pg_catalog.pg_extension_config_dump('incentives_internal.earnings_default', '');
-- The 0.1.0 table becomes the first partition when it holds earnings;
-- empty (always so in a fresh install) it goes once the reporting views
-- read the new table (0.1.0--0.2.0.finish.sql).
DO $upgrade$
BEGIN
    IF EXISTS (SELECT FROM incentives_internal.earnings_run_0) THEN
        ALTER TABLE incentives.earnings
            ATTACH PARTITION incentives_internal.earnings_run_0 FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
    END IF;
END
$upgrade$;

-- Offer versions, statements, exceptions, the change log.
CREATE TABLE incentives.offer_versions (
    offer_key  text NOT NULL,
    version    integer NOT NULL CHECK (version > 0),
    document   jsonb NOT NULL,
    valid_from timestamptz NOT NULL,
    valid_to   timestamptz,
    changed_by text NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (offer_key, version),
    CONSTRAINT offer_versions_valid_check CHECK (valid_to >= valid_from)
);
CREATE UNIQUE INDEX offer_versions_current_idx ON incentives.offer_versions (offer_key) WHERE valid_to IS NULL;
COMMENT ON TABLE incentives.offer_versions IS
  'Every state every offer has had: a version per insert or change of incentives.offers, closed (valid_to) by the next change or the delete; append-only; incentive_calculate(as_of => ...) reads it';
COMMENT ON COLUMN incentives.offer_versions.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.offer_versions.version IS 'Version number, from 1 per offer (an offer deleted and inserted again goes on counting)';
COMMENT ON COLUMN incentives.offer_versions.document IS 'The offer document of this version';
COMMENT ON COLUMN incentives.offer_versions.valid_from IS 'When this version came into force: the start of the transaction that wrote it';
COMMENT ON COLUMN incentives.offer_versions.valid_to IS 'When the next change or the delete ended it (exclusive); NULL for the current version';
COMMENT ON COLUMN incentives.offer_versions.changed_by IS 'The role that inserted or changed the offer';
COMMENT ON INDEX incentives.offer_versions_current_idx IS 'At most one current (open) version per offer';
-- The offers of 0.1.0 get their version 1, valid from the update.
INSERT INTO incentives.offer_versions (offer_key, version, document, valid_from)
SELECT o.offer_key, 1, o.document, pg_catalog.now() FROM incentives.offers AS o;

CREATE TABLE incentives.statements (
    statement_id    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    statement_date  date NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by      text NOT NULL DEFAULT CURRENT_USER,
    participant_key text
);
CREATE INDEX statements_date_idx ON incentives.statements (statement_date);
COMMENT ON TABLE incentives.statements IS
  'Settlement statements written by CALL incentives.settle: what was due per participant and offer for the earnings through statement_date; append-only';
COMMENT ON COLUMN incentives.statements.statement_id IS 'Statement number (identity)';
COMMENT ON COLUMN incentives.statements.statement_date IS 'The earnings settled are those of transactions dated on or before it';
COMMENT ON COLUMN incentives.statements.created_at IS 'Start of the transaction that wrote it';
COMMENT ON COLUMN incentives.statements.created_by IS 'The role that ran incentives.settle';
COMMENT ON COLUMN incentives.statements.participant_key IS 'The participant settled; NULL for a statement of every participant';
COMMENT ON INDEX incentives.statements_date_idx IS 'Statements by date';

CREATE TABLE incentives.statement_lines (
    statement_id    bigint NOT NULL,
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    earned_to_date  numeric(20, 2) NOT NULL,
    settled_before  numeric(20, 2) NOT NULL,
    amount_due      numeric(20, 2) NOT NULL,
    PRIMARY KEY (statement_id, participant_key, offer_key),
    CONSTRAINT statement_lines_amount_due_check CHECK (amount_due = earned_to_date - settled_before)
);
CREATE INDEX statement_lines_participant_idx ON incentives.statement_lines (participant_key, offer_key);
COMMENT ON TABLE incentives.statement_lines IS
  'One line per participant and offer of a statement with earnings or earlier settlements: earned to date, settled before, and the difference due (negative: a clawback); append-only';
COMMENT ON COLUMN incentives.statement_lines.statement_id IS 'The statement (written with it in one transaction; no foreign key, so that a parallel pg_restore may load the two tables in any order)';
COMMENT ON COLUMN incentives.statement_lines.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.statement_lines.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.statement_lines.earned_to_date IS 'Sum of incentive_amount of incentive_calculate(participant_key, through_date => statement_date) for the offer';
COMMENT ON COLUMN incentives.statement_lines.settled_before IS 'Sum of amount_due of the earlier lines of the same participant and offer';
COMMENT ON COLUMN incentives.statement_lines.amount_due IS 'earned_to_date - settled_before: positive is paid (a late tier is a true-up), negative is clawed back (a return after payment)';
COMMENT ON INDEX incentives.statement_lines_participant_idx IS 'Lines by participant and offer (settled_before, balances)';

CREATE TABLE incentives.calculation_exceptions (
    run_id          bigint NOT NULL,
    participant_key text NOT NULL,
    transaction_id  text,
    sqlstate        text NOT NULL,
    message         text NOT NULL,
    PRIMARY KEY (run_id, participant_key)
);
COMMENT ON TABLE incentives.calculation_exceptions IS
  'Participants a refresh_earnings(on_error => ''skip'') could not calculate for a data reason: they kept their previous earnings';
COMMENT ON COLUMN incentives.calculation_exceptions.run_id IS 'The incentives.calculation_runs row of the refresh (no foreign key: the run log may be truncated on its own)';
COMMENT ON COLUMN incentives.calculation_exceptions.participant_key IS 'The participant that kept its previous earnings';
COMMENT ON COLUMN incentives.calculation_exceptions.transaction_id IS 'The transaction the calculation failed on; NULL when the failure was not about one transaction (a property, say)';
COMMENT ON COLUMN incentives.calculation_exceptions.sqlstate IS 'The error''s SQLSTATE (class 22 data exception or 23 integrity constraint violation)';
COMMENT ON COLUMN incentives.calculation_exceptions.message IS 'The error message (and its detail)';

CREATE TABLE incentives.earnings_changes (
    participant_key text
);
COMMENT ON TABLE incentives.earnings_changes IS
  'Participants whose inputs changed since their earnings were calculated (NULL: everyone, after a change of offers, SKUs or unit conversions); what refresh_earnings(changed_only => true) recalculates';
COMMENT ON COLUMN incentives.earnings_changes.participant_key IS 'The participant; NULL for everyone';
-- Nothing is known about what changed before the update: the first
-- changed_only refresh recalculates everyone.
INSERT INTO incentives.earnings_changes (participant_key) VALUES (NULL);

SELECT pg_catalog.pg_extension_config_dump('incentives.offer_versions', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.statements', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.statements', 'statement_id'), '');
SELECT pg_catalog.pg_extension_config_dump('incentives.statement_lines', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.calculation_exceptions', '');

------------------------------------------------------------------------
-- What 0.2.0 adds gets the privileges of what it extends (at the end of
-- the update; update_begin.sql): a role that could read, calculate,
-- write or refresh under 0.1.0 still can, without a GRANT of the DBA's --
-- the calculation now reads the enrollment windows and the offer versions,
-- triggers now write the offer versions, the change log and the shipped
-- conversions' changes with the caller's rights.  (In a fresh install
-- there is nothing to copy: the DBA's step 2 grants them, docs/security.md.)
------------------------------------------------------------------------
SELECT pg_temp.update_grant_like('SCHEMA', 'incentives_internal', 'SCHEMA', 'incentives');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.enrollments', 'TABLE', 'incentives.transactions');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.earnings_changes', 'TABLE', 'incentives.transactions');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.offer_versions', 'TABLE', 'incentives.offers');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.uom_conversion_changes', 'TABLE', 'incentives.uom_conversions');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.calculation_exceptions', 'TABLE', 'incentives.calculation_runs');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.statements', 'TABLE', 'incentives.earnings');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.statement_lines', 'TABLE', 'incentives.earnings');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.statements_statement_id_seq',
                                 'SEQUENCE', 'incentives.calculation_runs_run_id_seq');
