------------------------------------------------------------------------
-- The JSON entry point: a calculation request with inline transactions
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_participant text;
    v_properties  jsonb;
    v_keys        jsonb;
    v_offer_keys  text[];
    v_lines       jsonb;
    v_stored      boolean;
    v_problem     text;
    v_relation    regclass;
    v_enrollments jsonb;
    v_as_of       timestamptz;
    v_through     date;
    v_rules       jsonb;
    v_result      jsonb;
    v_message     text;
    v_detail      text;
    v_hint        text;
BEGIN
    PERFORM incentives_internal.request_refuse(
        CASE WHEN request IS NULL OR jsonb_typeof(request) <> 'object'
             THEN 'the request must be a JSON object' END);
    -- Only the fields a request defines, at its top level and in its
    -- enrollments (docs/reference.md, Strict offers); inline transactions
    -- may carry others (rows from other systems), which are ignored.
    PERFORM incentives_internal.request_unknown_fields(request);

    -- Each field in turn (the first fault is the one reported); absent or
    -- JSON null, a field takes its default.  as_of: the offers as they
    -- were then (docs/lifecycle.md); through_date: only transactions dated
    -- on or before it.
    v_participant := incentives_internal.request_field(request, 'participant_key', 'string') #>> '{}';
    v_properties  := COALESCE(incentives_internal.request_field(request, 'properties', 'object of numbers'), '{}');
    v_as_of       := incentives_internal.request_field(request, 'as_of', 'timestamp') #>> '{}';
    v_through     := incentives_internal.request_field(request, 'through_date', 'date') #>> '{}';
    v_keys        := incentives_internal.request_field(request, 'offer_keys', 'array of strings');
    IF v_keys IS NOT NULL THEN
        v_offer_keys := ARRAY(SELECT k.v FROM jsonb_array_elements_text(v_keys) WITH ORDINALITY AS k(v, n)
                               ORDER BY k.n);
    END IF;
    -- every key names an offer (the calculation would refuse it too, but
    -- without the request's path)
    PERFORM incentives_internal.request_refuse((
        SELECT format('offer_keys[%s] names no offer ("%s")', k.n - 1, k.v)
          FROM unnest(v_offer_keys) WITH ORDINALITY AS k(v, n)
         WHERE NOT EXISTS (SELECT FROM incentives.offers AS o
                            WHERE o.offer_key = k.v AND v_as_of IS NULL)
           AND NOT EXISTS (SELECT FROM incentives.offer_versions AS o
                            WHERE o.offer_key = k.v AND v_as_of IS NOT NULL
                              AND o.valid_from <= v_as_of
                              AND (o.valid_to IS NULL OR o.valid_to > v_as_of))
         ORDER BY k.n
         LIMIT 1));
    v_stored := COALESCE(incentives_internal.request_field(request, 'include_stored', 'boolean')::boolean, false);
    PERFORM incentives_internal.request_refuse(
        CASE WHEN v_stored AND v_participant IS NULL
             THEN 'participant_key is required when include_stored is true' END);

    -- Every field of every inline transaction, first fault first (0-based
    -- indexes, as in offer paths).  Dates: YYYY-MM-DD and a real day.
    v_lines := COALESCE(incentives_internal.request_field(request, 'transactions', 'array'), '[]');
    PERFORM incentives_internal.request_refuse((
        SELECT format('transactions[%s]%s', t.n - 1, f.problem)
          FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)
         CROSS JOIN LATERAL (
            SELECT x.problem
              FROM (VALUES
                (0, CASE WHEN jsonb_typeof(t.v) <> 'object' THEN ' must be a JSON object' END),
                (1, '.' || incentives_internal.request_field_problem(t.v, 'transaction_id', 'string', true)),
                (2, '.' || incentives_internal.request_participant_problem(t.v, v_participant)),
                (3, '.' || incentives_internal.request_field_problem(t.v, 'transaction_type', 'string', true)),
                (4, '.' || incentives_internal.request_field_problem(t.v, 'transaction_date', 'date', true)),
                (5, '.' || incentives_internal.request_field_problem(t.v, 'sku_key', 'string', true)),
                (6, '.' || incentives_internal.request_field_problem(t.v, 'quantity', 'number', true)),
                (7, '.' || incentives_internal.request_field_problem(t.v, 'uom_key', 'string', true)),
                (8, '.' || incentives_internal.request_field_problem(t.v, 'amount', 'number', true)),
                (9, '.' || incentives_internal.request_field_problem(t.v, 'grower_key', 'string', false)),
                (10, '.' || incentives_internal.request_field_problem(t.v, 'currency', 'string', false)),
                (11, '.' || incentives_internal.request_field_problem(t.v, 'original_transaction_id', 'string', false))
              ) AS x(k, problem)
             WHERE x.problem IS NOT NULL
             ORDER BY x.k
             LIMIT 1) AS f
         ORDER BY t.n
         LIMIT 1));
    -- A transaction_id at most once in the request.
    PERFORM incentives_internal.request_refuse((
        SELECT format('transactions[%s].transaction_id duplicates transactions[%s] ("%s")',
                      d.n - 1, d.first - 1, d.id)
          FROM (SELECT t.v ->> 'transaction_id' AS id, t.n,
                       min(t.n) OVER (PARTITION BY t.v ->> 'transaction_id') AS first
                  FROM jsonb_array_elements(v_lines) WITH ORDINALITY AS t(v, n)) AS d
         WHERE d.n <> d.first
         ORDER BY d.n
         LIMIT 1));

    -- enrollments: optional array of enrollment windows, added to the
    -- stored ones for this call (docs/reference.md, Enrollment): a what-if
    -- of a participant not enrolled yet.
    v_enrollments := COALESCE(incentives_internal.request_field(request, 'enrollments', 'array'), '[]');
    PERFORM incentives_internal.request_refuse((
        SELECT format('enrollments[%s]%s', w.n - 1, f.problem)
          FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)
         CROSS JOIN LATERAL (
            SELECT x.problem
              FROM (VALUES
                (0, CASE WHEN jsonb_typeof(w.v) <> 'object' THEN ' must be a JSON object' END),
                (1, '.' || incentives_internal.request_participant_problem(w.v, v_participant)),
                (2, '.' || incentives_internal.request_field_problem(w.v, 'offer_key', 'string', true)),
                (3, '.' || incentives_internal.request_field_problem(w.v, 'start_date', 'date', true)),
                (4, '.' || incentives_internal.request_field_problem(w.v, 'end_date', 'date')),
                (5, CASE WHEN jsonb_typeof(w.v) = 'object'
                          AND jsonb_typeof(w.v -> 'start_date') = 'string'
                          AND jsonb_typeof(w.v -> 'end_date') = 'string'
                          AND incentives_internal.calculate_is_date(w.v ->> 'start_date')
                          AND incentives_internal.calculate_is_date(w.v ->> 'end_date')
                          AND (w.v ->> 'end_date')::date < (w.v ->> 'start_date')::date
                         THEN '.end_date must not be before start_date' END)
              ) AS x(k, problem)
             WHERE x.problem IS NOT NULL
             ORDER BY x.k
             LIMIT 1) AS f
         ORDER BY w.n
         LIMIT 1));
    -- Two windows of one participant and offer in the request may not
    -- overlap (both ends inclusive, no end_date: open ended).
    PERFORM incentives_internal.request_refuse((
        WITH w AS (
            SELECT w.n, COALESCE(w.v ->> 'participant_key', v_participant) AS participant_key,
                   w.v ->> 'offer_key' AS offer_key, (w.v ->> 'start_date')::date AS start_date,
                   COALESCE((w.v ->> 'end_date')::date, 'infinity') AS end_date
              FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n))
        SELECT format('enrollments[%s] overlaps enrollments[%s] (participant "%s", offer "%s")',
                      b.n - 1, a.n - 1, b.participant_key, b.offer_key)
          FROM w AS a
          JOIN w AS b
            ON b.n > a.n AND b.participant_key = a.participant_key AND b.offer_key = a.offer_key
           AND b.start_date <= a.end_date AND a.start_date <= b.end_date
         ORDER BY b.n, a.n
         LIMIT 1));

    -- Each window names an offer (stored, or at as_of: the calculation
    -- reads no other), as a stored enrollment must (code/11_offer_keys.sql).
    PERFORM incentives_internal.request_refuse((
        SELECT format('enrollments[%s].offer_key names no offer ("%s")', w.n - 1, w.v ->> 'offer_key')
          FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)
         WHERE NOT EXISTS (SELECT FROM incentives.offers AS o
                            WHERE o.offer_key = w.v ->> 'offer_key' AND v_as_of IS NULL)
           AND NOT EXISTS (SELECT FROM incentives.offer_versions AS o
                            WHERE o.offer_key = w.v ->> 'offer_key' AND v_as_of IS NOT NULL
                              AND o.valid_from <= v_as_of
                              AND (o.valid_to IS NULL OR o.valid_to > v_as_of))
         ORDER BY w.n
         LIMIT 1));

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
        amount           numeric NOT NULL,
        grower_key       text,
        currency         text,
        original_transaction_id text
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_transactions');
    PERFORM incentives_internal.request_load(v_relation, v_lines, v_participant);

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
        PERFORM incentives_internal.request_refuse(v_problem);
        EXECUTE format($sql$
            INSERT INTO %s
            SELECT s.transaction_id, s.participant_key, s.transaction_type, s.transaction_date,
                   s.sku_key, s.quantity, s.uom_key, s.amount, s.grower_key, s.currency,
                   s.original_transaction_id
              FROM incentives.transactions AS s
             WHERE s.participant_key COLLATE "C" = $1$sql$, v_relation)   -- the participant index
        USING v_participant;
    END IF;

    BEGIN
        SELECT jsonb_build_object('potential_earnings',
                 COALESCE(jsonb_agg(to_jsonb(e)
                                    ORDER BY e.participant_key COLLATE "C", e.offer_key COLLATE "C",
                                             e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"),
                          '[]'::jsonb))
          INTO v_result
          FROM incentives_internal.calculate_request(v_participant, v_properties, v_offer_keys,
                                                     v_relation, v_enrollments, v_as_of, v_through) AS e;
        -- The program rules' state of the offers that have any (enrollment
        -- windows used, requirements against their minimums, limits), per
        -- participant, as the engine diagnosed them; only asked for when a
        -- requested offer has rules (incentives.programs, from the
        -- compiled offers).
        IF EXISTS (SELECT 1 FROM incentives.programs(v_as_of) AS p
                    WHERE (v_offer_keys IS NULL OR p.offer_key = ANY (v_offer_keys))
                      AND (p.enrollment = 'required' OR p.requirements <> '[]'::jsonb
                           OR p.limit_minimum IS NOT NULL OR p.limit_maximum IS NOT NULL)) THEN
            SELECT jsonb_agg(jsonb_build_object('participant_key', d.participant_key,
                                                'offer_key', d.offer_key) || (d.diagnostics -> 'rules')
                             ORDER BY d.participant_key COLLATE "C", d.offer_key COLLATE "C")
              INTO v_rules
              FROM incentives_internal.diagnostics_request(v_participant, v_properties, v_offer_keys,
                                                           v_relation, v_enrollments, v_as_of, v_through) AS d
             WHERE d.diagnostics ? 'rules';
        END IF;
    EXCEPTION WHEN data_exception THEN
        -- The data cannot be calculated (a number past the engine's range,
        -- a unit without conversion, ...): say where in the request.
        GET STACKED DIAGNOSTICS v_message = MESSAGE_TEXT, v_detail = PG_EXCEPTION_DETAIL,
                                v_hint = PG_EXCEPTION_HINT;
        v_problem := incentives_internal.calculate_fault(v_participant, v_properties, v_offer_keys, v_lines,
                                                         v_enrollments, v_as_of, v_through);
        v_message := format('invalid request: %s cannot be calculated: %s', v_problem, v_message);
        PERFORM incentives_internal.raise_error('22023', v_message, v_detail, v_hint);
    END;

    IF v_rules IS NOT NULL THEN
        v_result := v_result || jsonb_build_object('rules', v_rules);
    END IF;

    EXECUTE format('DROP TABLE %s', v_relation);
    RETURN v_result;
END
$function$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'What-if calculation: {participant_key, properties, offer_keys, transactions: [...], include_stored, enrollments: [...], as_of, through_date} with inline transactions (and enrollment windows added to the stored ones) returns {"potential_earnings": [earning rows as JSON objects]}, the numbers incentive_calculate gives on the same data, and "rules": the program rules'' state per participant and offer when an offer has any; writes nothing permanent; a bad request, or one whose data cannot be calculated, raises 22023 "invalid request: <path> ..." naming the field, transaction or property';

------------------------------------------------------------------------
-- The request's parts (helpers of incentives.calculate)
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.request_refuse(problem text)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    IF problem IS NOT NULL THEN
        PERFORM incentives_internal.raise_error('22023', format('invalid request: %s', problem), '', '');
    END IF;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_refuse(text) IS
  'calculate() helper: raises 22023 "invalid request: <problem>" unless problem is NULL';

CREATE OR REPLACE FUNCTION incentives_internal.request_unknown_fields(request jsonb)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT u.field AS path, u.problem, 0 AS n
          FROM incentives_internal.unknown_fields(request, 'request') AS u
        UNION ALL
        SELECT format('enrollments[%s].%s', e.n - 1, u.field), u.problem, e.n
          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(request -> 'enrollments') = 'array'
                                         THEN request -> 'enrollments' ELSE '[]' END)
               WITH ORDINALITY AS e(v, n)
         CROSS JOIN LATERAL incentives_internal.unknown_fields(e.v, 'request enrollments[]') AS u
         ORDER BY n
    LOOP
        IF COALESCE(current_setting('incentives.unknown_offer_fields', true), 'error') = 'warning' THEN
            RAISE WARNING 'request: % %', f.path, f.problem;
        ELSE
            PERFORM incentives_internal.request_refuse(f.path || ' ' || f.problem);
        END IF;
    END LOOP;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_unknown_fields(jsonb) IS
  'calculate() helper: a field of the request or of one of its enrollments that the request does not define is refused (22023, with the field meant), or a WARNING under incentives.unknown_offer_fields = ''warning''';

CREATE OR REPLACE FUNCTION incentives_internal.request_field_problem(
    object   jsonb,
    field    text,
    kind     text,
    required boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_value jsonb := NULLIF(object -> field, 'null');
BEGIN
    IF v_value IS NULL THEN
        RETURN CASE WHEN required THEN field || ' is required' END;
    END IF;
    CASE kind
    WHEN 'date' THEN              -- YYYY-MM-DD naming a real day, as the offer parser reads one
        IF jsonb_typeof(v_value) <> 'string' THEN
            RETURN field || ' must be a date (YYYY-MM-DD)';
        END IF;
        RETURN field || ' ' || incentives_internal.date_problem(v_value #>> '{}');
    WHEN 'timestamp' THEN
        BEGIN
            PERFORM (v_value #>> '{}')::timestamptz WHERE jsonb_typeof(v_value) = 'string';
        EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format
                       OR invalid_time_zone_displacement_value OR invalid_parameter_value THEN
            v_value := NULL;
        END;
        IF v_value IS NULL OR jsonb_typeof(v_value) <> 'string' THEN
            RETURN field || ' must be a timestamp, e.g. "2026-03-31 23:59:59+00"';
        END IF;
    WHEN 'array of strings' THEN
        IF jsonb_typeof(v_value) <> 'array' THEN
            RETURN field || ' must be an array of strings';
        END IF;
        RETURN (SELECT format('%s[%s] must be a string', field, k.n - 1)
                  FROM jsonb_array_elements(v_value) WITH ORDINALITY AS k(v, n)
                 WHERE jsonb_typeof(k.v) <> 'string'
                 ORDER BY k.n
                 LIMIT 1);
    WHEN 'object of numbers' THEN
        IF jsonb_typeof(v_value) <> 'object' THEN
            RETURN field || ' must be a JSON object';
        END IF;
        RETURN (SELECT format('%s.%s must be a number', field, p.key)
                  FROM jsonb_each(v_value) AS p
                 WHERE jsonb_typeof(p.value) <> 'number'
                 ORDER BY p.key COLLATE "C"
                 LIMIT 1);
    ELSE                          -- a JSON type: string, number, boolean, array, object
        IF jsonb_typeof(v_value) <> kind THEN
            RETURN field || ' must be ' || CASE kind WHEN 'array' THEN 'an array'
                                                     WHEN 'object' THEN 'a JSON object'
                                                     ELSE 'a ' || kind END;
        END IF;
    END CASE;
    RETURN NULL;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_field_problem(jsonb, text, text, boolean) IS
  'calculate() helper: what is wrong with a field of a JSON object ("<field> is required", "<field> must be ...", <field> "2026-02-30" is not a valid calendar date (...)), NULL when nothing is; absent and JSON null are the same; kind: a JSON type, date (YYYY-MM-DD naming a real day, as incentives_internal.date_problem), timestamp, array of strings or object of numbers';

CREATE OR REPLACE FUNCTION incentives_internal.request_field(request jsonb, field text, kind text)
RETURNS jsonb
LANGUAGE plpgsql
STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    PERFORM incentives_internal.request_refuse(incentives_internal.request_field_problem(request, field, kind));
    RETURN NULLIF(request -> field, 'null');
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_field(jsonb, text, text) IS
  'calculate() helper: an optional field of the request, NULL when absent or JSON null; raises 22023 "invalid request: <field> must be ..." when it is not of the kind (as incentives_internal.request_field_problem)';

CREATE OR REPLACE FUNCTION incentives_internal.request_participant_problem(item jsonb, participant_key text)
RETURNS text
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    SELECT CASE COALESCE(jsonb_typeof($1 -> 'participant_key'), 'null')
           WHEN 'null' THEN CASE WHEN $2 IS NULL
                                 THEN 'participant_key is required (the request has no participant_key)' END
           WHEN 'string' THEN CASE WHEN $2 IS NOT NULL AND $1 ->> 'participant_key' <> $2
                                   THEN 'participant_key must equal the request''s participant_key' END
           ELSE 'participant_key must be a string' END
$function$;
COMMENT ON FUNCTION incentives_internal.request_participant_problem(jsonb, text) IS
  'calculate() helper: what is wrong with the participant_key of an inline transaction or enrollment window (required when the request has none, else equal to the request''s), NULL when nothing is';

CREATE OR REPLACE FUNCTION incentives_internal.request_load(
    relation        regclass,
    transactions    jsonb,
    participant_key text,
    first_n         integer DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    EXECUTE format($sql$
        INSERT INTO %s
        SELECT t.v ->> 'transaction_id',
               COALESCE(t.v ->> 'participant_key', $2),
               t.v ->> 'transaction_type',
               (t.v ->> 'transaction_date')::date,
               t.v ->> 'sku_key',
               (t.v ->> 'quantity')::numeric,
               t.v ->> 'uom_key',
               (t.v ->> 'amount')::numeric,
               t.v ->> 'grower_key',
               t.v ->> 'currency',
               t.v ->> 'original_transaction_id'
          FROM jsonb_array_elements($1) WITH ORDINALITY AS t(v, n)
         WHERE $3 IS NULL OR t.n <= $3$sql$, relation)
    USING transactions, participant_key, first_n;
END
$function$;
COMMENT ON FUNCTION incentives_internal.request_load(regclass, jsonb, text, integer) IS
  'calculate() helper: inserts a request''s inline transactions (the first first_n, or all when NULL; participant_key when one has none) into a table with the transaction columns and the optional grower_key, currency and original_transaction_id';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_fault(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    jsonb,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
DECLARE
    v_key      text;
    v_n        integer;
    v_low      integer;
    v_high     integer;
    v_relation regclass;
BEGIN
    -- Called by incentives.calculate after its calculation failed on the
    -- data; each probe below is that calculation on part of the request.
    CREATE TEMPORARY TABLE incentives_request_probe (
        transaction_id   text NOT NULL,
        participant_key  text NOT NULL,
        transaction_type text NOT NULL,
        transaction_date date NOT NULL,
        sku_key          text NOT NULL,
        quantity         numeric NOT NULL,
        uom_key          text NOT NULL,
        amount           numeric NOT NULL,
        grower_key       text,
        currency         text,
        original_transaction_id text
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_probe');

    -- the properties alone (no transaction), then each property alone
    BEGIN
        PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, v_relation, $5, $6, $7);
    EXCEPTION WHEN data_exception THEN
        -- without any property too: the stored data (a unit conversion
        -- factor stored before 0.4.0 out of the engine's range, say)
        BEGIN
            PERFORM count(*) FROM incentives_internal.calculate_request($1, '{}', $3, v_relation, $5, $6, $7);
        EXCEPTION WHEN data_exception THEN
            RETURN 'the stored data';
        END;
        FOR v_key IN SELECT p.key FROM jsonb_each($2) AS p ORDER BY p.key COLLATE "C" LOOP
            BEGIN
                PERFORM count(*) FROM incentives_internal.calculate_request($1, jsonb_build_object(v_key, $2 -> v_key),
                                                                            $3, v_relation, $5, $6, $7);
            EXCEPTION WHEN data_exception THEN
                RETURN format('properties.%s', v_key);
            END;
        END LOOP;
        RETURN 'properties';
    END;

    -- The shortest run of inline transactions, from the first, whose
    -- calculation fails: its last one is at fault (alone, or as the one
    -- that tips a sum over).  Binary search: log2(n) + 1 probes.
    v_low := 0;                          -- no transaction: calculates
    v_high := jsonb_array_length($4);
    IF NOT incentives_internal.calculate_fails($1, $2, $3, $4, v_high, v_relation, $5, $6, $7) THEN
        RETURN 'the transactions';       -- only with the stored ones
    END IF;
    WHILE v_high - v_low > 1 LOOP
        v_n := (v_low + v_high) / 2;
        IF incentives_internal.calculate_fails($1, $2, $3, $4, v_n, v_relation, $5, $6, $7) THEN
            v_high := v_n;
        ELSE
            v_low := v_n;
        END IF;
    END LOOP;
    RETURN format('transactions[%s]', v_high - 1);
END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_fault(text, jsonb, text[], jsonb, jsonb, timestamptz, date) IS
  'Part of incentives.calculate (call that, not this): after its calculation failed on the data, the path of the request''s part at fault: properties.KEY, transactions[i] (the last of the shortest failing run from the first), "the transactions" when they fail only with the stored ones, or "the stored data" when a calculation without the request''s properties and transactions fails too';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_fails(
    participant_key text,
    properties      jsonb,
    offer_keys      text[],
    transactions    jsonb,
    first_n         integer,
    probe           regclass,
    enrollments     jsonb,
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $function$
BEGIN
    -- Part of incentives_internal.calculate_fault: does the calculation of
    -- the request's first first_n inline transactions fail on the data?
    EXECUTE format('TRUNCATE %s', $6);
    PERFORM incentives_internal.request_load($6, $4, $1, $5);
    PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, $6, $7, $8, $9);
    RETURN false;
EXCEPTION WHEN data_exception THEN
    RETURN true;
END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_fails(text, jsonb, text[], jsonb, integer, regclass, jsonb, timestamptz, date) IS
  'Part of incentives_internal.calculate_fault: whether the calculation of the first first_n inline transactions of a request fails on the data (probe: the temporary table to fill)';

CREATE OR REPLACE FUNCTION incentives_internal.calculate_is_date(value text)
RETURNS boolean
LANGUAGE sql
IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $function$
    -- YYYY-MM-DD naming a real day (year 1 to 9999), without raising: the
    -- offer parser's rule
    SELECT incentives_internal.date_problem($1) IS NULL
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_is_date(text) IS
  'True when the text is an ISO date YYYY-MM-DD naming a real day (used to validate calculate() requests without raising)';
