-- incentives 0.2.0 -> 0.3.0: what changes in schemas, tables and types,
-- and the 0.2.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function, procedure and view of 0.3.0, created or replaced in place;
-- triggers and policies created again), 0.2.0--0.3.0.finish.sql if there
-- is one, then src/sql/update_end.sql (the Makefile).  A fresh install
-- runs the released 0.1.0 and 0.1.0 -> 0.2.0 scripts and then this same
-- update script, so this file is where 0.3.0's tables and types are
-- defined.  How a feature adds a table, a column of incentives.earning or
-- a column of a function's result, and what to do when a signature must
-- change: docs/architecture.md, Install and upgrade scripts.  What the
-- update does to each object a user can depend on:
-- docs/backup-and-upgrade.md, Upgrade (keep it listed there).

------------------------------------------------------------------------
-- Participant groups (docs/reference.md, Participant groups): who belongs
-- to which group when, and the group_key every result row carries.
------------------------------------------------------------------------

CREATE TABLE incentives.participant_groups (
    participant_key text NOT NULL,
    group_key       text NOT NULL,
    start_date      date NOT NULL,
    end_date        date,
    PRIMARY KEY (participant_key, start_date),
    CONSTRAINT participant_groups_end_date_check CHECK (end_date >= start_date)
);
CREATE INDEX participant_groups_group_idx ON incentives.participant_groups (group_key);
COMMENT ON TABLE incentives.participant_groups IS
  'Members of groups (retail chains, buying groups) by dated window: an offer with "aggregation": "group" computes its figures over all the transactions of a group (docs/reference.md, Participant groups); overlapping windows of one participant and groups of groups are refused';
COMMENT ON COLUMN incentives.participant_groups.participant_key IS 'The member (a participant: a retail location)';
COMMENT ON COLUMN incentives.participant_groups.group_key IS 'The group it belongs to in the window (its parent account or buying group); never itself a member';
COMMENT ON COLUMN incentives.participant_groups.start_date IS 'First day of the membership (inclusive)';
COMMENT ON COLUMN incentives.participant_groups.end_date IS 'Last day of the membership (inclusive); NULL: open ended';
COMMENT ON CONSTRAINT participant_groups_end_date_check ON incentives.participant_groups IS 'A membership ends on or after the day it starts';
COMMENT ON INDEX incentives.participant_groups_group_idx IS 'Memberships by group (the one-level check, the members of a group)';
SELECT pg_catalog.pg_extension_config_dump('incentives.participant_groups', '');
-- read by every calculation, written by those who write enrollments
SELECT pg_temp.update_grant_like('TABLE', 'incentives.participant_groups', 'TABLE', 'incentives.enrollments');

-- The row's group_key: the last column of the earning row, of the
-- materialized earnings, and of the results that show a group's figures.
ALTER TYPE incentives.earning ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.earning.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL outside a group and in offers aggregated by participant)';
ALTER TABLE incentives.earnings ADD COLUMN group_key text;
COMMENT ON COLUMN incentives.earnings.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL otherwise)';
ALTER TYPE incentives.diagnostics_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.diagnostics_row.group_key IS 'An offer aggregated by group: the group whose figures are diagnosed (NULL: the participant''s own)';
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.tier_progress_row.group_key IS 'An offer aggregated by group: the group whose value, tier and gap these are (NULL: the participant''s own)';
ALTER TYPE incentives.requirement_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.requirement_progress_row.group_key IS 'An offer aggregated by group: the group the requirement is judged in (NULL: the participant''s own)';
ALTER TYPE incentives.stack_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.stack_progress_row.group_key IS 'An offer aggregated by group: the group whose coverage these are (NULL: the participant''s own)';
ALTER TYPE incentives.program_version_row ADD ATTRIBUTE aggregation text;
COMMENT ON COLUMN incentives.program_version_row.aggregation IS 'participant or group: whose transactions the figures are computed over';
ALTER TYPE incentives_internal.offer_summary_row ADD ATTRIBUTE aggregation text;

-- The reporting view per group (code/50_reporting.sql) is read by whoever
-- reads the one per participant.
SELECT pg_temp.update_grant_like('TABLE', 'incentives.earnings_by_group', 'TABLE', 'incentives.earnings_by_participant');

-- What refresh_earnings materializes gains the column too; its result is
-- a table of its own, which cannot change in place.  (Routines are named
-- as regprocedure prints them: test/upgrade/users.sh matches the names.)
SELECT pg_temp.update_replace_function('incentives_internal.calculate_dated(text,jsonb,text[],regclass,timestamp with time zone,date)');

------------------------------------------------------------------------
-- refresh_earnings(jobs => N) (docs/lifecycle.md, How a refresh replaces
-- the earnings): the procedure, and the internals it passes jobs to, gain
-- it as their last argument (with a default on the procedure: calls by
-- position or name keep working).  A new signature cannot replace the
-- 0.2.0 one in place: they are dropped here, the code part creates their
-- successors, which get their privileges (a grant of EXECUTE on the
-- procedure to a role that refreshes included); a routine of the user's
-- with a BEGIN ATOMIC body calling the procedure stops the update.
-- incentives_internal.refresh_write (code/41_refresh_write.sql) is new.
------------------------------------------------------------------------
SELECT pg_temp.update_replace_function('incentives.refresh_earnings(text,regclass,integer,text,boolean)');
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_check(text,regclass,text,boolean)');
SELECT pg_temp.update_replace_function('incentives_internal.refresh_earnings_work(bigint,text,regclass,integer,text,boolean)');

SELECT pg_temp.update_check();
DROP FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date);
DROP PROCEDURE incentives.refresh_earnings(text, regclass, integer, text, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_check(text, regclass, text, boolean);
DROP FUNCTION incentives_internal.refresh_earnings_work(bigint, text, regclass, integer, text, boolean);

------------------------------------------------------------------------
-- Forecast and accrual (docs/reference.md, Forecast; docs/lifecycle.md,
-- Accruals): the forecast's result type, and the accruals that CALL
-- incentives.accrue writes (append-only, as the statements are).
------------------------------------------------------------------------

CREATE TYPE incentives.forecast_row AS (
    participant_key    text,
    offer_key          text,
    group_key          text,
    span_start         date,
    span_end           date,
    elapsed_days       integer,
    span_days          integer,
    basis_to_date      numeric,
    projected_basis    numeric,
    rate_key_to_date   text,
    projected_rate_key text,
    earned_to_date     numeric,
    projected_earnings numeric,
    accrual_to_date    numeric
);
COMMENT ON TYPE incentives.forecast_row IS 'One row of incentives.forecast: a participant''s earnings under one offer to date, projected to the end of the offer''s span at the same pace, and the share accrued';
COMMENT ON COLUMN incentives.forecast_row.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.forecast_row.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.forecast_row.group_key IS 'The group whose volume the basis is of (an offer that aggregates by group); NULL otherwise';
COMMENT ON COLUMN incentives.forecast_row.span_start IS 'The offer''s earliest period start';
COMMENT ON COLUMN incentives.forecast_row.span_end IS 'The offer''s latest period end';
COMMENT ON COLUMN incentives.forecast_row.elapsed_days IS 'Days of the span gone by on as_of_date, counting it (at most span_days)';
COMMENT ON COLUMN incentives.forecast_row.span_days IS 'Days of the span, both ends counted';
COMMENT ON COLUMN incentives.forecast_row.basis_to_date IS 'The stepped threshold value on as_of_date (the growth percentage for growth types), 6 places; NULL for standard and stacked offers, or without a value';
COMMENT ON COLUMN incentives.forecast_row.projected_basis IS 'The same on the projected volume';
COMMENT ON COLUMN incentives.forecast_row.rate_key_to_date IS 'The stepped tier basis_to_date meets (NULL: none, or no tiers), whether or not rows follow';
COMMENT ON COLUMN incentives.forecast_row.projected_rate_key IS 'The stepped tier projected_basis meets';
COMMENT ON COLUMN incentives.forecast_row.earned_to_date IS 'Sum of incentive_amount of the calculation through as_of_date';
COMMENT ON COLUMN incentives.forecast_row.projected_earnings IS 'Sum of incentive_amount of the projected calculation: every transaction dated span_start..as_of_date with its quantity and amount x span_days / elapsed_days';
COMMENT ON COLUMN incentives.forecast_row.accrual_to_date IS 'round(projected_earnings x elapsed_days / span_days, 2): the straight-line share of the projected payout accrued by as_of_date';

CREATE TABLE incentives.accruals (
    accrual_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    as_of_date  date NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.now(),
    created_by  text NOT NULL DEFAULT CURRENT_USER
);
CREATE INDEX accruals_date_idx ON incentives.accruals (as_of_date);
COMMENT ON TABLE incentives.accruals IS
  'Accruals written by CALL incentives.accrue: the liability booked per participant and offer as of a date (the forecast''s accrual_to_date); append-only';
COMMENT ON COLUMN incentives.accruals.accrual_id IS 'Accrual number (identity)';
COMMENT ON COLUMN incentives.accruals.as_of_date IS 'The forecast''s as_of_date: transactions dated on or before it';
COMMENT ON COLUMN incentives.accruals.created_at IS 'Start of the transaction that wrote it';
COMMENT ON COLUMN incentives.accruals.created_by IS 'The role that ran incentives.accrue';
COMMENT ON INDEX incentives.accruals_date_idx IS 'Accruals by date';

CREATE TABLE incentives.accrual_lines (
    accrual_id      bigint NOT NULL,
    participant_key text NOT NULL,
    offer_key       text NOT NULL,
    accrued_to_date numeric(20, 2) NOT NULL,
    accrued_before  numeric(20, 2) NOT NULL,
    delta           numeric(20, 2) NOT NULL,
    PRIMARY KEY (accrual_id, participant_key, offer_key),
    CONSTRAINT accrual_lines_delta_check CHECK (delta = accrued_to_date - accrued_before)
);
CREATE INDEX accrual_lines_participant_idx ON incentives.accrual_lines (participant_key, offer_key);
COMMENT ON TABLE incentives.accrual_lines IS
  'One line per participant and offer of an accrual with an accrual to date or an earlier one: accrued to date, accrued before, and the difference (the journal entry); append-only';
COMMENT ON COLUMN incentives.accrual_lines.accrual_id IS 'The accrual (written with it in one transaction; no foreign key, so that a parallel pg_restore may load the two tables in any order)';
COMMENT ON COLUMN incentives.accrual_lines.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.accrual_lines.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.accrual_lines.accrued_to_date IS 'accrual_to_date of incentives.forecast(as_of_date) for the participant and offer (0.00 when it has no forecast row any more)';
COMMENT ON COLUMN incentives.accrual_lines.accrued_before IS 'accrued_to_date of the same participant and offer''s previous line (0.00 when none)';
COMMENT ON COLUMN incentives.accrual_lines.delta IS 'accrued_to_date - accrued_before: what this accrual books (negative: a reversal)';
COMMENT ON INDEX incentives.accrual_lines_participant_idx IS 'Lines by participant and offer (accrued_before, the latest accrual)';

SELECT pg_catalog.pg_extension_config_dump('incentives.accruals', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.accruals', 'accrual_id'), '');
SELECT pg_catalog.pg_extension_config_dump('incentives.accrual_lines', '');

-- Accruals are kept as statements are: the roles that could write
-- statements under 0.2.0 can write accruals (update_begin.sql).
SELECT pg_temp.update_grant_like('TABLE', 'incentives.accruals', 'TABLE', 'incentives.statements');
SELECT pg_temp.update_grant_like('TABLE', 'incentives.accrual_lines', 'TABLE', 'incentives.statement_lines');
SELECT pg_temp.update_grant_like('SEQUENCE', 'incentives.accruals_accrual_id_seq',
                                 'SEQUENCE', 'incentives.statements_statement_id_seq');

------------------------------------------------------------------------
-- Growth over a baseline on every surface (docs/reference.md, Growth over
-- a baseline): new result columns, at the end of each row type.
------------------------------------------------------------------------

ALTER TYPE incentives_internal.offer_summary_row
    ADD ATTRIBUTE threshold_type text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline jsonb;
COMMENT ON COLUMN incentives_internal.offer_summary_row.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity, property, growth_amount or growth_quantity; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_summary_row.pays_on IS 'Stepped: all_volume or growth; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_summary_row.baseline IS 'Stepped growth types: the baseline, {start_date, end_date} or {property_key}; NULL otherwise';

ALTER TYPE incentives.program_version_row
    ADD ATTRIBUTE threshold_type text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline jsonb;
COMMENT ON COLUMN incentives.program_version_row.threshold_type IS 'Stepped: the threshold type (growth_amount and growth_quantity compare with a baseline); NULL otherwise';
COMMENT ON COLUMN incentives.program_version_row.pays_on IS 'Stepped: all_volume or growth (only the growth over the baseline pays); NULL otherwise';
COMMENT ON COLUMN incentives.program_version_row.baseline IS 'Stepped growth types: the baseline, {start_date, end_date} or {property_key}; NULL otherwise';

ALTER TYPE incentives_internal.offer_rate_row
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE baseline_start_date date,
    ADD ATTRIBUTE baseline_end_date date,
    ADD ATTRIBUTE baseline_property_key text;
COMMENT ON COLUMN incentives_internal.offer_rate_row.pays_on IS 'Stepped: all_volume or growth; NULL otherwise';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_start_date IS 'Stepped growth types with a baseline by dates: its first day';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_end_date IS 'Stepped growth types with a baseline by dates: its last day';
COMMENT ON COLUMN incentives_internal.offer_rate_row.baseline_property_key IS 'Stepped growth types with a baseline by property: the property';

ALTER TYPE incentives.tier_progress_row
    ADD ATTRIBUTE current_value numeric,
    ADD ATTRIBUTE baseline_value numeric,
    ADD ATTRIBUTE baseline jsonb,
    ADD ATTRIBUTE growth_percent numeric,
    ADD ATTRIBUTE no_growth_value text,
    ADD ATTRIBUTE pays_on text,
    ADD ATTRIBUTE next_volume numeric,
    ADD ATTRIBUTE volume_to_next numeric;
COMMENT ON COLUMN incentives.tier_progress_row.current_value IS 'The aggregated sum the tiers are measured by, in dollars (amount types) or the SKUs'' units (quantity types); NULL for a property threshold';
COMMENT ON COLUMN incentives.tier_progress_row.baseline_value IS 'Growth types: the baseline B (the same sum over the baseline''s dates, or its property; NULL when missing)';
COMMENT ON COLUMN incentives.tier_progress_row.baseline IS 'Growth types: the baseline, {start_date, end_date} or {property_key}';
COMMENT ON COLUMN incentives.tier_progress_row.growth_percent IS 'Growth types: (current_value - baseline_value) / baseline_value x 100 (NULL: no growth value), the threshold value the tiers compare';
COMMENT ON COLUMN incentives.tier_progress_row.no_growth_value IS 'Growth types: why there is no growth value (baseline is missing, baseline is not positive); NULL when there is one';
COMMENT ON COLUMN incentives.tier_progress_row.pays_on IS 'all_volume or growth (only the growth over the baseline pays)';
COMMENT ON COLUMN incentives.tier_progress_row.next_volume IS 'The current value at which the next tier is met (growth types: baseline_value x (1 + next_threshold / 100)); NULL for a property threshold or without a growth value';
COMMENT ON COLUMN incentives.tier_progress_row.volume_to_next IS 'next_volume - current_value: the dollars or units still needed to reach the next tier';

ALTER TYPE incentives.requirement_progress_row
    ADD ATTRIBUTE current_value numeric,
    ADD ATTRIBUTE baseline_value numeric,
    ADD ATTRIBUTE no_growth_value text;
COMMENT ON COLUMN incentives.requirement_progress_row.current_value IS 'Growth types: the aggregated sum now (value is its growth percentage over baseline_value); NULL otherwise';
COMMENT ON COLUMN incentives.requirement_progress_row.baseline_value IS 'Growth types: the baseline (NULL when missing)';
COMMENT ON COLUMN incentives.requirement_progress_row.no_growth_value IS 'Growth types: why there is no growth value (baseline is missing, baseline is not positive), which leaves the requirement unmet; NULL otherwise';
