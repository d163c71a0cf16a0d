-- incentives_cluster 0.2.0 -> 0.3.0: what changes in schemas and types,
-- and the 0.2.0 objects that cannot be changed in place.  The update
-- script is src/sql/update_begin.sql, this file, the code parts (every
-- function and procedure of 0.3.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).  A result type the shards' type
-- gains a column (incentives.earning, incentives.tier_progress_row, ...)
-- gains it here too, with the same ALTER TYPE ... ADD ATTRIBUTE
-- (docs/architecture.md, Install and upgrade scripts).

------------------------------------------------------------------------
-- Participant groups (docs/scaling.md, Participant groups): the rows gain
-- group_key as on the shards, and the coordinator keeps where each member
-- of a group lives.
------------------------------------------------------------------------

ALTER TYPE incentives.earning ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.earning.group_key IS 'In an offer aggregated by group, the group whose figures the row was computed over (NULL outside a group and in offers aggregated by participant)';
ALTER TYPE incentives.diagnostics_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.diagnostics_row.group_key IS 'An offer aggregated by group: the group whose figures are diagnosed (NULL: the participant''s own)';
ALTER TYPE incentives.tier_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.tier_progress_row.group_key IS 'An offer aggregated by group: the group whose value, tier and gap these are (NULL: the participant''s own)';
ALTER TYPE incentives.requirement_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.requirement_progress_row.group_key IS 'An offer aggregated by group: the group the requirement is judged in (NULL: the participant''s own)';
ALTER TYPE incentives.stack_progress_row ADD ATTRIBUTE group_key text;
COMMENT ON COLUMN incentives.stack_progress_row.group_key IS 'An offer aggregated by group: the group whose coverage these are (NULL: the participant''s own)';

-- The placement of every key of the participant groups: the key its
-- partition is the hash of (its calculation unit's first key), written by
-- put_participant_group and delete_participant_group; a participant in
-- no group is placed by its own key.
CREATE TABLE incentives_cluster.placements (
    participant_key text PRIMARY KEY,
    placement_key   text NOT NULL
);
COMMENT ON TABLE incentives_cluster.placements IS
  'Where the members (and groups) of incentives.participant_groups live: partition of hashtext(placement_key), the first key of the calculation unit, so that a group and all its members are on one partition; participants in no group are not listed (their own key)';
COMMENT ON COLUMN incentives_cluster.placements.participant_key IS 'A member or a group of incentives.participant_groups';
COMMENT ON COLUMN incentives_cluster.placements.placement_key IS 'The first key, in byte order, of its calculation unit (a group with its members, and the groups a member that moves joins)';
SELECT pg_catalog.pg_extension_config_dump('incentives_cluster.placements', '');

------------------------------------------------------------------------
-- Forecast (docs/reference.md, Forecast): the shards' result type.
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
COMMENT ON TYPE incentives.forecast_row IS 'One row of incentives.forecast: a participant''s earnings under one offer to date, projected to the end of its span, and the share accrued; the shards'' type';
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

-- Growth over a baseline (docs/reference.md, Growth over a baseline): the
-- columns the shards' progress rows gain, at their end.
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
