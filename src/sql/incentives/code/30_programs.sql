
------------------------------------------------------------------------
-- The analyst and BI surface (docs/analyst-guide.md): the programs and their
-- flat rates, materialized earnings refreshed atomically (pg_cron can
-- schedule the procedure), reporting views, a JSON what-if entry point,
-- explain and tier/stack progress.
--
-- Conventions: every object is schema-qualified; every function sets
-- search_path = pg_catalog, pg_temp.  The one exception is the procedure
-- incentives.refresh_earnings: PostgreSQL refuses COMMIT in a procedure that
-- has a SET clause, and it needs COMMIT to keep a failed run's log row, so
-- its body qualifies every name and operator instead and leaves the SQL
-- work to incentives_internal.refresh_earnings_work (which does set search_path).
-- Views are security_invoker: the caller's privileges and row-level
-- security apply, as for incentive_calculate.  The functions built on
-- incentives.incentive_diagnostics bind to it when called (plpgsql, or SQL
-- created with check_function_bodies off), whatever the order of the parts.
------------------------------------------------------------------------

------------------------------------------------------------------------
-- Programs
------------------------------------------------------------------------

CREATE VIEW incentives.programs WITH (security_invoker = true) AS
SELECT o.offer_key,
       o.document ->> 'label'          AS label,
       o.document ->> 'strategy_key'   AS strategy_key,
       o.document ->> 'calculator_key' AS calculator_key,
       o.document
  FROM incentives.offers AS o;
COMMENT ON VIEW incentives.programs IS
  'The offers as the programs response shows them: one row per offer, with its key fields beside the document';
COMMENT ON COLUMN incentives.programs.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.programs.label IS 'The offer''s optional label (NULL when absent)';
COMMENT ON COLUMN incentives.programs.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.programs.calculator_key IS 'percent_of_amount, dollars_per_unit, fixed_amount or dollars_per_coverage_unit';
COMMENT ON COLUMN incentives.programs.document IS 'The offer document, as stored';

CREATE FUNCTION incentives.programs(as_of timestamptz)
RETURNS TABLE (
    offer_key      text,
    label          text,
    strategy_key   text,
    calculator_key text,
    document       jsonb,
    version        integer,
    valid_from     timestamptz,
    valid_to       timestamptz)
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT v.offer_key,
           v.document ->> 'label',
           v.document ->> 'strategy_key',
           v.document ->> 'calculator_key',
           v.document,
           v.version,
           v.valid_from,
           v.valid_to
      FROM incentives.offer_versions AS v
     WHERE v.valid_from <= COALESCE($1, now())
       AND (v.valid_to IS NULL OR v.valid_to > COALESCE($1, now()))
     ORDER BY v.offer_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.programs(timestamptz) IS
  'The offers as they were at as_of (NULL: now), one row per offer, with the version in force then (incentives.offer_versions)';

CREATE FUNCTION incentives.program_rates(as_of timestamptz)
RETURNS TABLE (
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
    coverage_uom_key       text)
LANGUAGE sql
STABLE PARALLEL SAFE
ROWS 1000
SET search_path = pg_catalog, pg_temp
-- A few documents' arrays: the planner's default estimates for
-- jsonb_array_elements make the query look expensive enough to JIT-compile,
-- which would cost a second per call.
SET jit = off
AS $function$
WITH offer AS (
    SELECT o.offer_key,
           o.document,
           o.document ->> 'strategy_key'   AS strategy_key,
           o.document ->> 'calculator_key' AS calculator_key,
           o.document -> 'incentive'       AS incentive
      FROM (SELECT c.offer_key, c.document
              FROM incentives.offers AS c
             WHERE $1 IS NULL
            UNION ALL
            SELECT v.offer_key, v.document
              FROM incentives.offer_versions AS v
             WHERE $1 IS NOT NULL
               AND v.valid_from <= $1 AND (v.valid_to IS NULL OR v.valid_to > $1)) AS o
),
period AS (
    SELECT o.offer_key,
           p ->> 'key' AS period_key,
           CAST(p ->> 'start_date' AS date) AS start_date,
           CAST(p ->> 'end_date' AS date)   AS end_date
      FROM offer AS o,
           jsonb_array_elements(o.document -> 'periods') AS p
),
price AS (
    SELECT o.offer_key,
           pr ->> 'sku_key' AS sku_key,
           trim_scale(CAST(pr ->> 'price' AS numeric)) AS price
      FROM offer AS o,
           jsonb_array_elements(
             CASE WHEN jsonb_typeof(o.document -> 'prices') = 'array'
                  THEN o.document -> 'prices' ELSE '[]'::jsonb END) AS pr
),
-- standard: one row per (entry, SKU rate)
standard AS (
    SELECT o.offer_key, o.strategy_key, o.calculator_key,
           COALESCE(e ->> 'key',
                    (e ->> 'period_key') || '_'
                    || (e ->> 'transaction_type')) AS rate_key,
           r ->> 'sku_key' AS sku_key,
           trim_scale(CAST(r ->> 'rate' AS numeric)) AS rate_value,
           r ->> 'measure' AS measure,
           CAST(NULL AS numeric) AS threshold,
           CAST(NULL AS text) AS threshold_type,
           CAST(NULL AS text) AS threshold_property_key,
           e ->> 'period_key' AS period_key,
           e ->> 'transaction_type' AS transaction_type,
           CAST(NULL AS text) AS sku_set_key,
           CAST(NULL AS text) AS stack_key,
           CAST(NULL AS text) AS coverage_unit,
           CAST(NULL AS numeric) AS coverage_rate,
           CAST(NULL AS text) AS coverage_uom_key
      FROM offer AS o,
           jsonb_array_elements(o.document -> 'incentives') AS e,
           jsonb_array_elements(e -> 'rates') AS r
     WHERE o.strategy_key = 'standard'
),
-- stepped: one row per tier; the period and transaction type are shown
-- when every earning filter agrees on them
stepped AS (
    SELECT o.offer_key, o.strategy_key, o.calculator_key,
           COALESCE(r ->> 'key',
                    format('%s_%s_greater_than_or_equal_to_%s',
                        trim_scale(CAST(r ->> 'value' AS numeric)),
                        r ->> 'measure',
                        trim_scale(CAST(r ->> 'threshold' AS numeric)))) AS rate_key,
           CAST(NULL AS text) AS sku_key,
           trim_scale(CAST(r ->> 'value' AS numeric)) AS rate_value,
           r ->> 'measure' AS measure,
           trim_scale(CAST(r ->> 'threshold' AS numeric)) AS threshold,
           o.incentive #>> '{threshold_definition,type}' AS threshold_type,
           o.incentive #>> '{threshold_definition,property,key}' AS threshold_property_key,
           f.period_key,
           f.transaction_type,
           CAST(NULL AS text) AS sku_set_key,
           CAST(NULL AS text) AS stack_key,
           CAST(NULL AS text) AS coverage_unit,
           CAST(NULL AS numeric) AS coverage_rate,
           CAST(NULL AS text) AS coverage_uom_key
      FROM offer AS o
     CROSS JOIN LATERAL (
           SELECT CASE WHEN count(DISTINCT x ->> 'period_key') = 1
                       THEN min(x ->> 'period_key') END AS period_key,
                  CASE WHEN count(DISTINCT x ->> 'transaction_type') = 1
                       THEN min(x ->> 'transaction_type') END AS transaction_type
             FROM jsonb_array_elements(o.incentive -> 'filters') AS x) AS f,
           jsonb_array_elements(o.incentive -> 'rates') AS r
     WHERE o.strategy_key = 'stepped'
),
-- stacked: one row per (stack, set in it, SKU of the set's conversion);
-- a SKU without a pay rate anchors coverage at rate 0
stacked AS (
    SELECT o.offer_key, o.strategy_key, o.calculator_key,
           k.stack_key AS rate_key,
           c ->> 'sku_key' AS sku_key,
           trim_scale(COALESCE(pay.rate, 0)) AS rate_value,
           COALESCE(pay.measure, 'dollars') AS measure,
           CAST(NULL AS numeric) AS threshold,
           CAST(NULL AS text) AS threshold_type,
           CAST(NULL AS text) AS threshold_property_key,
           s ->> 'period_key' AS period_key,
           s ->> 'transaction_type' AS transaction_type,
           sk.set_key AS sku_set_key,
           k.stack_key,
           s #>> '{conversion,coverage_unit}' AS coverage_unit,
           trim_scale(CAST(c ->> 'rate' AS numeric)) AS coverage_rate,
           c ->> 'from' AS coverage_uom_key
      FROM offer AS o,
           jsonb_array_elements(o.incentive -> 'stacks') AS st
     CROSS JOIN LATERAL (
           SELECT COALESCE(st ->> 'key',
                           (SELECT string_agg(x, '_and_' ORDER BY n)
                              FROM jsonb_array_elements_text(st -> 'sku_set_keys')
                                   WITH ORDINALITY AS xs(x, n))) AS stack_key) AS k
     CROSS JOIN LATERAL jsonb_array_elements_text(st -> 'sku_set_keys') AS sk(set_key)
      JOIN LATERAL jsonb_array_elements(o.incentive -> 'sku_sets') AS s
        ON s ->> 'key' = sk.set_key
     CROSS JOIN LATERAL jsonb_array_elements(s #> '{conversion,rates}') AS c
      LEFT JOIN LATERAL (
           SELECT CAST(r ->> 'rate' AS numeric) AS rate,
                  r ->> 'measure' AS measure
             FROM jsonb_array_elements(
                    CASE WHEN jsonb_typeof(s -> 'rates') = 'array'
                         THEN s -> 'rates' ELSE '[]'::jsonb END) AS r
            WHERE r ->> 'sku_key' = c ->> 'sku_key'
            LIMIT 1) AS pay ON true
     WHERE o.strategy_key = 'stacked'
),
rate AS (
    SELECT * FROM standard
    UNION ALL
    SELECT * FROM stepped
    UNION ALL
    SELECT * FROM stacked
)
SELECT r.offer_key,
       r.strategy_key,
       r.calculator_key,
       r.rate_key,
       r.sku_key,
       r.rate_value,
       r.measure,
       r.threshold,
       r.threshold_type,
       r.period_key,
       p.start_date AS period_start_date,
       p.end_date   AS period_end_date,
       r.transaction_type,
       r.sku_set_key,
       r.stack_key,
       r.threshold_property_key,
       pr.price,
       r.coverage_unit,
       r.coverage_rate,
       r.coverage_uom_key
  FROM rate AS r
  LEFT JOIN period AS p
         ON p.offer_key = r.offer_key
        AND p.period_key = r.period_key
  LEFT JOIN price AS pr
         ON pr.offer_key = r.offer_key
        AND pr.sku_key = r.sku_key
$function$;
COMMENT ON FUNCTION incentives.program_rates(timestamptz) IS
  'incentives.program_rates with the offers as they were at as_of (NULL: the current offers)';

CREATE VIEW incentives.program_rates WITH (security_invoker = true) AS
SELECT * FROM incentives.program_rates(NULL);
COMMENT ON VIEW incentives.program_rates IS
  'Every rate of every offer as a flat row, keyed as the calculation reports it (incentive_rate_key): standard, one row per entry and SKU; stepped, one row per tier; stacked, one row per stack, set and SKU';
COMMENT ON COLUMN incentives.program_rates.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.program_rates.strategy_key IS 'standard, stepped or stacked';
COMMENT ON COLUMN incentives.program_rates.calculator_key IS 'The offer''s calculator';
COMMENT ON COLUMN incentives.program_rates.rate_key IS
  'The incentive_rate_key the calculation reports: standard, the entry key or {period_key}_{transaction_type}; stepped, the tier key or {value}_{measure}_greater_than_or_equal_to_{threshold}; stacked, the stack key or its set keys joined with _and_';
COMMENT ON COLUMN incentives.program_rates.sku_key IS 'The SKU the rate pays on (NULL for stepped tiers, which apply to every SKU of the earning filters)';
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
