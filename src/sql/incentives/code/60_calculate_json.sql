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
    v_as_of       timestamptz;
    v_through     date;
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

    -- as_of: optional timestamp (the offers as they were then)
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
      FROM incentives.incentive_calculate(v_participant, v_properties, v_offer_keys, v_relation,
                                          v_as_of, v_through) AS e;

    EXECUTE format('DROP TABLE %s', v_relation);
    RETURN v_result;
END
$function$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'What-if calculation: {participant_key, properties, offer_keys, transactions: [...], include_stored, as_of, through_date} with inline transactions returns {"potential_earnings": [earning rows as JSON objects]}, the numbers incentive_calculate gives on the same data; writes nothing permanent; a bad request raises 22023 naming the field';

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
