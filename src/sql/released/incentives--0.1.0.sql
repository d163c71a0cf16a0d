-- incentives: the install script (the Makefile turns it into
-- incentives--<version>.sql).  Tables of SPEC §1, the earning row type and
-- the calculation function of SPEC §4.1.

\echo Use "CREATE EXTENSION incentives" to load this file. \quit

COMMENT ON SCHEMA incentives IS 'Channel incentives (rebates): offers, transactions, and their exact calculation';

------------------------------------------------------------------------
-- Reference data
------------------------------------------------------------------------

CREATE TABLE incentives.offers (
    document  jsonb NOT NULL,
    offer_key text GENERATED ALWAYS AS (document ->> 'offer_key') STORED PRIMARY KEY
);
COMMENT ON TABLE incentives.offers IS
  'Offers (programs) as JSON documents; insert the document alone, offer_key is taken from it. Every insert/update is validated.';
COMMENT ON COLUMN incentives.offers.document IS 'The offer document, as in the programs response (SPEC §1.1)';
COMMENT ON COLUMN incentives.offers.offer_key IS 'The document''s offer_key (generated)';

CREATE TABLE incentives.transactions (
    transaction_id   text PRIMARY KEY,
    participant_key  text NOT NULL,
    transaction_type text NOT NULL,
    transaction_date date NOT NULL,
    sku_key          text NOT NULL,
    quantity         numeric NOT NULL,
    uom_key          text NOT NULL,
    amount           numeric NOT NULL
);
CREATE INDEX transactions_participant_idx ON incentives.transactions (participant_key COLLATE "C", transaction_id COLLATE "C");
COMMENT ON TABLE incentives.transactions IS 'Purchases and sales of participants (retailers); negative quantity and amount for a return';
COMMENT ON COLUMN incentives.transactions.transaction_id IS 'Unique transaction identifier';
COMMENT ON COLUMN incentives.transactions.participant_key IS 'Whose earnings (the retailer)';
COMMENT ON COLUMN incentives.transactions.transaction_type IS 'e.g. retailer_purchases_from_distribution, retailer_sales_to_growers';
COMMENT ON COLUMN incentives.transactions.transaction_date IS 'Date of the transaction';
COMMENT ON COLUMN incentives.transactions.sku_key IS 'Product';
COMMENT ON COLUMN incentives.transactions.quantity IS 'Quantity in uom_key; negative for a return';
COMMENT ON COLUMN incentives.transactions.uom_key IS 'Unit of measure of quantity';
COMMENT ON COLUMN incentives.transactions.amount IS 'Dollars; negative for a return';

CREATE TABLE incentives.skus (
    sku_key text PRIMARY KEY,
    uom_key text NOT NULL,
    label   text
);
COMMENT ON TABLE incentives.skus IS 'SKU catalog: the unit of measure each SKU is incentivized in (a SKU missing here is measured in each transaction''s own unit)';
COMMENT ON COLUMN incentives.skus.sku_key IS 'Product';
COMMENT ON COLUMN incentives.skus.uom_key IS 'The SKU''s unit of measure: incentivized_quantity and program prices are in this unit';
COMMENT ON COLUMN incentives.skus.label IS 'Optional display name';

CREATE TABLE incentives.uom_conversions (
    from_uom_key text NOT NULL,
    to_uom_key   text NOT NULL,
    factor       numeric NOT NULL CHECK (factor > 0 AND factor::text <> ALL (ARRAY['NaN', 'Infinity'])),
    PRIMARY KEY (from_uom_key, to_uom_key)
);
COMMENT ON TABLE incentives.uom_conversions IS
  'Unit conversions: quantity_in_to = quantity_in_from * factor; a pair found only the other way round is used as 1 / factor; no chaining';
COMMENT ON COLUMN incentives.uom_conversions.from_uom_key IS 'Unit converted from';
COMMENT ON COLUMN incentives.uom_conversions.to_uom_key IS 'Unit converted to';
COMMENT ON COLUMN incentives.uom_conversions.factor IS 'How many to-units one from-unit is (> 0)';

INSERT INTO incentives.uom_conversions (from_uom_key, to_uom_key, factor) VALUES
    ('gal', 'qt', 4),
    ('gal', 'pt', 8),
    ('gal', 'fl_oz', 128),
    ('gal', 'l', 3.785411784),
    ('l', 'ml', 1000),
    ('lb', 'oz', 16),
    ('ton', 'lb', 2000),
    ('kg', 'g', 1000),
    ('lb', 'kg', 0.45359237);

CREATE TABLE incentives.participant_properties (
    participant_key text NOT NULL,
    property_key    text NOT NULL,
    value           numeric NOT NULL CHECK (value::text <> ALL (ARRAY['NaN', 'Infinity', '-Infinity'])),
    PRIMARY KEY (participant_key, property_key)
);
COMMENT ON TABLE incentives.participant_properties IS
  'Stored property values per participant (e.g. business_plan_achieved), used by property-based stepped offers when the call does not pass the property';
COMMENT ON COLUMN incentives.participant_properties.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.participant_properties.property_key IS 'The property, as named in threshold_definition.property.key';
COMMENT ON COLUMN incentives.participant_properties.value IS 'Its numeric value';

-- pg_dump keeps user data of extension tables (shipped conversions excluded).
SELECT pg_catalog.pg_extension_config_dump('incentives.offers', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.transactions', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.skus', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.participant_properties', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.uom_conversions',
  $$WHERE (from_uom_key, to_uom_key) NOT IN (('gal','qt'),('gal','pt'),('gal','fl_oz'),('gal','l'),('l','ml'),('lb','oz'),('ton','lb'),('kg','g'),('lb','kg'))$$);

------------------------------------------------------------------------
-- Offer validation
------------------------------------------------------------------------

CREATE FUNCTION incentives.offer_error(document jsonb)
RETURNS text
AS 'MODULE_PATHNAME', 'incentives_offer_error'
LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION incentives.offer_error(jsonb) IS
  'Checks an offer document against every rule; NULL when it is valid, else the message the offers table would raise';

CREATE FUNCTION incentives.offers_validate()
RETURNS trigger
AS 'MODULE_PATHNAME', 'incentives_offers_validate'
LANGUAGE C;
COMMENT ON FUNCTION incentives.offers_validate() IS
  'Trigger: rejects an invalid offer document with SQLSTATE 22023, naming the offer and the JSON path';

CREATE TRIGGER offers_validate
    BEFORE INSERT OR UPDATE OF document ON incentives.offers
    FOR EACH ROW EXECUTE FUNCTION incentives.offers_validate();
COMMENT ON TRIGGER offers_validate ON incentives.offers IS 'Validates every offer document on insert and update';

------------------------------------------------------------------------
-- The calculation
------------------------------------------------------------------------

CREATE TYPE incentives.earning AS (
    participant_key                text,
    offer_key                      text,
    offer_calculator               text,
    sku_key                        text,
    incentive_rate_key             text,
    incentive_rate_measure         text,
    incentive_rate_value           numeric,
    offer_sku_pay_rate             numeric,
    transaction_id                 text,
    provided_quantity              numeric,
    provided_uom_key               text,
    provided_amount                numeric,
    incentivized_quantity          numeric,
    incentivized_amount            numeric,
    incentive_amount               numeric,
    incentive_contribution_percent numeric,
    incentive_effective_rate       numeric
);
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (SPEC §4.1)';
COMMENT ON COLUMN incentives.earning.participant_key IS 'The participant (retailer) who earns';
COMMENT ON COLUMN incentives.earning.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earning.offer_calculator IS 'The offer''s calculator_key';
COMMENT ON COLUMN incentives.earning.sku_key IS 'The transaction''s SKU';
COMMENT ON COLUMN incentives.earning.incentive_rate_key IS 'Standard: the entry key; stepped: the tier key; stacked: the stack key';
COMMENT ON COLUMN incentives.earning.incentive_rate_measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.earning.incentive_rate_value IS 'The rate as written in the offer (tier value for stepped, pool for fixed_amount)';
COMMENT ON COLUMN incentives.earning.offer_sku_pay_rate IS 'Rate as a multiplier: rate/100 for percent, rate for dollars, pool / sum of base amounts (6 places) for fixed_amount';
COMMENT ON COLUMN incentives.earning.transaction_id IS 'The earning transaction';
COMMENT ON COLUMN incentives.earning.provided_quantity IS 'The transaction''s quantity, as stored';
COMMENT ON COLUMN incentives.earning.provided_uom_key IS 'The transaction''s unit of measure';
COMMENT ON COLUMN incentives.earning.provided_amount IS 'The transaction''s amount, as stored';
COMMENT ON COLUMN incentives.earning.incentivized_quantity IS 'Quantity in the SKU''s unit (times the contribution factor for stacked), 6 places';
COMMENT ON COLUMN incentives.earning.incentivized_amount IS 'Base amount: quantity x program price when the offer prices the SKU, else the amount (times the contribution factor for stacked), 2 places';
COMMENT ON COLUMN incentives.earning.incentive_amount IS 'What the row earns, 2 places, half away from zero';
COMMENT ON COLUMN incentives.earning.incentive_contribution_percent IS 'Stacked: overlap / set coverage (<= 1); 1 otherwise; 6 places';
COMMENT ON COLUMN incentives.earning.incentive_effective_rate IS 'incentive_amount / incentivized_amount from the reported figures, 4 places; NULL when incentivized_amount is 0';

CREATE FUNCTION incentives.incentive_calculate(
    participant_key text     DEFAULT NULL,
    properties      jsonb    DEFAULT '{}',
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], regclass) IS
  'Earnings of one participant (or all when NULL) under the given offers (or all), reading transactions from any relation with the transaction columns; runs with the caller''s rights';

CREATE FUNCTION incentives.incentive_diagnostics(
    participant_key text     DEFAULT NULL,
    properties      jsonb    DEFAULT '{}',
    offer_keys      text[]   DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)
AS 'MODULE_PATHNAME', 'incentives_incentive_diagnostics'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], regclass) IS
  'Why participants earn what they do under stepped and stacked offers: threshold value, every tier (met, what it would pay), next tier and gap; coverage per SKU set, overlap and factors per stack (JSON per participant and offer)';

------------------------------------------------------------------------
-- The analyst and BI surface (SPEC §4.2, issue 4): the programs and their
-- flat rates, materialized earnings refreshed atomically (pg_cron can
-- schedule the procedure), reporting views, a JSON what-if entry point,
-- explain and tier/stack progress.
--
-- Conventions: every object is schema-qualified; every function sets
-- search_path = pg_catalog, pg_temp.  The one exception is the procedure
-- incentives.refresh_earnings: PostgreSQL refuses COMMIT in a procedure that
-- has a SET clause, and it needs COMMIT to keep a failed run's log row, so
-- its body qualifies every name and operator instead and leaves the SQL
-- work to incentives.refresh_earnings_work (which does set search_path).
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

CREATE VIEW incentives.program_rates WITH (security_invoker = true) AS
WITH offer AS (
    SELECT o.offer_key,
           o.document,
           o.document ->> 'strategy_key'   AS strategy_key,
           o.document ->> 'calculator_key' AS calculator_key,
           o.document -> 'incentive'       AS incentive
      FROM incentives.offers AS o
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
        AND pr.sku_key = r.sku_key;
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

CREATE TABLE incentives.earnings (
    participant_key                text NOT NULL,
    offer_key                      text NOT NULL,
    offer_calculator               text,
    sku_key                        text,
    incentive_rate_key             text NOT NULL,
    incentive_rate_measure         text,
    incentive_rate_value           numeric,
    offer_sku_pay_rate             numeric,
    transaction_id                 text NOT NULL,
    provided_quantity              numeric,
    provided_uom_key               text,
    provided_amount                numeric,
    incentivized_quantity          numeric,
    incentivized_amount            numeric,
    incentive_amount               numeric,
    incentive_contribution_percent numeric,
    incentive_effective_rate       numeric,
    transaction_date               date,
    calculated_at                  timestamptz NOT NULL,
    run_id                         bigint NOT NULL,
    PRIMARY KEY (participant_key, offer_key, incentive_rate_key, transaction_id)
);
CREATE INDEX earnings_offer_idx ON incentives.earnings (offer_key);
COMMENT ON TABLE incentives.earnings IS
  'Materialized incentive_calculate rows (same 17 columns) plus the transaction date, written by incentives.refresh_earnings; one participant''s rows, or all, are replaced atomically';
COMMENT ON INDEX incentives.earnings_offer_idx IS 'Earnings by offer (the primary key serves participant and participant+offer look-ups)';
COMMENT ON COLUMN incentives.earnings.participant_key IS 'The participant (retailer) who earns';
COMMENT ON COLUMN incentives.earnings.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earnings.offer_calculator IS 'The offer''s calculator_key';
COMMENT ON COLUMN incentives.earnings.sku_key IS 'The transaction''s SKU';
COMMENT ON COLUMN incentives.earnings.incentive_rate_key IS 'Standard: the entry key; stepped: the tier key; stacked: the stack key';
COMMENT ON COLUMN incentives.earnings.incentive_rate_measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.earnings.incentive_rate_value IS 'The rate as written in the offer (tier value for stepped, pool for fixed_amount)';
COMMENT ON COLUMN incentives.earnings.offer_sku_pay_rate IS 'Rate as a multiplier: rate/100 for percent, rate for dollars, pool / sum of base amounts (6 places) for fixed_amount';
COMMENT ON COLUMN incentives.earnings.transaction_id IS 'The earning transaction';
COMMENT ON COLUMN incentives.earnings.provided_quantity IS 'The transaction''s quantity, as stored';
COMMENT ON COLUMN incentives.earnings.provided_uom_key IS 'The transaction''s unit of measure';
COMMENT ON COLUMN incentives.earnings.provided_amount IS 'The transaction''s amount, as stored';
COMMENT ON COLUMN incentives.earnings.incentivized_quantity IS 'Quantity in the SKU''s unit (times the contribution factor for stacked), 6 places';
COMMENT ON COLUMN incentives.earnings.incentivized_amount IS 'Base amount (times the contribution factor for stacked), 2 places';
COMMENT ON COLUMN incentives.earnings.incentive_amount IS 'What the row earns, 2 places';
COMMENT ON COLUMN incentives.earnings.incentive_contribution_percent IS 'Stacked: overlap / set coverage (<= 1); 1 otherwise; 6 places';
COMMENT ON COLUMN incentives.earnings.incentive_effective_rate IS 'incentive_amount / incentivized_amount, 4 places; NULL when incentivized_amount is 0';
COMMENT ON COLUMN incentives.earnings.transaction_date IS 'The transaction''s date, copied from the transactions relation at refresh (for reporting by month)';
COMMENT ON COLUMN incentives.earnings.calculated_at IS 'Start of the transaction that wrote the row';
COMMENT ON COLUMN incentives.earnings.run_id IS 'The incentives.calculation_runs row of the refresh that wrote it';

-- pg_dump keeps the materialized earnings and the run log (and the run
-- counter, so restored run ids are not handed out again).
SELECT pg_catalog.pg_extension_config_dump('incentives.earnings', '');
SELECT pg_catalog.pg_extension_config_dump('incentives.calculation_runs', '');
SELECT pg_catalog.pg_extension_config_dump(
         pg_catalog.pg_get_serial_sequence('incentives.calculation_runs', 'run_id'), '');

CREATE FUNCTION incentives.refresh_earnings_begin(
    participant_key text,
    transactions    regclass)
RETURNS bigint
LANGUAGE sql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    INSERT INTO incentives.calculation_runs (participant_key, transactions)
    VALUES ($1, $2::text)   -- schema-qualified: only pg_catalog is on the path
    RETURNING run_id
$function$;
COMMENT ON FUNCTION incentives.refresh_earnings_begin(text, regclass) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): logs a new run as running and returns its run_id';

CREATE FUNCTION incentives.refresh_earnings_work(
    run_id          bigint,
    participant_key text,
    transactions    regclass,
    progress_every  integer)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_run         bigint  := refresh_earnings_work.run_id;
    v_participant text    := refresh_earnings_work.participant_key;
    v_relation    regclass := refresh_earnings_work.transactions;
    v_every       integer := GREATEST(COALESCE(refresh_earnings_work.progress_every, 1000), 1);
    v_insert      text;
    v_starts      text[];
    v_total       integer;
    v_batch       integer;
    v_batch_rel   regclass;
    v_table       text;
    v_done        integer := 0;
    v_rows        bigint  := 0;
    v_sum         numeric := 0.00;
    v_step_rows   bigint;
    v_step_sum    numeric;
BEGIN
    -- One refresh of everything at a time; refreshes of single participants
    -- run side by side (one at a time per participant).
    IF v_participant IS NULL THEN
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), 0);
    ELSE
        PERFORM pg_advisory_xact_lock_shared(hashtext('incentives.earnings'), 0);
        PERFORM pg_advisory_xact_lock(hashtext('incentives.earnings'), hashtext(v_participant));
    END IF;

    -- $1 run, $2 participant (NULL: all in $3), $3 relation to calculate on;
    -- the date comes from the caller's relation.
    v_insert := format($sql$
        WITH ins AS (
            INSERT INTO incentives.earnings
            SELECT e.participant_key, e.offer_key, e.offer_calculator, e.sku_key,
                   e.incentive_rate_key, e.incentive_rate_measure, e.incentive_rate_value,
                   e.offer_sku_pay_rate, e.transaction_id, e.provided_quantity,
                   e.provided_uom_key, e.provided_amount, e.incentivized_quantity,
                   e.incentivized_amount, e.incentive_amount,
                   e.incentive_contribution_percent, e.incentive_effective_rate,
                   (SELECT t.transaction_date FROM %s AS t
                     WHERE t.transaction_id::text = e.transaction_id
                       AND t.participant_key::text COLLATE "C" = e.participant_key
                     LIMIT 1),
                   now(), $1
              FROM incentives.incentive_calculate(participant_key => $2,
                                                  transactions => $3) AS e
            RETURNING incentive_amount)
        SELECT count(*), COALESCE(sum(incentive_amount), 0.00) FROM ins$sql$,
        v_relation);

    IF v_participant IS NOT NULL THEN
        DELETE FROM incentives.earnings AS e WHERE e.participant_key = v_participant;
        EXECUTE v_insert INTO v_rows, v_sum USING v_run, v_participant, v_relation;
        v_done := 1;
    ELSE
        DELETE FROM incentives.earnings;
        -- Batches of progress_every participants in byte order: the first
        -- key of each batch.  Each batch is one incentive_calculate call over
        -- a temporary view of the relation restricted to the batch's key
        -- range (an index on participant_key COLLATE "C" serves it).
        EXECUTE format($sql$
            SELECT count(*)::integer,
                   array_agg(p ORDER BY p) FILTER (WHERE (n - 1) %% $1 = 0)
              FROM (SELECT p, row_number() OVER (ORDER BY p) AS n
                      FROM (SELECT DISTINCT participant_key::text COLLATE "C" AS p
                              FROM %s) AS d) AS r$sql$, v_relation)
           INTO v_total, v_starts
          USING v_every;
        -- Several batches: what every participant's calculation shares
        -- stays put until this transaction ends, so all batches see the
        -- same offers, units and properties (SHARE locks: writers wait,
        -- readers do not; taken where the role may lock, i.e. has UPDATE,
        -- DELETE or TRUNCATE on the table).  Transactions are not locked:
        -- each participant's rows come from one statement.
        IF array_length(v_starts, 1) > 1 THEN
            FOR v_table IN SELECT unnest(ARRAY['incentives.offers', 'incentives.skus',
                                               'incentives.uom_conversions',
                                               'incentives.participant_properties']) LOOP
                IF has_table_privilege(v_table, 'UPDATE, DELETE, TRUNCATE') THEN
                    EXECUTE format('LOCK TABLE %s IN SHARE MODE', v_table);
                END IF;
            END LOOP;
        END IF;
        FOR v_batch IN 1 .. COALESCE(array_length(v_starts, 1), 0) LOOP
            EXECUTE format($sql$
                CREATE TEMPORARY VIEW incentives_refresh_batch AS
                SELECT t.transaction_id, t.participant_key, t.transaction_type,
                       t.transaction_date, t.sku_key, t.quantity, t.uom_key, t.amount
                  FROM %s AS t
                 WHERE t.participant_key::text COLLATE "C" >= %L%s$sql$,
                v_relation, v_starts[v_batch],
                CASE WHEN v_batch < array_length(v_starts, 1)
                     THEN format(' AND t.participant_key::text COLLATE "C" < %L', v_starts[v_batch + 1])
                     ELSE '' END);
            v_batch_rel := to_regclass('pg_temp.incentives_refresh_batch');
            EXECUTE v_insert INTO v_step_rows, v_step_sum USING v_run, NULL::text, v_batch_rel;
            EXECUTE format('DROP VIEW %s', v_batch_rel);
            v_done := LEAST(v_batch * v_every, v_total);
            v_rows := v_rows + v_step_rows;
            v_sum  := v_sum + v_step_sum;
            RAISE NOTICE 'refresh_earnings: % of % participants, % rows', v_done, v_total, v_rows;
            -- visible to other sessions at once in pg_stat_activity, unlike
            -- the run row, which commits with the earnings
            PERFORM set_config('application_name',
                               format('incentives refresh run %s: %s/%s', v_run, v_done, v_total),
                               true);
        END LOOP;
    END IF;

    UPDATE incentives.calculation_runs AS r
       SET status = 'succeeded',
           finished_at = clock_timestamp(),
           participants = v_done,
           rows = v_rows,
           total_incentive = v_sum
     WHERE r.run_id = v_run;
END
$function$;
COMMENT ON FUNCTION incentives.refresh_earnings_work(bigint, text, regclass, integer) IS
  'Part of incentives.refresh_earnings (call the procedure, not this): replaces one participant''s or all earnings and marks the run succeeded';

CREATE PROCEDURE incentives.refresh_earnings(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000)
LANGUAGE plpgsql
AS $procedure$
-- No SET clause: a procedure with one cannot COMMIT.  Every name and
-- operator below is schema-qualified; the SQL work is in
-- incentives.refresh_earnings_work.
DECLARE
    v_run        bigint;
    v_can_commit boolean;
    v_failed     boolean := false;
    v_probe      text;
    v_state      text;
    v_message    text;
    v_detail     text;
    v_hint       text;
BEGIN
    -- Can this call commit?  Yes when CALLed as a top-level statement
    -- outside a transaction block (psql, pg_cron); no inside BEGIN ... COMMIT
    -- or a function.  COMMIT inside an exception block always fails, and the
    -- message tells the two cases apart.
    BEGIN
        COMMIT;
    EXCEPTION WHEN invalid_transaction_termination THEN
        GET STACKED DIAGNOSTICS v_probe = MESSAGE_TEXT;
    END;
    v_can_commit := v_probe OPERATOR(pg_catalog.=) 'cannot commit while a subtransaction is active';

    v_run := incentives.refresh_earnings_begin(refresh_earnings.participant_key,
                                               refresh_earnings.transactions);
    IF v_can_commit THEN
        COMMIT;   -- the 'running' row is visible while the refresh runs
    END IF;

    -- The replacement runs in a subtransaction: on error its deletes and
    -- inserts are undone, the previous earnings stay, and the failure is
    -- recorded after it.
    BEGIN
        PERFORM incentives.refresh_earnings_work(v_run, refresh_earnings.participant_key,
                                                 refresh_earnings.transactions,
                                                 refresh_earnings.progress_every);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        GET STACKED DIAGNOSTICS v_state   = RETURNED_SQLSTATE,
                                v_message = MESSAGE_TEXT,
                                v_detail  = PG_EXCEPTION_DETAIL,
                                v_hint    = PG_EXCEPTION_HINT;
        v_failed := true;
    END;

    IF v_failed THEN
        UPDATE incentives.calculation_runs AS r
           SET status = 'failed',
               finished_at = pg_catalog.clock_timestamp(),
               sqlstate = v_state,
               error = CASE WHEN v_detail OPERATOR(pg_catalog.=) '' THEN v_message
                            ELSE v_message OPERATOR(pg_catalog.||) pg_catalog.chr(10)
                                 OPERATOR(pg_catalog.||) 'DETAIL: ' OPERATOR(pg_catalog.||) v_detail END
         WHERE r.run_id OPERATOR(pg_catalog.=) v_run;
        IF v_can_commit THEN
            COMMIT;   -- the failed run's row survives the error below
        END IF;
        IF v_detail OPERATOR(pg_catalog.<>) '' AND v_hint OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, DETAIL = v_detail, HINT = v_hint;
        ELSIF v_detail OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, DETAIL = v_detail;
        ELSIF v_hint OPERATOR(pg_catalog.<>) '' THEN
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message, HINT = v_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = v_state, MESSAGE = v_message;
        END IF;
    END IF;
END
$procedure$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, regclass, integer) IS
  'Recalculates one participant''s (or, with NULL, every participant''s) earnings into incentives.earnings atomically and logs the run in incentives.calculation_runs; on error the previous earnings stay and, when CALLed outside a transaction block, the failed run is committed before the error is raised; NOTICE every progress_every participants';

------------------------------------------------------------------------
-- Reporting views over incentives.earnings
------------------------------------------------------------------------

CREATE VIEW incentives.earnings_by_participant WITH (security_invoker = true) AS
SELECT e.participant_key,
       count(DISTINCT e.offer_key)      AS offers,
       count(DISTINCT e.transaction_id) AS transactions,
       count(*)                         AS rows,
       sum(e.incentivized_amount)       AS incentivized_amount,
       sum(e.incentive_amount)          AS incentive_amount,
       max(e.calculated_at)             AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.participant_key;
COMMENT ON VIEW incentives.earnings_by_participant IS 'Materialized earnings per participant';
COMMENT ON COLUMN incentives.earnings_by_participant.participant_key IS 'The participant';
COMMENT ON COLUMN incentives.earnings_by_participant.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_participant.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_participant.rows IS 'Earning rows (a transaction earns once per offer and rate key)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentivized_amount IS 'Sum of incentivized_amount over the rows (a transaction earning under two rates counts twice)';
COMMENT ON COLUMN incentives.earnings_by_participant.incentive_amount IS 'Total incentive earned';
COMMENT ON COLUMN incentives.earnings_by_participant.calculated_at IS 'When the newest of its rows was calculated';

CREATE VIEW incentives.earnings_by_offer WITH (security_invoker = true) AS
SELECT e.offer_key,
       min(e.offer_calculator)          AS offer_calculator,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id) AS transactions,
       count(*)                         AS rows,
       sum(e.incentivized_amount)       AS incentivized_amount,
       sum(e.incentive_amount)          AS incentive_amount,
       max(e.calculated_at)             AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.offer_key;
COMMENT ON VIEW incentives.earnings_by_offer IS 'Materialized earnings per offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earnings_by_offer.offer_calculator IS 'Its calculator';
COMMENT ON COLUMN incentives.earnings_by_offer.participants IS 'Participants earning under it';
COMMENT ON COLUMN incentives.earnings_by_offer.transactions IS 'Distinct transactions that earn under it';
COMMENT ON COLUMN incentives.earnings_by_offer.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_offer.incentive_amount IS 'Total incentive paid by the offer';
COMMENT ON COLUMN incentives.earnings_by_offer.calculated_at IS 'When the newest of its rows was calculated';

CREATE VIEW incentives.earnings_by_sku WITH (security_invoker = true) AS
SELECT e.sku_key,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_quantity)      AS incentivized_quantity,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY e.sku_key;
COMMENT ON VIEW incentives.earnings_by_sku IS 'Materialized earnings per SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.sku_key IS 'The SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.offers IS 'Offers it earns under';
COMMENT ON COLUMN incentives.earnings_by_sku.participants IS 'Participants earning on it';
COMMENT ON COLUMN incentives.earnings_by_sku.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_sku.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_quantity IS 'Sum of incentivized_quantity over the rows, in the SKU''s unit of measure (incentives.skus; each transaction''s own unit when the SKU is not there)';
COMMENT ON COLUMN incentives.earnings_by_sku.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_sku.incentive_amount IS 'Total incentive earned on the SKU';
COMMENT ON COLUMN incentives.earnings_by_sku.calculated_at IS 'When the newest of its rows was calculated';

CREATE VIEW incentives.earnings_by_month WITH (security_invoker = true) AS
SELECT CAST(date_trunc('month', e.transaction_date) AS date) AS month,
       count(DISTINCT e.participant_key) AS participants,
       count(DISTINCT e.offer_key)       AS offers,
       count(DISTINCT e.transaction_id)  AS transactions,
       count(*)                          AS rows,
       sum(e.incentivized_amount)        AS incentivized_amount,
       sum(e.incentive_amount)           AS incentive_amount,
       max(e.calculated_at)              AS calculated_at
  FROM incentives.earnings AS e
 GROUP BY 1;
COMMENT ON VIEW incentives.earnings_by_month IS 'Materialized earnings per calendar month of the transaction date';
COMMENT ON COLUMN incentives.earnings_by_month.month IS 'First day of the month of the earning transactions'' date';
COMMENT ON COLUMN incentives.earnings_by_month.participants IS 'Participants earning in the month';
COMMENT ON COLUMN incentives.earnings_by_month.offers IS 'Offers earned under in the month';
COMMENT ON COLUMN incentives.earnings_by_month.transactions IS 'Distinct transactions that earn';
COMMENT ON COLUMN incentives.earnings_by_month.rows IS 'Earning rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentivized_amount IS 'Sum of incentivized_amount over the rows';
COMMENT ON COLUMN incentives.earnings_by_month.incentive_amount IS 'Total incentive earned by the month''s transactions';
COMMENT ON COLUMN incentives.earnings_by_month.calculated_at IS 'When the newest of its rows was calculated';
------------------------------------------------------------------------
-- The JSON entry point: a calculation request with inline transactions
------------------------------------------------------------------------

CREATE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_participant text;
    v_properties  jsonb;
    v_offer_keys  text[];
    v_lines       jsonb;
    v_stored      boolean;
    v_problem     text;
    v_relation    regclass;
    v_result      jsonb;
BEGIN
    IF request IS NULL OR jsonb_typeof(request) <> 'object' THEN
        RAISE EXCEPTION 'invalid request: the request must be a JSON object'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- participant_key: optional string (JSON null = absent)
    CASE COALESCE(jsonb_typeof(request -> 'participant_key'), 'null')
        WHEN 'null'   THEN v_participant := NULL;
        WHEN 'string' THEN v_participant := request ->> 'participant_key';
        ELSE RAISE EXCEPTION 'invalid request: participant_key must be a string'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;

    -- properties: optional object of numbers
    CASE COALESCE(jsonb_typeof(request -> 'properties'), 'null')
        WHEN 'null'   THEN v_properties := '{}';
        WHEN 'object' THEN v_properties := request -> 'properties';
        ELSE RAISE EXCEPTION 'invalid request: properties must be a JSON object'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;
    SELECT format('properties.%s must be a number', p.key) INTO v_problem
      FROM jsonb_each(v_properties) AS p
     WHERE jsonb_typeof(p.value) <> 'number'
     ORDER BY p.key COLLATE "C"
     LIMIT 1;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- offer_keys: optional array of strings
    CASE COALESCE(jsonb_typeof(request -> 'offer_keys'), 'null')
        WHEN 'null'  THEN v_offer_keys := NULL;
        WHEN 'array' THEN
            SELECT format('offer_keys[%s] must be a string', k.n - 1) INTO v_problem
              FROM jsonb_array_elements(request -> 'offer_keys') WITH ORDINALITY AS k(v, n)
             WHERE jsonb_typeof(k.v) <> 'string'
             ORDER BY k.n
             LIMIT 1;
            IF v_problem IS NOT NULL THEN
                RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
            END IF;
            SELECT COALESCE(array_agg(k.v ORDER BY k.n), '{}') INTO v_offer_keys
              FROM jsonb_array_elements_text(request -> 'offer_keys') WITH ORDINALITY AS k(v, n);
        ELSE RAISE EXCEPTION 'invalid request: offer_keys must be an array of strings'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;

    -- include_stored: optional boolean
    CASE COALESCE(jsonb_typeof(request -> 'include_stored'), 'null')
        WHEN 'null'    THEN v_stored := false;
        WHEN 'boolean' THEN v_stored := (request -> 'include_stored')::boolean;
        ELSE RAISE EXCEPTION 'invalid request: include_stored must be a boolean'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;
    IF v_stored AND v_participant IS NULL THEN
        RAISE EXCEPTION 'invalid request: participant_key is required when include_stored is true'
              USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- transactions: optional array of transaction objects
    CASE COALESCE(jsonb_typeof(request -> 'transactions'), 'null')
        WHEN 'null'  THEN v_lines := '[]';
        WHEN 'array' THEN v_lines := request -> 'transactions';
        ELSE RAISE EXCEPTION 'invalid request: transactions must be an array'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;

    -- Every field of every inline transaction, first fault first (0-based
    -- indexes, as in offer paths).  Dates: YYYY-MM-DD and a real day.
    SELECT format('transactions[%s]%s', t.n - 1, f.problem) INTO v_problem
      FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)
     CROSS JOIN LATERAL (
        SELECT x.problem
          FROM (VALUES
            (0, CASE WHEN jsonb_typeof(t.v) <> 'object' THEN ' must be a JSON object' END),
            (1, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'transaction_id'), 'null')
                      WHEN 'null' THEN '.transaction_id is required'
                      WHEN 'string' THEN NULL
                      ELSE '.transaction_id must be a string' END END),
            (2, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'participant_key'), 'null')
                      WHEN 'null' THEN CASE WHEN v_participant IS NULL
                                            THEN '.participant_key is required (the request has no participant_key)' END
                      WHEN 'string' THEN CASE WHEN v_participant IS NOT NULL
                                               AND t.v ->> 'participant_key' <> v_participant
                                              THEN '.participant_key must equal the request''s participant_key' END
                      ELSE '.participant_key must be a string' END END),
            (3, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'transaction_type'), 'null')
                      WHEN 'null' THEN '.transaction_type is required'
                      WHEN 'string' THEN NULL
                      ELSE '.transaction_type must be a string' END END),
            (4, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'transaction_date'), 'null')
                      WHEN 'null' THEN '.transaction_date is required'
                      WHEN 'string' THEN
                        CASE WHEN NOT incentives.calculate_is_date(t.v ->> 'transaction_date')
                             THEN '.transaction_date must be a date (YYYY-MM-DD)' END
                      ELSE '.transaction_date must be a date (YYYY-MM-DD)' END END),
            (5, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'sku_key'), 'null')
                      WHEN 'null' THEN '.sku_key is required'
                      WHEN 'string' THEN NULL
                      ELSE '.sku_key must be a string' END END),
            (6, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'quantity'), 'null')
                      WHEN 'null' THEN '.quantity is required'
                      WHEN 'number' THEN NULL
                      ELSE '.quantity must be a number' END END),
            (7, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'uom_key'), 'null')
                      WHEN 'null' THEN '.uom_key is required'
                      WHEN 'string' THEN NULL
                      ELSE '.uom_key must be a string' END END),
            (8, CASE WHEN jsonb_typeof(t.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(t.v -> 'amount'), 'null')
                      WHEN 'null' THEN '.amount is required'
                      WHEN 'number' THEN NULL
                      ELSE '.amount must be a number' END END)
          ) AS x(k, problem)
         WHERE x.problem IS NOT NULL
         ORDER BY x.k
         LIMIT 1) AS f
     ORDER BY t.n
     LIMIT 1;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- A transaction_id at most once in the request.
    SELECT format('transactions[%s].transaction_id duplicates transactions[%s] ("%s")',
                  d.n - 1, d.first - 1, d.id) INTO v_problem
      FROM (SELECT t.v ->> 'transaction_id' AS id, t.n,
                   min(t.n) OVER (PARTITION BY t.v ->> 'transaction_id') AS first
              FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)) AS d
     WHERE d.n <> d.first
     ORDER BY d.n
     LIMIT 1;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The what-if transactions live in a temporary table for this call only
    -- (dropped below, or with the transaction on error).
    CREATE TEMPORARY TABLE incentives_request_transactions (
        transaction_id   text NOT NULL,
        participant_key  text NOT NULL,
        transaction_type text NOT NULL,
        transaction_date date NOT NULL,
        sku_key          text NOT NULL,
        quantity         numeric NOT NULL,
        uom_key          text NOT NULL,
        amount           numeric NOT NULL
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_transactions');

    EXECUTE format($sql$
        INSERT INTO %s
        SELECT t.v ->> 'transaction_id',
               COALESCE(t.v ->> 'participant_key', $2),
               t.v ->> 'transaction_type',
               (t.v ->> 'transaction_date')::date,
               t.v ->> 'sku_key',
               (t.v ->> 'quantity')::numeric,
               t.v ->> 'uom_key',
               (t.v ->> 'amount')::numeric
          FROM jsonb_array_elements($1) AS t(v)$sql$, v_relation)
    USING v_lines, v_participant;

    IF v_stored THEN
        EXECUTE format($sql$
            SELECT format('transactions[%%s].transaction_id "%%s" is already a stored transaction of the participant (include_stored)',
                          t.n - 1, t.v ->> 'transaction_id')
              FROM jsonb_array_elements($1) WITH ORDINALITY AS t(v, n)
             WHERE EXISTS (SELECT 1 FROM incentives.transactions AS s
                            WHERE s.participant_key = $2
                              AND s.transaction_id = t.v ->> 'transaction_id')
             ORDER BY t.n
             LIMIT 1$sql$)
        INTO v_problem
        USING v_lines, v_participant;
        IF v_problem IS NOT NULL THEN
            RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
        END IF;
        EXECUTE format($sql$
            INSERT INTO %s
            SELECT s.transaction_id, s.participant_key, s.transaction_type, s.transaction_date,
                   s.sku_key, s.quantity, s.uom_key, s.amount
              FROM incentives.transactions AS s
             WHERE s.participant_key = $1$sql$, v_relation)
        USING v_participant;
    END IF;

    SELECT jsonb_build_object('potential_earnings',
             COALESCE(jsonb_agg(to_jsonb(e)
                                ORDER BY e.participant_key COLLATE "C", e.offer_key COLLATE "C",
                                         e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                      '[]'::jsonb))
      INTO v_result
      FROM incentives.incentive_calculate(v_participant, v_properties, v_offer_keys, v_relation) AS e;

    EXECUTE format('DROP TABLE %s', v_relation);
    RETURN v_result;
END
$function$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'What-if calculation: {participant_key, properties, offer_keys, transactions: [...], include_stored} with inline transactions returns {"potential_earnings": [earning rows as JSON objects]}, the numbers incentive_calculate gives on the same data; writes nothing permanent; a bad request raises 22023 naming the field';

CREATE FUNCTION incentives.calculate_is_date(value text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- YYYY-MM-DD naming a real day (year 1 to 9999), without raising
    SELECT CASE
           WHEN $1 !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN false
           WHEN substr($1, 1, 4)::int < 1 OR substr($1, 6, 2)::int NOT BETWEEN 1 AND 12 THEN false
           ELSE substr($1, 9, 2)::int BETWEEN 1 AND
                extract(day FROM make_date(substr($1, 1, 4)::int, substr($1, 6, 2)::int, 1)
                                 + interval '1 month' - interval '1 day')::int
           END
$function$;
COMMENT ON FUNCTION incentives.calculate_is_date(text) IS
  'True when the text is an ISO date YYYY-MM-DD naming a real day (used to validate calculate() requests without raising)';
------------------------------------------------------------------------
-- Explain, tier progress and stack progress (built on
-- incentives.incentive_diagnostics)
------------------------------------------------------------------------

CREATE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb    DEFAULT '{}',
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS jsonb
LANGUAGE plpgsql
STABLE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp
AS $function$
#variable_conflict use_column
DECLARE
    v_participant text     := incentive_explain.participant_key;
    v_offer       text     := incentive_explain.offer_key;
    v_properties  jsonb    := COALESCE(incentive_explain.properties, '{}');
    v_relation    regclass := COALESCE(incentive_explain.transactions, 'incentives.transactions');
    v_doc         jsonb;
    v_strategy    text;
    v_earnings    incentives.earning[];
    v_totals      jsonb;
    v_diag        jsonb;
    v_result      jsonb;
BEGIN
    IF v_participant IS NULL THEN
        RAISE EXCEPTION 'participant_key must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF v_offer IS NULL THEN
        RAISE EXCEPTION 'offer_key must not be NULL' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT o.document INTO v_doc FROM incentives.offers AS o WHERE o.offer_key = v_offer;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'offer "%" does not exist', v_offer
              USING ERRCODE = 'invalid_parameter_value',
                    HINT = 'offer_key must name an offer in incentives.offers.';
    END IF;
    v_strategy := v_doc ->> 'strategy_key';

    -- The calculation's own rows: the totals are theirs.
    SELECT COALESCE(array_agg(e ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '{}')
      INTO v_earnings
      FROM incentives.incentive_calculate(v_participant, v_properties, ARRAY[v_offer], v_relation) AS e;
    v_totals := incentives.explain_totals(v_earnings, NULL);

    v_result := jsonb_build_object(
        'participant_key', v_participant,
        'offer_key', v_offer,
        'label', v_doc -> 'label',
        'strategy_key', v_strategy,
        'calculator_key', v_doc ->> 'calculator_key',
        'totals', v_totals);

    IF v_strategy = 'standard' THEN
        RETURN v_result || jsonb_build_object('entries', (
            SELECT COALESCE(jsonb_agg(
                     jsonb_build_object(
                       'rate_key', x.rate_key,
                       'label', x.e -> 'label',
                       'period_key', x.e ->> 'period_key',
                       'period_start_date', p ->> 'start_date',
                       'period_end_date', p ->> 'end_date',
                       'transaction_type', x.e ->> 'transaction_type',
                       'rates', x.e -> 'rates',
                       'totals', incentives.explain_totals(v_earnings, x.rate_key),
                       'rows', incentives.explain_rows(v_earnings, x.rate_key))
                     ORDER BY x.n), '[]'::jsonb)
              FROM (SELECT e, n,
                           COALESCE(e ->> 'key', (e ->> 'period_key') || '_' || (e ->> 'transaction_type')) AS rate_key
                      FROM jsonb_array_elements(v_doc -> 'incentives') WITH ORDINALITY AS en(e, n)) AS x
              LEFT JOIN LATERAL (
                    SELECT p FROM jsonb_array_elements(v_doc -> 'periods') AS p
                     WHERE p ->> 'key' = x.e ->> 'period_key' LIMIT 1) AS per ON true));
    END IF;

    SELECT d.diagnostics INTO v_diag
      FROM incentives.incentive_diagnostics(v_participant, v_properties, ARRAY[v_offer], v_relation) AS d
     WHERE d.offer_key = v_offer AND d.participant_key = v_participant;

    IF v_strategy = 'stepped' THEN
        IF v_diag IS NULL THEN
            -- No transaction of the participant touches the offer: every
            -- tier unmet, the lowest one next, no threshold value or gap
            -- (as for a missing property).
            v_diag := jsonb_build_object(
                'threshold_type', v_doc #>> '{incentive,threshold_definition,type}',
                'property_key', v_doc #> '{incentive,threshold_definition,property,key}',
                'threshold_value', NULL,
                'earning_transactions', 0,
                'tiers', (SELECT COALESCE(jsonb_agg(jsonb_build_object(
                                   'rate_key', r.rate_key, 'threshold', r.threshold, 'value', r.rate_value,
                                   'measure', r.measure, 'met', false, 'incentive_amount', 0)
                                 ORDER BY r.threshold), '[]'::jsonb)
                            FROM incentives.program_rates AS r
                           WHERE r.offer_key = v_offer),
                'selected_rate_key', NULL,
                'next_rate_key', (SELECT r.rate_key FROM incentives.program_rates AS r
                                   WHERE r.offer_key = v_offer ORDER BY r.threshold LIMIT 1),
                'next_threshold', (SELECT min(r.threshold) FROM incentives.program_rates AS r
                                    WHERE r.offer_key = v_offer),
                'gap_to_next', NULL);
        END IF;
        RETURN v_result || v_diag || jsonb_build_object('rows', incentives.explain_rows(v_earnings, NULL));
    END IF;

    -- stacked
    IF v_diag IS NULL THEN
        v_diag := jsonb_build_object(
            'sets', (SELECT COALESCE(jsonb_agg(jsonb_build_object(
                            'key', s ->> 'key', 'coverage_unit', s #>> '{conversion,coverage_unit}',
                            'coverage', 0, 'transactions', 0) ORDER BY n), '[]'::jsonb)
                       FROM jsonb_array_elements(v_doc #> '{incentive,sku_sets}') WITH ORDINALITY AS ss(s, n)),
            'stacks', (SELECT COALESCE(jsonb_agg(jsonb_build_object(
                              'rate_key', k.stack_key, 'sku_set_keys', k.s -> 'sku_set_keys',
                              'overlap', 0, 'earns', false, 'factors', '{}'::jsonb) ORDER BY k.n), '[]'::jsonb)
                         FROM (SELECT s, n,
                                      COALESCE(s ->> 'key',
                                               (SELECT string_agg(x, '_and_' ORDER BY m)
                                                  FROM jsonb_array_elements_text(s -> 'sku_set_keys')
                                                       WITH ORDINALITY AS xs(x, m))) AS stack_key
                                 FROM jsonb_array_elements(v_doc #> '{incentive,stacks}') WITH ORDINALITY AS st(s, n)) AS k));
    END IF;
    RETURN v_result || jsonb_build_object(
        'sets', v_diag -> 'sets',
        'stacks', (SELECT COALESCE(jsonb_agg(
                            s || jsonb_build_object(
                                   'totals', incentives.explain_totals(v_earnings, s ->> 'rate_key'),
                                   'rows', incentives.explain_rows(v_earnings, s ->> 'rate_key'))
                            ORDER BY n), '[]'::jsonb)
                     FROM jsonb_array_elements(v_diag -> 'stacks') WITH ORDINALITY AS st(s, n)));
END
$function$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, regclass) IS
  'Why a participant earns what it does under one offer, as JSON: standard, each entry with its matched rows and totals; stepped, the threshold value, every tier (met or not, what it would pay), the selected and next tier and the gap; stacked, coverage per SKU set, overlap and factors per stack; totals are incentive_calculate''s';

CREATE FUNCTION incentives.explain_totals(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT jsonb_build_object(
             'rows', count(*),
             'transactions', count(DISTINCT e.transaction_id),
             'incentivized_amount', COALESCE(sum(e.incentivized_amount), 0.00),
             'incentive_amount', COALESCE(sum(e.incentive_amount), 0.00))
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives.explain_totals(incentives.earning[], text) IS
  'incentive_explain helper: rows, distinct transactions and the sums of incentivized_amount and incentive_amount of the earning rows with the given rate key (all rows when NULL)';

CREATE FUNCTION incentives.explain_rows(earnings incentives.earning[], rate_key text)
RETURNS jsonb
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT COALESCE(jsonb_agg(to_jsonb(e) - 'participant_key' - 'offer_key' - 'offer_calculator'
                              ORDER BY e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                    '[]'::jsonb)
      FROM unnest($1) AS e
     WHERE $2 IS NULL OR e.incentive_rate_key = $2
$function$;
COMMENT ON FUNCTION incentives.explain_rows(incentives.earning[], text) IS
  'incentive_explain helper: the earning rows with the given rate key (all rows when NULL) as JSON objects, without the participant, offer and calculator';

-- tier_progress and stack_progress are SQL functions (an output column may
-- share its name with an argument only in SQL functions).  Their bodies
-- name incentives.incentive_diagnostics, which may be created after this
-- part: like pg_dump, do not check the bodies at creation (CREATE EXTENSION
-- restores the setting when the script ends).
SET check_function_bodies = false;

CREATE FUNCTION incentives.progress_figure(threshold_type text, value numeric)
RETURNS numeric
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- dollars (aggregated_amount) show at least cents: 850 -> 850.00, while
    -- 0.001 stays 0.001 (padding only, never rounding a gap away)
    SELECT CASE WHEN $1 = 'aggregated_amount' AND scale($2) < 2 THEN round($2, 2) ELSE $2 END
$function$;
COMMENT ON FUNCTION incentives.progress_figure(text, numeric) IS
  'tier_progress helper: a threshold value or gap as shown, at least two decimal places for dollar thresholds (aggregated_amount), never rounded';

CREATE FUNCTION incentives.tier_progress(
    participant_key text     DEFAULT NULL,
    properties      jsonb    DEFAULT '{}',
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (
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
    earned_at_next       numeric)
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       d.diagnostics ->> 'threshold_type',
       d.diagnostics ->> 'property_key',
       incentives.progress_figure(d.diagnostics ->> 'threshold_type', (d.diagnostics ->> 'threshold_value')::numeric),
       d.diagnostics ->> 'selected_rate_key',
       cur.threshold,
       d.diagnostics ->> 'next_rate_key',
       (d.diagnostics ->> 'next_threshold')::numeric,
       incentives.progress_figure(d.diagnostics ->> 'threshold_type', (d.diagnostics ->> 'gap_to_next')::numeric),
       (d.diagnostics ->> 'earning_transactions')::integer,
       round(COALESCE(cur.incentive_amount, 0), 2),
       round(nxt.incentive_amount, 2)
  FROM incentives.incentive_diagnostics(tier_progress.participant_key,
                                        COALESCE(tier_progress.properties, '{}'),
                                        NULL,
                                        COALESCE(tier_progress.transactions, 'incentives.transactions')) AS d
  LEFT JOIN LATERAL (
        SELECT (t ->> 'threshold')::numeric AS threshold,
               (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'selected_rate_key'
         LIMIT 1) AS cur ON true
  LEFT JOIN LATERAL (
        SELECT (t ->> 'incentive_amount')::numeric AS incentive_amount
          FROM jsonb_array_elements(d.diagnostics -> 'tiers') AS t
         WHERE t ->> 'rate_key' = d.diagnostics ->> 'next_rate_key'
         LIMIT 1) AS nxt ON true
 WHERE d.strategy_key = 'stepped'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C"
$function$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, regclass) IS
  'Per participant and stepped offer its transactions touch: the threshold value, the current tier, the next tier and the gap to it, what the earning transactions pay now and would pay at the next tier';

CREATE FUNCTION incentives.stack_progress(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (
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
    shortfall       numeric)
LANGUAGE sql
STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp
AS $function$
SELECT d.participant_key,
       d.offer_key,
       st.s ->> 'rate_key',
       k.set_key,
       se.coverage_unit,
       round(se.coverage, 6),
       round((st.s ->> 'overlap')::numeric, 6),
       round((st.s -> 'factors' ->> k.set_key)::numeric, 6),
       (st.s ->> 'earns')::boolean,
       round(se.coverage - CASE WHEN (st.s ->> 'earns')::boolean
                                THEN (st.s ->> 'overlap')::numeric ELSE 0 END, 6),
       round(max(se.coverage) OVER (PARTITION BY d.participant_key, d.offer_key, st.n) - se.coverage, 6)
  FROM incentives.incentive_diagnostics(stack_progress.participant_key, '{}', NULL,
                                        COALESCE(stack_progress.transactions, 'incentives.transactions')) AS d
 CROSS JOIN LATERAL jsonb_array_elements(d.diagnostics -> 'stacks') WITH ORDINALITY AS st(s, n)
 CROSS JOIN LATERAL jsonb_array_elements_text(st.s -> 'sku_set_keys') WITH ORDINALITY AS k(set_key, m)
  LEFT JOIN LATERAL (
        SELECT x ->> 'coverage_unit' AS coverage_unit,
               (x ->> 'coverage')::numeric AS coverage
          FROM jsonb_array_elements(d.diagnostics -> 'sets') AS x
         WHERE x ->> 'key' = k.set_key
         LIMIT 1) AS se ON true
 WHERE d.strategy_key = 'stacked'
 ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C", st.n, k.m
$function$;
COMMENT ON FUNCTION incentives.stack_progress(text, regclass) IS
  'Per participant, stacked offer, stack and SKU set: the set''s coverage, the stack''s overlap and the set''s factor, the coverage that does not pay (uncovered) and how much more of this set would let every set of the stack pay in full (shortfall)';

RESET check_function_bodies;
------------------------------------------------------------------------
-- Data placement (issue 6): the functions a PL/Proxy coordinator calls on
-- every shard (docs/scaling.md).  They are ordinary functions of the
-- extension, so the same calls also work on a single node:
--
--   reference data, identical on every shard (the coordinator runs them
--   RUN ON ALL):   put_offer, delete_offer, put_sku, delete_sku,
--                  put_uom_conversion, delete_uom_conversion,
--                  put_participant_property, delete_participant_property
--   transactions, on the shard of hashtext(participant_key):
--                  put_transaction, delete_transaction, put_transactions,
--                  load_transactions
--   checks:        shard_summary (what incentives.cluster_check() compares)
--
-- Each put_* is an idempotent upsert that returns true when it inserted a
-- new row and false when it replaced one, so a change that failed on one
-- shard (PL/Proxy runs each shard's call in its own transaction) can simply
-- be applied again.  They run with the caller's rights (SECURITY INVOKER):
-- the caller needs INSERT/UPDATE/DELETE on the tables concerned.
------------------------------------------------------------------------

CREATE FUNCTION incentives.put_offer(document jsonb)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.offers AS o (document) VALUES (document)
    ON CONFLICT (offer_key) DO UPDATE SET document = EXCLUDED.document
    RETURNING o.xmax = 0
$$;
COMMENT ON FUNCTION incentives.put_offer(jsonb) IS
  'Inserts or replaces an offer (validated like any insert); true when the offer is new. Through a coordinator: on every shard';

CREATE FUNCTION incentives.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.offers o WHERE o.offer_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives.delete_offer(text) IS
  'Deletes an offer; true when it existed. Through a coordinator: on every shard';

CREATE FUNCTION incentives.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.skus AS s (sku_key, uom_key, label) VALUES ($1, $2, $3)
    ON CONFLICT (sku_key) DO UPDATE SET uom_key = EXCLUDED.uom_key, label = EXCLUDED.label
    RETURNING s.xmax = 0
$$;
COMMENT ON FUNCTION incentives.put_sku(text, text, text) IS
  'Inserts or replaces a SKU and its unit of measure; true when the SKU is new. Through a coordinator: on every shard';

CREATE FUNCTION incentives.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.skus s WHERE s.sku_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives.delete_sku(text) IS
  'Deletes a SKU; true when it existed. Through a coordinator: on every shard';

CREATE FUNCTION incentives.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.uom_conversions AS c (from_uom_key, to_uom_key, factor) VALUES ($1, $2, $3)
    ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
    RETURNING c.xmax = 0
$$;
COMMENT ON FUNCTION incentives.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion (quantity_in_to = quantity_in_from * factor); true when the pair is new. Through a coordinator: on every shard';

CREATE FUNCTION incentives.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.uom_conversions c
                WHERE c.from_uom_key = $1 AND c.to_uom_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion; true when it existed. Through a coordinator: on every shard';

CREATE FUNCTION incentives.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.participant_properties AS p (participant_key, property_key, value)
    VALUES ($1, $2, $3)
    ON CONFLICT (participant_key, property_key) DO UPDATE SET value = EXCLUDED.value
    RETURNING p.xmax = 0
$$;
COMMENT ON FUNCTION incentives.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property; true when it is new. Through a coordinator: on every shard';

CREATE FUNCTION incentives.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.participant_properties p
                WHERE p.participant_key = $1 AND p.property_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives.delete_participant_property(text, text) IS
  'Deletes a stored participant property; true when it existed. Through a coordinator: on every shard';

-- Transactions.  A transaction never changes participant through an
-- upsert: on a sharded deployment that would leave it on the wrong shard.
CREATE FUNCTION incentives.put_transactions(transactions jsonb[])
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n      bigint;
    bad_id text;
    bad_pk text;
    old_pk text;
BEGIN
    WITH changed AS (
        INSERT INTO incentives.transactions AS x
               (transaction_id, participant_key, transaction_type, transaction_date,
                sku_key, quantity, uom_key, amount)
        SELECT t ->> 'transaction_id', t ->> 'participant_key', t ->> 'transaction_type',
               (t ->> 'transaction_date')::date, t ->> 'sku_key', (t ->> 'quantity')::numeric,
               t ->> 'uom_key', (t ->> 'amount')::numeric
          FROM unnest(transactions) AS t
        ON CONFLICT (transaction_id) DO UPDATE
           SET transaction_type = EXCLUDED.transaction_type,
               transaction_date = EXCLUDED.transaction_date,
               sku_key = EXCLUDED.sku_key, quantity = EXCLUDED.quantity,
               uom_key = EXCLUDED.uom_key, amount = EXCLUDED.amount
         WHERE x.participant_key = EXCLUDED.participant_key
        RETURNING 1)
    SELECT count(*) INTO n FROM changed;

    IF n < cardinality(transactions) THEN
        SELECT t ->> 'transaction_id', t ->> 'participant_key', x.participant_key
          INTO bad_id, bad_pk, old_pk
          FROM unnest(transactions) AS t
          JOIN incentives.transactions x ON x.transaction_id = t ->> 'transaction_id'
         WHERE x.participant_key IS DISTINCT FROM t ->> 'participant_key'
         LIMIT 1;
        RAISE EXCEPTION 'transaction "%" belongs to participant "%", not "%"', bad_id, old_pk, bad_pk
              USING ERRCODE = 'unique_violation',
                    HINT = 'Delete it (incentives.delete_transaction) before storing it under another participant.';
    END IF;
    RETURN n;
END
$$;
COMMENT ON FUNCTION incentives.put_transactions(jsonb[]) IS
  'Inserts or replaces transactions given as JSON objects with the transaction columns; returns how many. Through a coordinator: each on the shard of its participant';

CREATE FUNCTION incentives.put_transaction(
    transaction_id   text,
    participant_key  text,
    transaction_type text,
    transaction_date date,
    sku_key          text,
    quantity         numeric,
    uom_key          text,
    amount           numeric)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    old_pk text;
    is_new boolean;
BEGIN
    INSERT INTO incentives.transactions AS x
           (transaction_id, participant_key, transaction_type, transaction_date,
            sku_key, quantity, uom_key, amount)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
    ON CONFLICT (transaction_id) DO UPDATE
       SET transaction_type = EXCLUDED.transaction_type,
           transaction_date = EXCLUDED.transaction_date,
           sku_key = EXCLUDED.sku_key, quantity = EXCLUDED.quantity,
           uom_key = EXCLUDED.uom_key, amount = EXCLUDED.amount
     WHERE x.participant_key = EXCLUDED.participant_key
    RETURNING x.xmax = 0 INTO is_new;
    IF NOT FOUND THEN
        SELECT x.participant_key INTO old_pk FROM incentives.transactions x WHERE x.transaction_id = $1;
        RAISE EXCEPTION 'transaction "%" belongs to participant "%", not "%"', $1, old_pk, $2
              USING ERRCODE = 'unique_violation',
                    HINT = 'Delete it (incentives.delete_transaction) before storing it under another participant.';
    END IF;
    RETURN is_new;
END
$$;
COMMENT ON FUNCTION incentives.put_transaction(text, text, text, date, text, numeric, text, numeric) IS
  'Inserts or replaces one transaction; true when it is new. Through a coordinator: on the shard of its participant';

CREATE FUNCTION incentives.delete_transaction(participant_key text, transaction_id text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.transactions x
                WHERE x.participant_key = $1 AND x.transaction_id = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives.delete_transaction(text, text) IS
  'Deletes one transaction of a participant; true when it existed. Through a coordinator: on the shard of the participant';

CREATE FUNCTION incentives.load_transactions(transactions jsonb)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives.put_transactions(ARRAY(SELECT jsonb_array_elements($1)))
$$;
COMMENT ON FUNCTION incentives.load_transactions(jsonb) IS
  'Inserts or replaces a JSON array of transactions (objects with the transaction columns); returns how many. Through a coordinator: each on the shard of its participant';

-- What incentives.cluster_check() on a coordinator compares across shards:
-- a digest of each reference table (they must be identical everywhere) and
-- the transactions that do not hash to this shard's partition.
CREATE FUNCTION incentives.shard_summary(partitions integer, partition integer)
RETURNS TABLE (object text, row_count bigint, digest text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT 'offers', count(*),
           md5(coalesce(string_agg(o.offer_key || ' ' || o.document::text, E'\n'
                                   ORDER BY o.offer_key COLLATE "C"), ''))
      FROM incentives.offers o
    UNION ALL
    SELECT 'skus', count(*),
           md5(coalesce(string_agg(format('%s %s %s', s.sku_key, s.uom_key, s.label), E'\n'
                                   ORDER BY s.sku_key COLLATE "C"), ''))
      FROM incentives.skus s
    UNION ALL
    SELECT 'uom_conversions', count(*),
           md5(coalesce(string_agg(format('%s %s %s', c.from_uom_key, c.to_uom_key, c.factor), E'\n'
                                   ORDER BY c.from_uom_key COLLATE "C", c.to_uom_key COLLATE "C"), ''))
      FROM incentives.uom_conversions c
    UNION ALL
    SELECT 'participant_properties', count(*),
           md5(coalesce(string_agg(format('%s %s %s', p.participant_key, p.property_key, p.value), E'\n'
                                   ORDER BY p.participant_key COLLATE "C", p.property_key COLLATE "C"), ''))
      FROM incentives.participant_properties p
    UNION ALL
    SELECT 'transactions', count(*), NULL FROM incentives.transactions
    UNION ALL
    SELECT 'misplaced_transactions',
           count(*) FILTER (WHERE (hashtext(t.participant_key) & ($1 - 1)) <> $2), NULL
      FROM incentives.transactions t
$$;
COMMENT ON FUNCTION incentives.shard_summary(integer, integer) IS
  'Row counts and digests of the reference tables, the transaction count, and how many transactions do not belong to this partition (hashtext(participant_key) & (partitions - 1) <> partition)';

-- incentives.refresh_earnings as a function, so that a coordinator can run
-- it on the shards (PL/Proxy calls functions, not procedures).  Called from
-- a function, the procedure cannot COMMIT: the refresh is one transaction
-- on each shard, and a failure leaves that shard's earnings and run log as
-- they were.
CREATE FUNCTION incentives.refresh_earnings_run(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    CALL incentives.refresh_earnings(refresh_earnings_run.participant_key,
                                     refresh_earnings_run.transactions,
                                     refresh_earnings_run.progress_every);
    RETURN QUERY
        SELECT r.run_id, r.participants, r.rows, r.total_incentive, r.status
          FROM incentives.calculation_runs AS r
         WHERE r.pid = pg_backend_pid()
         ORDER BY r.run_id DESC
         LIMIT 1;
END
$$;
COMMENT ON FUNCTION incentives.refresh_earnings_run(text, regclass, integer) IS
  'CALLs incentives.refresh_earnings in the caller''s transaction and returns its run (what a coordinator''s refresh_earnings runs on each shard)';
------------------------------------------------------------------------
-- Privileges: who may calculate, who may edit offers (issue 3, item 6)
--
-- Every function of the extension runs with the caller's rights (none is
-- SECURITY DEFINER), and the views are security_invoker: what a role may
-- calculate is exactly what it may read, and row-level security on the
-- transactions applies.  The extension creates no roles (role names are
-- the DBA's, cluster-wide, and must not be created by CREATE EXTENSION);
-- it leaves PUBLIC without access to the schema and its tables, so by
-- default only the owner (the superuser who installed it) can use it.
--
-- The model, as a DBA applies it after CREATE EXTENSION (and again for
-- objects added by an ALTER EXTENSION ... UPDATE):
--
--   -- incentives_reader: may calculate and read the reference data
--   CREATE ROLE incentives_reader NOLOGIN;
--   GRANT USAGE ON SCHEMA incentives TO incentives_reader;
--   GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO incentives_reader;
--   GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives TO incentives_reader;
--
--   -- incentives_admin: a reader who also edits offers and reference
--   -- data, loads transactions and refreshes the materialized earnings
--   CREATE ROLE incentives_admin NOLOGIN;
--   GRANT incentives_reader TO incentives_admin;
--   GRANT INSERT, UPDATE, DELETE
--      ON incentives.offers, incentives.skus, incentives.uom_conversions,
--         incentives.participant_properties, incentives.transactions,
--         incentives.earnings, incentives.calculation_runs
--      TO incentives_admin;
--   GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_admin;
--   GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA incentives TO incentives_admin;
--
--   -- people and services get one of the two
--   GRANT incentives_reader TO analyst_alice;
--   GRANT incentives_admin TO program_manager_bob;
--
-- Readers cannot change an offer: INSERT, UPDATE and DELETE on
-- incentives.offers fail with 42501 (and every write that is allowed still
-- goes through the validation trigger).  EXECUTE on the functions is also
-- PUBLIC's by PostgreSQL's default; that is harmless because a function can
-- read nothing its caller cannot, and the explicit GRANT keeps readers
-- working where a DBA revokes it from PUBLIC.
--
-- Which participants a reader sees is row-level security on the
-- transactions, e.g. one policy for all readers over a mapping table:
--
--   CREATE TABLE acl.participant_access (role_name name, participant_key text,
--                                        PRIMARY KEY (role_name, participant_key));
--   GRANT SELECT ON acl.participant_access TO incentives_reader;
--   ALTER TABLE incentives.transactions ENABLE ROW LEVEL SECURITY;
--   CREATE POLICY reader_participants ON incentives.transactions
--     FOR SELECT TO incentives_reader
--     USING (participant_key IN (SELECT a.participant_key FROM acl.participant_access a
--                                 WHERE a.role_name = current_user));
--
-- incentive_calculate then returns each reader only the earnings of its own
-- participants (test/pgtap/30_security.sql checks all of the above).  A
-- transactions relation the caller passes is read with the caller's rights
-- too, so a reader may calculate a what-if over a temp table of its own.
------------------------------------------------------------------------

-- Explicit secure defaults: nothing for PUBLIC on the schema and the
-- tables, even where the installing role has default privileges granting
-- PUBLIC access to new tables.
REVOKE ALL ON SCHEMA incentives FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA incentives FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA incentives FROM PUBLIC;
