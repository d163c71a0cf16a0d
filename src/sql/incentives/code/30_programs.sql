
------------------------------------------------------------------------
-- The analyst and BI surface (docs/analyst-guide.md): the programs and their
-- flat rates, materialized earnings refreshed atomically (pg_cron can
-- schedule the procedure), reporting views, a JSON what-if entry point,
-- explain and tier/stack progress.
--
-- Conventions: every object is schema-qualified; every function runs with
-- search_path = pg_catalog, pg_temp (its SET clause says so; a C function
-- has one when it reads tables).  The one
-- exception is the procedure incentives.refresh_earnings: PostgreSQL refuses
-- COMMIT in a procedure that has a SET clause, and it needs COMMIT to keep a
-- failed run's log row, so its body qualifies every name and operator
-- instead and leaves the SQL work to incentives_internal.refresh_earnings_work
-- (which does run with that search_path).
-- Views are security_invoker: the caller's privileges and row-level
-- security apply, as for incentive_calculate.  The functions built on
-- incentives.incentive_diagnostics bind to it when called (plpgsql, or SQL
-- created with check_function_bodies off), whatever the order of the parts.
------------------------------------------------------------------------

------------------------------------------------------------------------
-- Programs: what the engine compiled from each offer document (src/pg/load/
-- offer_info.c), so that no rule of the calculation -- generated rate
-- keys, shortest-form numbers, the period a stepped offer's filters
-- share -- is written a second time in SQL.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.offer_summary(document jsonb)
RETURNS incentives_internal.offer_summary_row
AS 'MODULE_PATHNAME', 'incentives_offer_summary'
LANGUAGE C STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_summary(jsonb) IS
  'programs helper: an offer document''s label (NULL when absent), strategy_key, calculator_key, program rules (tier_mode of a stepped offer, enrollment, requirements, limits), aggregation, a stepped offer''s threshold type, pays_on and baseline, and the group_type, read from the compiled offer; an invalid document is an error (22023)';

CREATE OR REPLACE FUNCTION incentives_internal.offer_rates(document jsonb)
RETURNS SETOF incentives_internal.offer_rate_row
AS 'MODULE_PATHNAME', 'incentives_offer_rates'
LANGUAGE C STABLE STRICT PARALLEL SAFE
ROWS 10
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.offer_rates(jsonb) IS
  'program_rates helper: every rate of an offer document as a flat row, listed by the engine from the compiled offer (the columns of incentives.program_rates); an invalid document is an error (22023)';

CREATE OR REPLACE VIEW incentives.programs WITH (security_invoker = true) AS
SELECT o.offer_key,
       s.label,
       s.strategy_key,
       s.calculator_key,
       o.document,
       s.tier_mode,
       s.enrollment,
       s.requirements,
       s.limit_minimum,
       s.limit_maximum,
       s.aggregation,
       s.threshold_type,
       s.pays_on,
       s.baseline,
       s.group_type
  FROM incentives.offers AS o
 CROSS JOIN LATERAL incentives_internal.offer_summary(o.document) AS s;
COMMENT ON VIEW incentives.programs IS
  'The offers as the programs response shows them: one row per offer, with its key fields beside the document';
COMMENT ON COLUMN incentives.programs.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.programs.label IS 'The offer''s optional label (NULL when absent)';
COMMENT ON COLUMN incentives.programs.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.programs.calculator_key IS 'percent_of_amount, dollars_per_unit, fixed_amount or dollars_per_coverage_unit';
COMMENT ON COLUMN incentives.programs.document IS 'The offer document, as stored';
COMMENT ON COLUMN incentives.programs.tier_mode IS 'Stepped: all_volume (the tier met pays on all volume) or incremental (each tier pays on its band: a blended rate); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.enrollment IS 'open (everyone may earn) or required (only transactions inside an incentives.enrollments window of the participant count)';
COMMENT ON COLUMN incentives.programs.requirements IS 'The qualification gates as compiled: [{key, type, minimum, property_key, filters}]; every one must reach its minimum or the offer pays nothing ([] when none)';
COMMENT ON COLUMN incentives.programs.limit_minimum IS 'Minimum payout per participant: below it the offer pays nothing (NULL: none)';
COMMENT ON COLUMN incentives.programs.limit_maximum IS 'Maximum payout per participant (per group when aggregated by group): above it the rows are scaled down to add up to it exactly (NULL: none)';
COMMENT ON COLUMN incentives.programs.aggregation IS 'participant (each participant''s own transactions) or group (all the transactions of a participant''s group, incentives.participant_groups: tiers, pools, requirements and limits are the group''s)';
COMMENT ON COLUMN incentives.programs.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity, property, growth_amount or growth_quantity (the tiers are growth percentages over the baseline); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.pays_on IS 'Stepped: all_volume (the tier met pays every earning transaction) or growth (only the growth over the baseline pays); NULL for the other strategies';
COMMENT ON COLUMN incentives.programs.group_type IS 'An offer aggregated by group with "group_type": the type of group it aggregates at (incentives.groups; docs/reference.md, Participant hierarchies); NULL: the immediate group, or aggregated by participant';
COMMENT ON COLUMN incentives.programs.baseline IS 'Stepped growth types: what the current value is compared with, {start_date, end_date} (the same sum over those dates) or {property_key}; NULL otherwise';

-- An offer with a rate schedule (docs/lifecycle.md, Prospective rate
-- changes) shows the rates of each version in force, with the days they
-- apply to: effective_from (NULL: from the start) to effective_to (the
-- day before the next version's effective_from; NULL: to the end).
CREATE OR REPLACE VIEW incentives.program_rates WITH (security_invoker = true) AS
SELECT r.offer_key, r.strategy_key, r.calculator_key, r.rate_key, r.sku_key, r.rate_value,
       r.measure, r.threshold, r.threshold_type, r.period_key, r.period_start_date,
       r.period_end_date, r.transaction_type, r.sku_set_key, r.stack_key,
       r.threshold_property_key, r.price, r.coverage_unit, r.coverage_rate,
       r.coverage_uom_key, r.tier_mode, r.pays_on, r.baseline_start_date,
       r.baseline_end_date, r.baseline_property_key, s.effective_from, s.effective_to,
       r.product_key, r.group_type
  FROM incentives.offers AS o
  LEFT JOIN LATERAL (SELECT rs.document, rs.effective_from,
                            lead(rs.effective_from) OVER (ORDER BY rs.version) - 1 AS effective_to
                       FROM incentives_internal.rate_schedule(o.offer_key) AS rs) AS s ON true
 CROSS JOIN LATERAL incentives_internal.offer_rates(COALESCE(s.document, o.document)) AS r;
COMMENT ON VIEW incentives.program_rates IS
  'Every rate of every offer as a flat row, keyed as the calculation reports it (incentive_rate_key): standard, one row per entry and SKU or product; stepped, one row per tier; stacked, one row per stack, set and SKU';
COMMENT ON COLUMN incentives.program_rates.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_rates.effective_from IS 'An offer with a rate schedule: the first transaction date the rate applies to (NULL: from the start)';
COMMENT ON COLUMN incentives.program_rates.effective_to IS 'An offer with a rate schedule: the last transaction date the rate applies to (NULL: to the end)';
COMMENT ON COLUMN incentives.program_rates.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.program_rates.calculator_key IS 'The offer''s calculator';
COMMENT ON COLUMN incentives.program_rates.rate_key IS
  'The incentive_rate_key the calculation reports: standard, the entry key or {period_key}_{transaction_type}; stepped, the tier key or {value}_{measure}_greater_than_or_equal_to_{threshold}; stacked, the stack key or its set keys joined with _and_';
COMMENT ON COLUMN incentives.program_rates.sku_key IS 'The SKU the rate pays on (NULL for stepped tiers, which apply to every SKU of the earning filters, and for a standard rate of a product)';
COMMENT ON COLUMN incentives.program_rates.product_key IS 'A standard rate of a product (docs/reference.md, Products): the product whose SKUs it pays on (NULL otherwise)';
COMMENT ON COLUMN incentives.program_rates.rate_value IS 'The rate as written: the SKU rate (standard, stacked; 0 for a stacked SKU that only anchors coverage), the tier value (stepped), the pool (fixed_amount)';
COMMENT ON COLUMN incentives.program_rates.measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.program_rates.threshold IS 'Stepped: the tier''s threshold; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.threshold_type IS 'Stepped: aggregated_amount, aggregated_quantity or property; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.period_key IS 'The period of the entry (standard) or set (stacked); stepped: the earning filters'' period when they all share one, else NULL';
COMMENT ON COLUMN incentives.program_rates.period_start_date IS 'First day of the period (inclusive)';
COMMENT ON COLUMN incentives.program_rates.period_end_date IS 'Last day of the period (inclusive)';
COMMENT ON COLUMN incentives.program_rates.transaction_type IS 'The transaction type that earns; stepped: the earning filters'' type when they all share one, else NULL';
COMMENT ON COLUMN incentives.program_rates.sku_set_key IS 'Stacked: the SKU set; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.stack_key IS 'Stacked: the stack (its key, or its set keys joined with _and_); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.threshold_property_key IS 'Stepped by property: the property that picks the tier; NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.price IS 'The offer''s program price for the SKU (per unit of the SKU''s unit of measure), NULL when none';
COMMENT ON COLUMN incentives.program_rates.coverage_unit IS 'Stacked: the set''s coverage unit (e.g. acre)';
COMMENT ON COLUMN incentives.program_rates.coverage_rate IS 'Stacked: the SKU''s conversion rate, in coverage_uom_key per coverage unit';
COMMENT ON COLUMN incentives.program_rates.coverage_uom_key IS 'Stacked: the unit the conversion rate is in (the conversion''s "from")';
COMMENT ON COLUMN incentives.program_rates.tier_mode IS 'Stepped: all_volume or incremental (the tier''s value then pays only on its band of the threshold value); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.pays_on IS 'Stepped: all_volume or growth (only the growth over the baseline pays); NULL otherwise';
COMMENT ON COLUMN incentives.program_rates.baseline_start_date IS 'Stepped growth types with a baseline by dates: its first day (inclusive); the tier''s threshold is a growth percentage over the same sum dated baseline_start_date..baseline_end_date';
COMMENT ON COLUMN incentives.program_rates.baseline_end_date IS 'Stepped growth types with a baseline by dates: its last day (inclusive)';
COMMENT ON COLUMN incentives.program_rates.baseline_property_key IS 'Stepped growth types with a baseline by property: the property holding the baseline';
COMMENT ON COLUMN incentives.program_rates.group_type IS 'The offer''s group_type, as incentives.programs shows it: the type of group an offer aggregated by group aggregates at (incentives.groups; docs/reference.md, Participant hierarchies); NULL: the immediate group, or aggregated by participant';

-- Programs as of a time (docs/lifecycle.md, Offer versions and as_of): the
-- same rows from the versions valid then (NULL: now), with the version.
CREATE OR REPLACE FUNCTION incentives.programs(as_of timestamptz)
RETURNS SETOF incentives.program_version_row
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT v.offer_key, s.label, s.strategy_key, s.calculator_key, v.document,
           s.tier_mode, s.enrollment, s.requirements, s.limit_minimum, s.limit_maximum,
           v.version, v.valid_from, v.valid_to, s.aggregation, s.threshold_type, s.pays_on, s.baseline
      FROM incentives.offer_versions AS v
     CROSS JOIN LATERAL incentives_internal.offer_summary(v.document) AS s
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
     ORDER BY v.offer_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.programs(timestamptz) IS
  'incentives.programs with the offers as they were at as_of (NULL: now), one row per offer, with the version in force then (incentives.offer_versions)';

CREATE OR REPLACE FUNCTION incentives.program_rates(as_of timestamptz)
RETURNS SETOF incentives.program_rates
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT r.offer_key, r.strategy_key, r.calculator_key, r.rate_key, r.sku_key, r.rate_value,
           r.measure, r.threshold, r.threshold_type, r.period_key, r.period_start_date,
           r.period_end_date, r.transaction_type, r.sku_set_key, r.stack_key,
           r.threshold_property_key, r.price, r.coverage_unit, r.coverage_rate,
           r.coverage_uom_key, r.tier_mode, r.pays_on, r.baseline_start_date,
           r.baseline_end_date, r.baseline_property_key, s.effective_from, s.effective_to,
           r.product_key, r.group_type
      FROM incentives.offer_versions AS v
      LEFT JOIN LATERAL (SELECT rs.document, rs.effective_from,
                                lead(rs.effective_from) OVER (ORDER BY rs.version) - 1 AS effective_to
                           FROM incentives_internal.rate_schedule(v.offer_key, $1) AS rs) AS s
        ON true
     CROSS JOIN LATERAL incentives_internal.offer_rates(COALESCE(s.document, v.document)) AS r
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
$function$;
COMMENT ON FUNCTION incentives.program_rates(timestamptz) IS
  'incentives.program_rates with the offers as they were at as_of (NULL: now; incentives.offer_versions)';
