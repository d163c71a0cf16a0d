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
  'Why participants earn what they do, per participant and requested offer (touched by its transactions or not), as JSON: standard, each entry with its rates, matched transactions and what it paid; stepped, threshold value, every tier (met, what it would pay), next tier and gap, and for incremental tiers the bands and the blended rate; stacked, coverage per SKU set, overlap and factors per stack; and for an offer with program rules, "rules": the enrollment windows used, each requirement against its minimum, the amount before the limits and which applied';


-- The what-if entry point's variants (incentives.calculate): the same
-- calculation with the request's own enrollment windows added, a jsonb
-- array of {participant_key, offer_key, start_date, end_date}.
CREATE FUNCTION incentives_internal.calculate_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb)
RETURNS SETOF incentives.earning
AS 'MODULE_PATHNAME', 'incentives_calculate_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 1000
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.calculate_request(text, jsonb, text[], regclass, jsonb) IS
  'calculate() helper: incentive_calculate with the request''s enrollment windows (a JSON array of {participant_key, offer_key, start_date, end_date}) added to the stored ones';

CREATE FUNCTION incentives_internal.diagnostics_request(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    regclass,
    enrollments     jsonb)
RETURNS TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)
AS 'MODULE_PATHNAME', 'incentives_diagnostics_request'
LANGUAGE C STABLE PARALLEL RESTRICTED
ROWS 100
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION incentives_internal.diagnostics_request(text, jsonb, text[], regclass, jsonb) IS
  'calculate() helper: incentive_diagnostics with the request''s enrollment windows added to the stored ones';
