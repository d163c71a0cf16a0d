-- The calculation and its diagnostics, each with the user's signature and
-- as calculate()'s variant (incentives_internal.<name>_request: the
-- request's own enrollment windows added, a jsonb array of
-- {participant_key, offer_key, start_date, end_date}).

-- The planner's row estimates of incentive_calculate and forecast
-- (docs/reference.md, Plans): from the size of the transactions relation,
-- its participants, the offers named and the earning rows per
-- transaction of the last refresh.
CREATE OR REPLACE FUNCTION incentives_internal.calculate_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'incentives_calculate_support'
LANGUAGE C STABLE STRICT
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_support(internal) IS
  'Planner support of incentives.incentive_calculate: its rows estimated from the transactions relation''s size (one participant''s share when participant_key is given), the earning rows per transaction of the last refresh and the share of offers named';

CREATE OR REPLACE FUNCTION incentives_internal.forecast_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'incentives_forecast_support'
LANGUAGE C STABLE STRICT
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.forecast_support(internal) IS
  'Planner support of incentives.forecast: a row per participant and offer, estimated from the transactions relation''s participants and the offers named, at most the calculation''s rows';

CREATE OR REPLACE FUNCTION incentives.incentive_calculate(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SUPPORT incentives_internal.calculate_support
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], regclass, timestamptz, date) IS
  'Earnings of one participant (or all when NULL) under the given offers (or all), reading transactions from any relation with the transaction columns; an offer aggregated by group computes a member''s rows over its group''s transactions (group_key names the group); as_of: with the offers as they were then (incentives.offer_versions); through_date: only transactions dated on or before it; runs with the caller''s rights';

CREATE OR REPLACE FUNCTION incentives.incentive_diagnostics(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    regclass    DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
AS 'MODULE_PATHNAME', 'incentives_incentive_diagnostics'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], regclass, timestamptz, date) IS
  'Why participants earn what they do, per participant and requested offer (touched by its transactions or not), as JSON: standard, each entry with its rates, matched transactions and what it paid; stepped, threshold value, every tier (met, what it would pay), next tier and gap, and for incremental tiers the bands and the blended rate; stacked, coverage per SKU set, overlap and factors per stack; and for an offer with program rules, "rules": the enrollment windows used, each requirement against its minimum, the amount before the limits and which applied; as_of and through_date as for incentive_calculate';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_calculate_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_request(text, jsonb, text[], regclass, jsonb, timestamptz, date) IS
  'calculate() helper: incentive_calculate with the request''s enrollment windows (a JSON array of {participant_key, offer_key, start_date, end_date}) added to the stored ones, and the request''s as_of and through_date';

CREATE OR REPLACE FUNCTION incentives_internal.diagnostics_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
AS 'MODULE_PATHNAME', 'incentives_diagnostics_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.diagnostics_request(text, jsonb, text[], regclass, jsonb, timestamptz, date) IS
  'calculate() helper: incentive_diagnostics with the request''s enrollment windows added to the stored ones, and the request''s as_of and through_date';

-- The calculation with the transaction's date after the earning row's
-- columns, then its group_key, product_key, grower_key, currency and
-- exchange_rate: what refresh_earnings
-- materializes, in the order of incentives.earnings (the same C function:
-- it fills the columns the result has, by name).
CREATE OR REPLACE FUNCTION incentives_internal.calculate_dated(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    as_of           timestamptz,
    through_date    date)
RETURNS TABLE (participant_key text, offer_key text, offer_calculator text, sku_key text,
               incentive_rate_key text, incentive_rate_measure text, incentive_rate_value numeric,
               offer_sku_pay_rate numeric, transaction_id text, provided_quantity numeric,
               provided_uom_key text, provided_amount numeric, incentivized_quantity numeric,
               incentivized_amount numeric, incentive_amount numeric,
               incentive_contribution_percent numeric, incentive_effective_rate numeric,
               transaction_date date, group_key text, product_key text, grower_key text,
               currency text, exchange_rate numeric)
AS 'MODULE_PATHNAME', 'incentives_incentive_calculate'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_dated(text, jsonb, text[], regclass, timestamptz, date) IS
  'incentive_calculate''s rows with each transaction''s date before the group_key, product_key, grower_key, currency and exchange_rate (what refresh_earnings writes into incentives.earnings)';

CREATE OR REPLACE FUNCTION incentives_internal.calculation_failure(OUT participant_key text, OUT transaction_id text)
AS 'MODULE_PATHNAME', 'incentives_calculation_failure'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculation_failure() IS
  'The participant and transaction the last failed calculation of this session was at (NULLs when it was at neither); read by refresh_earnings(on_error => ''skip'') after catching the error';

CREATE OR REPLACE FUNCTION incentives_internal.calculation_failure_clear()
RETURNS void
AS 'MODULE_PATHNAME', 'incentives_calculation_failure_clear'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculation_failure_clear() IS
  'Forgets where the last failed calculation of this session was, so that incentives_internal.calculation_failure() speaks of a failure after this call only; refresh_earnings calls it before its work';

CREATE OR REPLACE FUNCTION incentives_internal.transaction_control_allowed()
RETURNS boolean
AS 'MODULE_PATHNAME', 'incentives_transaction_control_allowed'
LANGUAGE C VOLATILE PARALLEL RESTRICTED
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.transaction_control_allowed() IS
  'True when the PL/pgSQL procedure evaluating it may COMMIT (CALLed outside a transaction block, no exception block open); how refresh_earnings and settle decide, whatever the language of the server''s messages';
