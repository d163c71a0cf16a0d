-- test/ops/json_fuzz.sql: incentives.calculate(jsonb) under random and
-- mutated requests (make check-json-fuzz): the contract of the JSON entry
-- point, docs/analyst-guide.md (What-if requests) and docs/reference.md
-- (Bad input).
--
--   psql -X -v ON_ERROR_STOP=1 -v seed=1 -v requests=3000 -f test/ops/json_fuzz.sql
--
-- Needs the extension and a data set (test/ops/dataset.psql).  Seeded
-- (setseed): the same seed and count give the same requests.  Each
-- iteration builds a request from random rows (participants, SKUs, units,
-- dates, numbers of every size and scale, properties, offer keys,
-- include_stored, unknown extra fields), then often breaks it in one way
-- (a field missing, null, of the wrong JSON type, an invalid date, a
-- duplicate or foreign id, an unknown offer, a number out of the engine's
-- range, a unit without conversion, ...) or corrupts its text.  It asserts:
--   * a request that is accepted returns exactly {"potential_earnings":
--     [...]} and the rows equal incentive_calculate over the same
--     transactions (inline, plus the stored ones with include_stored),
--     same properties and offers, in the documented order;
--   * a request that is refused raises SQLSTATE 22023 with a message
--     "invalid request: <path> ..." naming the field path the break was
--     made at (or, for a calculation that fails on the data, the path of
--     the transaction or property at fault);
--   * text that is not JSON is refused by the jsonb input (22P02) before
--     the function is called;
--   * the server stays up (one session throughout: a crash ends it).
-- It prints the counts and fails (ERROR) on any other outcome, listing the
-- first requests that broke a rule.
\set ON_ERROR_STOP 1
\if :{?seed}
\else
\set seed 1
\endif
\if :{?requests}
\else
\set requests 3000
\endif
SET client_min_messages = warning;

SELECT setseed(((:seed::bigint % 2000000) - 1000000) / 1000000.0) \gset

SET client_min_messages = warning;
\set QUIET on
CREATE TEMP TABLE fz_skus AS
SELECT s.sku_key, s.uom_key, row_number() OVER (ORDER BY s.sku_key COLLATE "C") AS n
  FROM incentives.skus AS s;
CREATE TEMP TABLE fz_offers AS
SELECT o.offer_key, row_number() OVER (ORDER BY o.offer_key COLLATE "C") AS n FROM incentives.offers AS o;
CREATE TEMP TABLE fz_participants AS
SELECT p.participant_key, row_number() OVER (ORDER BY p.participant_key COLLATE "C") AS n
  FROM (SELECT DISTINCT participant_key FROM incentives.transactions) AS p;
-- the oracle's transactions, and what went wrong
CREATE TEMP TABLE fz_txn (LIKE incentives.transactions);
CREATE TEMP TABLE fz_failures (iteration integer, rule text, sqlstate text, message text, request text);
CREATE TEMP TABLE fz_counts (outcome text PRIMARY KEY, n bigint);

CREATE FUNCTION pg_temp.fz_int(lo integer, hi integer) RETURNS integer
LANGUAGE sql VOLATILE AS $$ SELECT lo + floor(random() * (hi - lo + 1))::integer $$;
CREATE FUNCTION pg_temp.fz_chance(p float8) RETURNS boolean
LANGUAGE sql VOLATILE AS $$ SELECT random() < p $$;

-- a number of every size and scale, as JSON (numeric keeps its scale)
CREATE FUNCTION pg_temp.fz_number(allow_extreme boolean) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    k integer := pg_temp.fz_int(0, 99);
    v numeric;
BEGIN
    IF k < 60 THEN
        v := round((random() * 200 - 20)::numeric, pg_temp.fz_int(0, 4));
    ELSIF k < 70 THEN
        v := 0;
    ELSIF k < 80 THEN
        v := round((random() * 1e6)::numeric, pg_temp.fz_int(0, 2));
    ELSIF k < 90 THEN
        v := round((random())::numeric, pg_temp.fz_int(5, 20));
    ELSIF allow_extreme AND k < 95 THEN   -- past the engine's 38 digits
        v := ('1e' || pg_temp.fz_int(30, 60))::numeric * (CASE WHEN random() < 0.5 THEN -1 ELSE 1 END);
    ELSIF allow_extreme THEN              -- past its 38 decimal places
        v := ('1e-' || pg_temp.fz_int(30, 60))::numeric;
    ELSE
        v := pg_temp.fz_int(-5, 5);
    END IF;
    RETURN to_jsonb(v);
END
$$;

-- any JSON value of a type other than the one named
CREATE FUNCTION pg_temp.fz_wrong(not_type text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    candidates jsonb[] := ARRAY['"text"', '12.5', 'true', 'false', '{}', '[]', '{"a": [1]}', '["x"]', '-0', '""']::jsonb[];
    v jsonb;
BEGIN
    LOOP
        v := candidates[pg_temp.fz_int(1, array_length(candidates, 1))];
        EXIT WHEN jsonb_typeof(v) <> not_type;
    END LOOP;
    RETURN v;
END
$$;

-- One iteration: build, maybe break, call, compare.  Returns the outcome.
CREATE FUNCTION pg_temp.fz_one(iteration integer) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_participant text;
    v_properties  jsonb := NULL;
    v_offer_keys  text[] := NULL;
    v_stored      boolean := false;
    v_lines       jsonb := '[]';
    v_line        jsonb;
    v_request     jsonb;
    v_text        text;
    v_expect_path text := NULL;   -- set: the request must be refused naming it
    v_valid       boolean := true;
    v_mutation    integer;
    v_fields      text[] := ARRAY['transaction_id', 'participant_key', 'transaction_type', 'transaction_date',
                                  'sku_key', 'quantity', 'uom_key', 'amount'];
    v_field       text;
    v_j           integer;
    v_n           integer;
    v_sku         record;
    v_uom         text;
    v_result      jsonb;
    v_oracle      jsonb;
    v_oracle_fail text := NULL;
    v_loose       boolean := false;   -- text corrupted into other JSON
    v_state       text;
    v_message     text;
    i             integer;
BEGIN
    -- ---- a valid request -------------------------------------------------
    IF pg_temp.fz_chance(0.8) THEN
        SELECT p.participant_key INTO v_participant FROM fz_participants AS p
         ORDER BY p.n OFFSET pg_temp.fz_int(0, (SELECT count(*)::integer - 1 FROM fz_participants)) LIMIT 1;
        v_stored := pg_temp.fz_chance(0.25);
    END IF;
    IF pg_temp.fz_chance(0.3) THEN
        v_properties := jsonb_build_object('business_plan_achieved', pg_temp.fz_number(false),
                                           'growth_pct', pg_temp.fz_number(false));
    END IF;
    IF pg_temp.fz_chance(0.2) THEN
        v_n := (SELECT count(*)::integer FROM fz_offers);
        SELECT array_agg(o.offer_key ORDER BY o.n) INTO v_offer_keys FROM fz_offers AS o
         WHERE o.n IN (SELECT pg_temp.fz_int(1, v_n) FROM generate_series(1, pg_temp.fz_int(1, 3)));
    END IF;
    v_n := pg_temp.fz_int(0, 6);
    FOR i IN 1 .. v_n LOOP
        SELECT * INTO v_sku FROM fz_skus AS s
         ORDER BY s.n OFFSET pg_temp.fz_int(0, (SELECT count(*)::integer - 1 FROM fz_skus)) LIMIT 1;
        v_uom := CASE v_sku.uom_key
                   WHEN 'gal' THEN (ARRAY['gal', 'gal', 'qt', 'l', 'pt'])[pg_temp.fz_int(1, 5)]
                   WHEN 'lb' THEN (ARRAY['lb', 'lb', 'oz', 'kg'])[pg_temp.fz_int(1, 4)]
                   ELSE v_sku.uom_key END;
        v_line := jsonb_build_object(
            'transaction_id', format('fz-%s-%s', iteration, i),
            'transaction_type', (ARRAY['retailer_purchases_from_distribution', 'retailer_sales_to_growers',
                                       'retailer_purchases_from_distribution', 'other'])[pg_temp.fz_int(1, 4)],
            'transaction_date', to_char(DATE '2025-08-01' + pg_temp.fz_int(0, 456), 'YYYY-MM-DD'),
            'sku_key', CASE WHEN pg_temp.fz_chance(0.05) THEN 'fz_unknown_sku' ELSE v_sku.sku_key END,
            'quantity', pg_temp.fz_number(false),
            'uom_key', v_uom,
            'amount', pg_temp.fz_number(false));
        IF v_participant IS NULL OR pg_temp.fz_chance(0.3) THEN
            v_line := v_line || jsonb_build_object('participant_key',
                COALESCE(v_participant, (SELECT p.participant_key FROM fz_participants AS p
                                          ORDER BY p.n OFFSET pg_temp.fz_int(0, 2) LIMIT 1)));
        END IF;
        IF pg_temp.fz_chance(0.1) THEN
            v_line := v_line || '{"note": "an unknown field is ignored", "batch": [1, 2]}';
        END IF;
        v_lines := v_lines || jsonb_build_array(v_line);
    END LOOP;
    v_request := jsonb_build_object('transactions', v_lines);
    IF v_participant IS NOT NULL THEN
        v_request := v_request || jsonb_build_object('participant_key', v_participant);
    END IF;
    IF v_properties IS NOT NULL THEN
        v_request := v_request || jsonb_build_object('properties', v_properties);
    END IF;
    IF v_offer_keys IS NOT NULL THEN
        v_request := v_request || jsonb_build_object('offer_keys', to_jsonb(v_offer_keys));
    END IF;
    IF v_stored OR pg_temp.fz_chance(0.1) THEN
        v_request := v_request || jsonb_build_object('include_stored', v_stored);
    END IF;

    -- ---- break it in one way (60%) ----------------------------------------
    IF pg_temp.fz_chance(0.6) THEN
        v_valid := false;
        v_mutation := pg_temp.fz_int(1, 17);
        IF v_mutation >= 8 AND jsonb_array_length(v_lines) = 0 THEN
            v_mutation := pg_temp.fz_int(1, 7);
        END IF;
        v_j := CASE WHEN jsonb_array_length(v_lines) > 0
                    THEN pg_temp.fz_int(0, jsonb_array_length(v_lines) - 1) END;
        CASE v_mutation
        WHEN 1 THEN
            v_request := pg_temp.fz_wrong('object');
            v_expect_path := 'the request';
        WHEN 2 THEN
            v_request := jsonb_set(v_request, '{participant_key}', pg_temp.fz_wrong('string'));
            v_expect_path := 'participant_key';
        WHEN 3 THEN
            v_request := jsonb_set(v_request, '{properties}', pg_temp.fz_wrong('object'));
            v_expect_path := 'properties';
        WHEN 4 THEN
            v_request := jsonb_set(v_request, '{properties}',
                           COALESCE(v_request -> 'properties', '{}') || jsonb_build_object('fz key', pg_temp.fz_wrong('number')));
            v_expect_path := 'properties.fz key';
        WHEN 5 THEN
            IF pg_temp.fz_chance(0.5) THEN
                v_request := jsonb_set(v_request, '{offer_keys}', pg_temp.fz_wrong('array'));
                v_expect_path := 'offer_keys';
            ELSE
                v_request := jsonb_set(v_request, '{offer_keys}',
                               COALESCE(v_request -> 'offer_keys', '[]') || jsonb_build_array(pg_temp.fz_wrong('string')));
                v_expect_path := format('offer_keys[%s]', jsonb_array_length(v_request -> 'offer_keys') - 1);
            END IF;
        WHEN 6 THEN
            v_request := jsonb_set(v_request, '{offer_keys}',
                           COALESCE(v_request -> 'offer_keys', '[]') || '["fz.no.such.offer"]');
            v_expect_path := format('offer_keys[%s]', jsonb_array_length(v_request -> 'offer_keys') - 1);
        WHEN 7 THEN
            IF v_participant IS NULL THEN
                v_request := v_request || '{"include_stored": true}';
                v_expect_path := 'participant_key';
            ELSE
                v_request := jsonb_set(v_request, '{include_stored}', pg_temp.fz_wrong('boolean'));
                v_expect_path := 'include_stored';
            END IF;
        WHEN 8 THEN
            v_request := jsonb_set(v_request, '{transactions}', pg_temp.fz_wrong('array'));
            v_expect_path := 'transactions';
        WHEN 9 THEN
            v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text], pg_temp.fz_wrong('object'));
            v_expect_path := format('transactions[%s]', v_j);
        WHEN 10, 11 THEN   -- a field missing, null or of the wrong type
            v_field := v_fields[pg_temp.fz_int(1, 8)];
            IF v_field = 'participant_key' AND v_participant IS NOT NULL AND v_mutation = 10 THEN
                v_field := 'amount';
            END IF;
            IF v_mutation = 10 THEN
                v_request := v_request #- ARRAY['transactions', v_j::text, v_field];
                IF pg_temp.fz_chance(0.5) THEN
                    v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, v_field], 'null');
                END IF;
            ELSE
                v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, v_field],
                               pg_temp.fz_wrong(CASE WHEN v_field IN ('quantity', 'amount') THEN 'number' ELSE 'string' END));
            END IF;
            v_expect_path := format('transactions[%s].%s', v_j, v_field);
        WHEN 12 THEN
            v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, 'transaction_date'],
                           to_jsonb((ARRAY['2026-02-30', '2026-13-01', '2026-00-10', '20260101', '2026-1-5', ' 2026-01-05',
                                           '2026-01-05T00:00:00', '', 'yesterday', '0000-01-01', '2025-02-29'])[pg_temp.fz_int(1, 11)]));
            v_expect_path := format('transactions[%s].transaction_date', v_j);
        WHEN 13 THEN
            IF jsonb_array_length(v_lines) < 2 THEN
                v_request := jsonb_set(v_request, '{transactions}', v_lines || jsonb_build_array(v_lines -> 0));
                v_j := jsonb_array_length(v_lines);
            ELSE
                v_j := pg_temp.fz_int(1, jsonb_array_length(v_lines) - 1);
                v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, 'transaction_id'],
                                       v_lines -> 0 -> 'transaction_id');
            END IF;
            v_expect_path := format('transactions[%s].transaction_id', v_j);
        WHEN 14 THEN
            IF v_participant IS NOT NULL THEN
                v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, 'participant_key'], '"fz_someone_else"');
                v_expect_path := format('transactions[%s].participant_key', v_j);
            ELSE
                v_request := v_request #- ARRAY['transactions', v_j::text, 'participant_key'];
                v_expect_path := format('transactions[%s].participant_key', v_j);
            END IF;
        WHEN 15 THEN       -- a number past the engine's range: the calculation decides
            v_field := (ARRAY['quantity', 'amount'])[pg_temp.fz_int(1, 2)];
            v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, v_field], pg_temp.fz_number(true));
            v_valid := true;   -- the oracle says whether it is refused
        WHEN 16 THEN       -- a unit without conversion: the calculation decides
            v_request := jsonb_set(v_request, ARRAY['transactions', v_j::text, 'uom_key'], '"drum"');
            v_valid := true;
        WHEN 17 THEN       -- an inline id that is a stored transaction of the participant
            IF v_participant IS NOT NULL
               AND EXISTS (SELECT FROM incentives.transactions AS s WHERE s.participant_key = v_participant) THEN
                v_request := jsonb_set(v_request || '{"include_stored": true}',
                                       ARRAY['transactions', v_j::text, 'transaction_id'],
                                       to_jsonb((SELECT min(s.transaction_id) FROM incentives.transactions AS s
                                                  WHERE s.participant_key = v_participant)));
                v_expect_path := format('transactions[%s].transaction_id', v_j);
            ELSE
                v_valid := true;
            END IF;
        END CASE;
    END IF;

    -- ---- or corrupt its text (10%) ------------------------------------------
    v_text := v_request::text;
    IF pg_temp.fz_chance(0.1) THEN
        i := pg_temp.fz_int(1, length(v_text));
        v_text := CASE pg_temp.fz_int(1, 4)
                    WHEN 1 THEN left(v_text, i - 1)
                    WHEN 2 THEN overlay(v_text placing (ARRAY['{', '}', '[', ']', ',', ':', '"', '\'])[pg_temp.fz_int(1, 8)] from i for 0)
                    WHEN 3 THEN overlay(v_text placing '' from i for 1)
                    ELSE v_text || (ARRAY[' x', ',', '}', ' {}'])[pg_temp.fz_int(1, 4)] END;
        BEGIN
            v_request := v_text::jsonb;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
            IF v_state = '22P02' THEN
                RETURN 'refused: not JSON (22P02)';
            END IF;
            INSERT INTO fz_failures VALUES (iteration, 'text that is not JSON is refused with 22P02', v_state, v_message, v_text);
            RETURN 'FAILED';
        END;
        -- still JSON: whatever it says now, the generic rules below apply
        v_valid := true;
        v_expect_path := NULL;
        v_loose := true;
    END IF;

    -- ---- the oracle: incentive_calculate over the same transactions ---------
    IF v_valid THEN
        BEGIN
            TRUNCATE fz_txn;
            INSERT INTO fz_txn
            SELECT t ->> 'transaction_id', COALESCE(t ->> 'participant_key', v_request ->> 'participant_key'),
                   t ->> 'transaction_type', (t ->> 'transaction_date')::date, t ->> 'sku_key',
                   (t ->> 'quantity')::numeric, t ->> 'uom_key', (t ->> 'amount')::numeric
              FROM jsonb_array_elements(v_request -> 'transactions') AS t;
            IF (v_request -> 'include_stored') = 'true' THEN
                INSERT INTO fz_txn SELECT * FROM incentives.transactions AS s
                 WHERE s.participant_key = v_request ->> 'participant_key';
            END IF;
            SELECT COALESCE(jsonb_agg(to_jsonb(e) ORDER BY e.participant_key COLLATE "C", e.offer_key COLLATE "C",
                                                  e.incentive_rate_key COLLATE "C", e.transaction_id COLLATE "C"), '[]')
              INTO v_oracle
              FROM incentives.incentive_calculate(v_request ->> 'participant_key',
                                                  COALESCE(v_request -> 'properties', '{}'),
                                                  (SELECT array_agg(k) FROM jsonb_array_elements_text(v_request -> 'offer_keys') AS k),
                                                  'pg_temp.fz_txn') AS e;
        EXCEPTION WHEN OTHERS THEN   -- the oracle refuses it: so must calculate()
            GET STACKED DIAGNOSTICS v_oracle_fail = MESSAGE_TEXT;
        END;
    END IF;

    -- ---- the call ----------------------------------------------------------
    BEGIN
        v_result := incentives.calculate(v_request);
    EXCEPTION WHEN OTHERS THEN
        GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT;
        IF v_state <> '22023' THEN
            INSERT INTO fz_failures VALUES (iteration, 'a refusal has SQLSTATE 22023', v_state, v_message, v_request::text);
            RETURN 'FAILED';
        ELSIF v_message NOT LIKE 'invalid request: %' THEN
            INSERT INTO fz_failures VALUES (iteration, 'a refusal says "invalid request: <path> ..."', v_state, v_message, v_request::text);
            RETURN 'FAILED';
        ELSIF v_expect_path IS NOT NULL AND position(v_expect_path IN v_message) = 0 THEN
            INSERT INTO fz_failures VALUES (iteration, 'a refusal names the path ' || v_expect_path, v_state, v_message, v_request::text);
            RETURN 'FAILED';
        ELSIF v_loose THEN
            RETURN 'refused: corrupted text';
        ELSIF v_expect_path IS NULL AND v_oracle_fail IS NULL THEN
            INSERT INTO fz_failures VALUES (iteration, 'a request incentive_calculate calculates is accepted', v_state, v_message, v_request::text);
            RETURN 'FAILED';
        ELSIF v_expect_path IS NULL AND v_message !~ '^invalid request: (transactions\[[0-9]+\]|properties\.|the transactions)' THEN
            INSERT INTO fz_failures VALUES (iteration, 'a calculation failure names the transaction or property at fault', v_state, v_message, v_request::text);
            RETURN 'FAILED';
        END IF;
        RETURN CASE WHEN v_expect_path IS NOT NULL THEN 'refused: ' || regexp_replace(v_expect_path, '\[[0-9]+\]', '[i]', 'g')
                    ELSE 'refused: the calculation failed on the data' END;
    END;
    IF v_expect_path IS NOT NULL THEN
        INSERT INTO fz_failures VALUES (iteration, 'a broken request is refused (at ' || v_expect_path || ')', NULL, left(v_result::text, 200), v_request::text);
        RETURN 'FAILED';
    ELSIF v_oracle_fail IS NOT NULL THEN
        INSERT INTO fz_failures VALUES (iteration, 'a request incentive_calculate refuses is refused', NULL, v_oracle_fail, v_request::text);
        RETURN 'FAILED';
    ELSIF (SELECT array_agg(k) FROM jsonb_object_keys(v_result) AS k) IS DISTINCT FROM ARRAY['potential_earnings']
          OR jsonb_typeof(v_result -> 'potential_earnings') <> 'array' THEN
        INSERT INTO fz_failures VALUES (iteration, 'the answer is {"potential_earnings": [...]}', NULL, left(v_result::text, 200), v_request::text);
        RETURN 'FAILED';
    ELSIF v_result -> 'potential_earnings' IS DISTINCT FROM v_oracle THEN
        INSERT INTO fz_failures VALUES (iteration, 'potential_earnings equal incentive_calculate', NULL, left(v_result::text, 200), v_request::text);
        RETURN 'FAILED';
    END IF;
    RETURN CASE WHEN jsonb_array_length(v_oracle) > 0 THEN 'accepted: earnings equal incentive_calculate'
                ELSE 'accepted: no earnings, as incentive_calculate' END;
END
$$;

-- The run: a transaction per 100 requests (the temporary tables of
-- calculate() go at each commit).
SELECT set_config('fz.requests', :'requests', false) \gset
DO $run$
DECLARE
    i integer;
    v_outcome text;
BEGIN
    FOR i IN 1 .. current_setting('fz.requests')::integer LOOP
        v_outcome := pg_temp.fz_one(i);
        INSERT INTO fz_counts VALUES (v_outcome, 1) ON CONFLICT (outcome) DO UPDATE SET n = fz_counts.n + 1;
        IF i % 100 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END
$run$;

\pset footer off
\echo json fuzz: seed :seed, :requests requests
SELECT outcome, n AS requests FROM fz_counts ORDER BY outcome COLLATE "C";
SELECT iteration, rule, sqlstate, left(message, 200) AS message, left(request, 400) AS request
  FROM fz_failures ORDER BY iteration LIMIT 10;
SELECT pg_backend_pid() > 0 AS server_up \gset
DO $check$
BEGIN
    IF EXISTS (SELECT FROM fz_failures) THEN
        RAISE EXCEPTION 'json fuzz: % of % requests broke a rule (listed above)',
              (SELECT count(*) FROM fz_failures), (SELECT sum(n) FROM fz_counts);
    END IF;
END
$check$;
\echo json fuzz: every request met the contract; the server stayed up
