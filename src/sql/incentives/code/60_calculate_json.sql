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
    v_enrollments jsonb;
    v_as_of       timestamptz;
    v_through     date;
    v_rules       jsonb;
    v_result      jsonb;
    v_message     text;
    v_detail      text;
    v_hint        text;
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

    -- as_of: optional timestamp (the offers as they were then;
    -- docs/lifecycle.md)
    CASE COALESCE(jsonb_typeof(request -> 'as_of'), 'null')
        WHEN 'null' THEN v_as_of := NULL;
        WHEN 'string' THEN
            BEGIN
                v_as_of := (request ->> 'as_of')::timestamptz;
            EXCEPTION WHEN datetime_field_overflow OR invalid_datetime_format
                           OR invalid_time_zone_displacement_value OR invalid_parameter_value THEN
                RAISE EXCEPTION 'invalid request: as_of must be a timestamp, e.g. "2026-03-31 23:59:59+00"'
                      USING ERRCODE = 'invalid_parameter_value';
            END;
        ELSE RAISE EXCEPTION 'invalid request: as_of must be a timestamp, e.g. "2026-03-31 23:59:59+00"'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;

    -- through_date: optional date (only transactions dated on or before it)
    CASE COALESCE(jsonb_typeof(request -> 'through_date'), 'null')
        WHEN 'null' THEN v_through := NULL;
        WHEN 'string' THEN
            IF NOT incentives_internal.calculate_is_date(request ->> 'through_date') THEN
                RAISE EXCEPTION 'invalid request: through_date must be a date (YYYY-MM-DD)'
                      USING ERRCODE = 'invalid_parameter_value';
            END IF;
            v_through := (request ->> 'through_date')::date;
        ELSE RAISE EXCEPTION 'invalid request: through_date must be a date (YYYY-MM-DD)'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;

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
            -- every key names an offer (the calculation would refuse it
            -- too, but without the request's path)
            SELECT format('offer_keys[%s] names no offer ("%s")', k.n - 1, k.v) INTO v_problem
              FROM unnest(v_offer_keys) WITH ORDINALITY AS k(v, n)
             WHERE NOT EXISTS (SELECT FROM incentives.offers AS o
                                WHERE o.offer_key = k.v AND v_as_of IS NULL)
               AND NOT EXISTS (SELECT FROM incentives.offer_versions AS o
                                WHERE o.offer_key = k.v AND v_as_of IS NOT NULL
                                  AND o.valid_from <= v_as_of
                                  AND (o.valid_to IS NULL OR o.valid_to > v_as_of))
             ORDER BY k.n
             LIMIT 1;
            IF v_problem IS NOT NULL THEN
                RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
            END IF;
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
                        CASE WHEN NOT incentives_internal.calculate_is_date(t.v ->> 'transaction_date')
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

    -- enrollments: optional array of enrollment windows, added to the
    -- stored ones for this call (docs/reference.md, Enrollment): a what-if
    -- of a participant not enrolled yet.
    CASE COALESCE(jsonb_typeof(request -> 'enrollments'), 'null')
        WHEN 'null'  THEN v_enrollments := '[]';
        WHEN 'array' THEN v_enrollments := request -> 'enrollments';
        ELSE RAISE EXCEPTION 'invalid request: enrollments must be an array'
                   USING ERRCODE = 'invalid_parameter_value';
    END CASE;
    SELECT format('enrollments[%s]%s', w.n - 1, f.problem) INTO v_problem
      FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)
     CROSS JOIN LATERAL (
        SELECT x.problem
          FROM (VALUES
            (0, CASE WHEN jsonb_typeof(w.v) <> 'object' THEN ' must be a JSON object' END),
            (1, CASE WHEN jsonb_typeof(w.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(w.v -> 'participant_key'), 'null')
                      WHEN 'null' THEN CASE WHEN v_participant IS NULL
                                            THEN '.participant_key is required (the request has no participant_key)' END
                      WHEN 'string' THEN CASE WHEN v_participant IS NOT NULL
                                               AND w.v ->> 'participant_key' <> v_participant
                                              THEN '.participant_key must equal the request''s participant_key' END
                      ELSE '.participant_key must be a string' END END),
            (2, CASE WHEN jsonb_typeof(w.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(w.v -> 'offer_key'), 'null')
                      WHEN 'null' THEN '.offer_key is required'
                      WHEN 'string' THEN NULL
                      ELSE '.offer_key must be a string' END END),
            (3, CASE WHEN jsonb_typeof(w.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(w.v -> 'start_date'), 'null')
                      WHEN 'null' THEN '.start_date is required'
                      WHEN 'string' THEN
                        CASE WHEN NOT incentives_internal.calculate_is_date(w.v ->> 'start_date')
                             THEN '.start_date must be a date (YYYY-MM-DD)' END
                      ELSE '.start_date must be a date (YYYY-MM-DD)' END END),
            (4, CASE WHEN jsonb_typeof(w.v) = 'object' THEN
                  CASE COALESCE(jsonb_typeof(w.v -> 'end_date'), 'null')
                      WHEN 'null' THEN NULL
                      WHEN 'string' THEN
                        CASE WHEN NOT incentives_internal.calculate_is_date(w.v ->> 'end_date')
                             THEN '.end_date must be a date (YYYY-MM-DD)' END
                      ELSE '.end_date must be a date (YYYY-MM-DD)' END END),
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
     LIMIT 1;
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid request: %', v_problem USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- Two windows of one participant and offer in the request may not
    -- overlap (both ends inclusive, no end_date: open ended).
    SELECT format('enrollments[%s] overlaps enrollments[%s] (participant "%s", offer "%s")',
                  b.n - 1, a.n - 1, b.participant_key, b.offer_key) INTO v_problem
      FROM (SELECT w.n, COALESCE(w.v ->> 'participant_key', v_participant) AS participant_key,
                   w.v ->> 'offer_key' AS offer_key, (w.v ->> 'start_date')::date AS start_date,
                   COALESCE((w.v ->> 'end_date')::date, 'infinity') AS end_date
              FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)) AS a
      JOIN (SELECT w.n, COALESCE(w.v ->> 'participant_key', v_participant) AS participant_key,
                   w.v ->> 'offer_key' AS offer_key, (w.v ->> 'start_date')::date AS start_date,
                   COALESCE((w.v ->> 'end_date')::date, 'infinity') AS end_date
              FROM jsonb_array_elements(v_enrollments) WITH ORDINALITY AS w(v, n)) AS b
        ON b.n > a.n AND b.participant_key = a.participant_key AND b.offer_key = a.offer_key
       AND b.start_date <= a.end_date AND a.start_date <= b.end_date
     ORDER BY b.n, a.n
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
        IF v_detail <> '' AND v_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = v_message,
                                  DETAIL = v_detail, HINT = v_hint;
        ELSIF v_detail <> '' THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = v_message, DETAIL = v_detail;
        ELSIF v_hint <> '' THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = v_message, HINT = v_hint;
        ELSE
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value', MESSAGE = v_message;
        END IF;
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

CREATE FUNCTION incentives_internal.calculate_fault(
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
        amount           numeric NOT NULL
    ) ON COMMIT DROP;
    v_relation := to_regclass('pg_temp.incentives_request_probe');

    -- the properties alone (no transaction), then each property alone
    BEGIN
        PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, v_relation, $5, $6, $7);
    EXCEPTION WHEN data_exception THEN
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
  'Part of incentives.calculate (call that, not this): after its calculation failed on the data, the path of the request''s part at fault: properties.KEY, transactions[i] (the last of the shortest failing run from the first), or "the transactions" when they fail only with the stored ones';

CREATE FUNCTION incentives_internal.calculate_fails(
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
    EXECUTE format($sql$
        INSERT INTO %s
        SELECT t.v ->> 'transaction_id', COALESCE(t.v ->> 'participant_key', $2), t.v ->> 'transaction_type',
               (t.v ->> 'transaction_date')::date, t.v ->> 'sku_key', (t.v ->> 'quantity')::numeric,
               t.v ->> 'uom_key', (t.v ->> 'amount')::numeric
          FROM jsonb_array_elements($1) WITH ORDINALITY AS t(v, n)
         WHERE t.n <= $3$sql$, $6)
    USING $4, $1, $5;
    PERFORM count(*) FROM incentives_internal.calculate_request($1, $2, $3, $6, $7, $8, $9);
    RETURN false;
EXCEPTION WHEN data_exception THEN
    RETURN true;
END
$function$;
COMMENT ON FUNCTION incentives_internal.calculate_fails(text, jsonb, text[], jsonb, integer, regclass, jsonb, timestamptz, date) IS
  'Part of incentives_internal.calculate_fault: whether the calculation of the first first_n inline transactions of a request fails on the data (probe: the temporary table to fill)';

CREATE FUNCTION incentives_internal.calculate_is_date(value text)
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
COMMENT ON FUNCTION incentives_internal.calculate_is_date(text) IS
  'True when the text is an ISO date YYYY-MM-DD naming a real day (used to validate calculate() requests without raising)';
