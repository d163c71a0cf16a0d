-- incentives_cluster 0.1.0 -> 0.2.0: what changes in schemas and types, and
-- the 0.1.0 objects that cannot be changed in place.  The update script is
-- src/sql/update_begin.sql, this file, the code parts (every function and
-- procedure of 0.2.0, created or replaced in place), then
-- src/sql/update_end.sql (the Makefile).

COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows); the shards'' type';

-- The calculations' signatures change (as_of and through_date, and named
-- result types): the user's views over each 0.1.0 proxy are set aside and
-- its privileges kept for its successor (update_begin.sql), and it is
-- dropped; the code parts create the successor, update_end.sql the views
-- again over it.
SELECT pg_temp.update_replace_function('incentives.incentive_calculate(text, jsonb, text[], text)');
SELECT pg_temp.update_replace_function('incentives.incentive_diagnostics(text, jsonb, text[], text)');
SELECT pg_temp.update_replace_function('incentives.incentive_explain(text, text, jsonb, text)');
SELECT pg_temp.update_replace_function('incentives.tier_progress(text, jsonb, text)');
SELECT pg_temp.update_replace_function('incentives.stack_progress(text, text)');
SELECT pg_temp.update_replace_function('incentives.refresh_earnings(text, text, integer)');
-- the refresh's proxy passes the two new arguments too
SELECT pg_temp.update_drop_function('incentives_cluster.refresh_earnings(text, text, integer)');
SELECT pg_temp.update_check();

DROP FUNCTION incentives.incentive_calculate(text, jsonb, text[], text);
DROP FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], text);
DROP FUNCTION incentives.incentive_explain(text, text, jsonb, text);
DROP FUNCTION incentives.tier_progress(text, jsonb, text);
DROP FUNCTION incentives.stack_progress(text, text);
DROP PROCEDURE incentives.refresh_earnings(text, text, integer);
DROP FUNCTION incentives_cluster.refresh_earnings(text, text, integer);

-- Named result types, as on the shards (PL/Proxy matches the shards'
-- columns by name): a later version adds a column with ALTER TYPE ... ADD
-- ATTRIBUTE.
CREATE TYPE incentives.diagnostics_row AS (
    participant_key text,
    offer_key       text,
    strategy_key    text,
    diagnostics     jsonb
);
COMMENT ON TYPE incentives.diagnostics_row IS 'One row of incentives.incentive_diagnostics: the engine''s account of one participant and offer; the shards'' type';
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
COMMENT ON TYPE incentives.tier_progress_row IS 'One row of incentives.tier_progress: a participant''s progress through the tiers of one stepped offer; the shards'' type';
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
COMMENT ON TYPE incentives.requirement_progress_row IS 'One row of incentives.requirement_progress: one requirement of one offer for one participant; the shards'' type';
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
COMMENT ON TYPE incentives.stack_progress_row IS 'One row of incentives.stack_progress: one SKU set of one stack of a stacked offer for one participant; the shards'' type';
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
