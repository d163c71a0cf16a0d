------------------------------------------------------------------------
-- Data placement: the functions a PL/Proxy coordinator calls on every shard
-- (docs/scaling.md).  They are internals of the extension, so they exist on
-- every node, sharded or not:
--
--   reference data, identical on every shard (the coordinator runs them
--   RUN ON ALL):   put_offer, delete_offer, put_sku, delete_sku,
--                  put_uom_conversion, delete_uom_conversion,
--                  put_participant_property, delete_participant_property,
--                  put_participant_group, delete_participant_group,
--                  put_group, delete_group,
--                  put_product, delete_product, put_sku_product,
--                  delete_sku_product, put_exchange_rate,
--                  delete_exchange_rate
--   transactions and enrollments, on the shard of hashtext(participant_key)
--   (of its group's calculation unit's first key for a member of a group):
--                  put_transaction, delete_transaction, put_transactions,
--                  load_transactions, put_enrollment, delete_enrollment
--   moves:         participant_data, store_participant_data, drop_participant_data
--   checks:        shard_summary (what incentives.cluster_check() compares)
--
-- Each put_* is an idempotent upsert that returns true when it inserted a
-- new row and false when it replaced one, so a change that failed on one
-- shard (PL/Proxy runs each shard's call in its own transaction) can simply
-- be applied again.  They run with the caller's rights (SECURITY INVOKER):
-- the caller needs INSERT/UPDATE/DELETE on the tables concerned.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_internal.put_offer(document jsonb)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.offers AS o (document) VALUES (document)
    ON CONFLICT (offer_key) DO UPDATE SET document = EXCLUDED.document
    RETURNING o.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_offer(jsonb) IS
  'Inserts or replaces an offer (validated like any insert); true when the offer is new. Through a coordinator: on every shard';

-- A coordinator's put_offer (incentives_cluster) checks the offer on one
-- shard, then writes it to every shard, with the coordinator's
-- incentives.unknown_offer_fields (NULL: the shard's own) for the length of
-- the call: offer_problem is everything a write would refuse (the
-- document, incentives.offer_error; the key, code/11_offer_keys.sql) as
-- {"sqlstate", "message", "hint"}, NULL when the write would pass.
CREATE OR REPLACE FUNCTION incentives_internal.offer_problem(document jsonb, unknown_offer_fields text)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_saved   text := current_setting('incentives.unknown_offer_fields', true);
    v_message text;
    v_key     text := document ->> 'offer_key';
    v_rival   text;
BEGIN
    IF unknown_offer_fields IS NOT NULL THEN
        PERFORM set_config('incentives.unknown_offer_fields', unknown_offer_fields, true);
    END IF;
    v_message := incentives.offer_error(document);
    IF unknown_offer_fields IS NOT NULL THEN
        IF v_saved IS NULL THEN   -- not defined before the module loaded
            RESET incentives.unknown_offer_fields;
        ELSE
            PERFORM set_config('incentives.unknown_offer_fields', v_saved, true);
        END IF;
    END IF;
    IF v_message IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '22023', 'message', v_message);
    END IF;
    IF v_key IS NULL OR EXISTS (SELECT FROM incentives.offers AS o WHERE o.offer_key = v_key) THEN
        RETURN NULL;         -- a stored key is never refused
    END IF;
    v_message := incentives_internal.offer_key_problem(v_key);
    IF v_message IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '22023', 'message', v_message,
                                  'hint', 'An offer key has no surrounding white space and no control character.');
    END IF;
    v_rival := incentives_internal.offer_key_case_rival(v_key);
    IF v_rival IS NOT NULL THEN
        RETURN jsonb_build_object('sqlstate', '23505',
            'message', format('offer key "%s" differs only in letter case from the existing offer "%s"', v_key, v_rival),
            'hint', format('Update the offer "%s", or choose another key.', v_rival));
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION incentives_internal.offer_problem(jsonb, text) IS
  'What a write of the offer would refuse, as {"sqlstate", "message", "hint"} (NULL: nothing), under the given incentives.unknown_offer_fields (NULL: the current one). Through a coordinator: on any one shard, before put_offer';

CREATE OR REPLACE FUNCTION incentives_internal.put_offer_under(document jsonb, unknown_offer_fields text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_saved text := current_setting('incentives.unknown_offer_fields', true);
    v_new   boolean;
BEGIN
    IF unknown_offer_fields IS NOT NULL THEN
        PERFORM set_config('incentives.unknown_offer_fields', unknown_offer_fields, true);
    END IF;
    v_new := incentives_internal.put_offer(document);
    IF unknown_offer_fields IS NOT NULL THEN
        IF v_saved IS NULL THEN   -- not defined before the module loaded
            RESET incentives.unknown_offer_fields;
        ELSE
            PERFORM set_config('incentives.unknown_offer_fields', v_saved, true);
        END IF;
    END IF;
    RETURN v_new;
END
$$;
COMMENT ON FUNCTION incentives_internal.put_offer_under(jsonb, text) IS
  'put_offer under the given incentives.unknown_offer_fields (NULL: the current one), as a coordinator passes its own. Through a coordinator: on every shard';

-- The other reference tables, and the enrollment windows (docs/reference.md,
-- Enrollment: participant data, on the shard of the participant), have a
-- put_<row> and a delete_<row> of one shape each:
--
--   put_<row>(every column in order, a nullable one DEFAULT NULL): inserts
--     the row, or on a conflict of the primary key replaces its other
--     columns (put_enrollment: the end_date of the window starting that
--     day); true when the row is new.
--   delete_<row>(the primary key's columns): deletes the row; true when it
--     existed.
--
-- Overlapping enrollment windows are refused by the table's trigger
-- (23P01).  put_offer (above) takes the document alone: the key is
-- generated from it.

CREATE OR REPLACE FUNCTION incentives_internal.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.offers AS t WHERE t.offer_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_offer(text) IS
  'Deletes an offer; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.skus AS t (sku_key, uom_key, label) VALUES ($1, $2, $3)
    ON CONFLICT (sku_key) DO UPDATE SET uom_key = EXCLUDED.uom_key, label = EXCLUDED.label
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_sku(text, text, text) IS
  'Inserts or replaces a SKU and its unit of measure; true when the SKU is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.skus AS t WHERE t.sku_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_sku(text) IS
  'Deletes a SKU; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.uom_conversions AS t (from_uom_key, to_uom_key, factor) VALUES ($1, $2, $3)
    ON CONFLICT (from_uom_key, to_uom_key) DO UPDATE SET factor = EXCLUDED.factor
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion (quantity_in_to = quantity_in_from * factor); true when the pair is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.uom_conversions AS t WHERE t.from_uom_key = $1 AND t.to_uom_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion; true when it existed. Through a coordinator: on every shard';

-- The product catalog (docs/reference.md, Products): a cycle, a key
-- equal to another but for letter case and overlapping windows are
-- refused by the tables' triggers on each shard; shards that hold the
-- same catalog refuse the same change alike.
CREATE OR REPLACE FUNCTION incentives_internal.put_product(product_key text, parent_key text DEFAULT NULL,
                                                           label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.products AS t (product_key, parent_key, label) VALUES ($1, $2, $3)
    ON CONFLICT (product_key) DO UPDATE SET parent_key = EXCLUDED.parent_key, label = EXCLUDED.label
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_product(text, text, text) IS
  'Inserts or replaces a product node (its parent and label); true when the node is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_product(product_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.products AS t WHERE t.product_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_product(text) IS
  'Deletes a product node (refused while it has children or SKU windows); true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_sku_product(sku_key text, product_key text,
                                                               start_date date DEFAULT '-infinity',
                                                               end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.sku_products AS t (sku_key, product_key, start_date, end_date) VALUES ($1, $2, $3, $4)
    ON CONFLICT (sku_key, product_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_sku_product(text, text, date, date) IS
  'Inserts a window of a SKU in a product node, or replaces the end_date of the one starting that day; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_sku_product(sku_key text, product_key text, start_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.sku_products AS t
                WHERE t.sku_key = $1 AND t.product_key = $2 AND t.start_date = $3 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_sku_product(text, text, date) IS
  'Deletes the window of a SKU in a product node starting that day; true when it existed. Through a coordinator: on every shard';

-- Exchange rates (docs/reference.md, Currencies): reference data, so that
-- a transaction is converted at the same rate on whichever shard it is.
-- A rate that is not a positive finite number, a currency that is not
-- three upper-case letters or a pair of one currency is refused by the
-- table's checks on each shard alike.
CREATE OR REPLACE FUNCTION incentives_internal.put_exchange_rate(from_currency text, to_currency text,
                                                                 rate_date date, rate numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.exchange_rates AS t (from_currency, to_currency, rate_date, rate)
    VALUES ($1, $2, $3, $4)
    ON CONFLICT (from_currency, to_currency, rate_date) DO UPDATE SET rate = EXCLUDED.rate
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_exchange_rate(text, text, date, numeric) IS
  'Inserts the rate of a pair of currencies from a day on, or replaces the rate of that day; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_exchange_rate(from_currency text, to_currency text,
                                                                    rate_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.exchange_rates AS t
                WHERE t.from_currency = $1 AND t.to_currency = $2 AND t.rate_date = $3 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_exchange_rate(text, text, date) IS
  'Deletes the rate of a pair of currencies from that day; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.participant_properties AS t (participant_key, property_key, value) VALUES ($1, $2, $3)
    ON CONFLICT (participant_key, property_key) DO UPDATE SET value = EXCLUDED.value
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.participant_properties AS t WHERE t.participant_key = $1 AND t.property_key = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_participant_property(text, text) IS
  'Deletes a stored participant property; true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.put_enrollment(participant_key text, offer_key text, start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.enrollments AS t (participant_key, offer_key, start_date, end_date) VALUES ($1, $2, $3, $4)
    ON CONFLICT (participant_key, offer_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_enrollment(text, text, date, date) IS
  'Inserts an enrollment window, or replaces the end_date of the one starting that day; true when it is new. Through a coordinator: on the shard of the participant';

CREATE OR REPLACE FUNCTION incentives_internal.delete_enrollment(participant_key text, offer_key text, start_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.enrollments AS t WHERE t.participant_key = $1 AND t.offer_key = $2 AND t.start_date = $3 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_enrollment(text, text, date) IS
  'Deletes the enrollment window of a participant in an offer starting that day; true when it existed. Through a coordinator: on the shard of the participant';

-- Participant groups (docs/scaling.md, Participant groups): memberships
-- are reference data (every shard); a group and its members live on the
-- shard of their calculation unit's first key, and a coordinator moves a
-- participant's transactions and windows there when its memberships
-- change (participant_data, store_participant_data, drop_participant_data,
-- whose first argument is the partition hash PL/Proxy routes by).
CREATE OR REPLACE FUNCTION incentives_internal.put_participant_group(participant_key text, group_key text,
                                                                     start_date date, end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.participant_groups AS t (participant_key, group_key, start_date, end_date)
    VALUES ($1, $2, $3, $4)
    ON CONFLICT (participant_key, start_date) DO UPDATE SET group_key = EXCLUDED.group_key, end_date = EXCLUDED.end_date
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_participant_group(text, text, date, date) IS
  'Inserts a membership window, or replaces the group and end_date of the one starting that day; true when it is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_participant_group(participant_key text, start_date date)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.participant_groups AS t WHERE t.participant_key = $1 AND t.start_date = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_participant_group(text, date) IS
  'Deletes the membership window of a participant starting that day; true when it existed. Through a coordinator: on every shard';

-- The types of groups (docs/reference.md, Participant hierarchies):
-- reference data like the memberships, so that an offer with
-- "group_type" finds the same levels on every shard.  A key that is not
-- well formed or equal to another but for letter case is refused by the
-- table's trigger and index on each shard alike.
CREATE OR REPLACE FUNCTION incentives_internal.put_group(group_key text, group_type text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO incentives.groups AS t (group_key, group_type, label) VALUES ($1, $2, $3)
    ON CONFLICT (group_key) DO UPDATE SET group_type = EXCLUDED.group_type, label = EXCLUDED.label
    RETURNING t.xmax = 0
$$;
COMMENT ON FUNCTION incentives_internal.put_group(text, text, text) IS
  'Inserts or replaces the type and label of a group; true when the group is new. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.delete_group(group_key text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.groups AS t WHERE t.group_key = $1 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_group(text) IS
  'Deletes the type and label of a group (its memberships stay); true when it existed. Through a coordinator: on every shard';

CREATE OR REPLACE FUNCTION incentives_internal.participant_data(partition_hash integer, participant_key text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'transactions', (SELECT COALESCE(jsonb_agg(to_jsonb(t) ORDER BY t.transaction_id), '[]')
                           FROM incentives.transactions AS t WHERE t.participant_key = $2),
        'enrollments', (SELECT COALESCE(jsonb_agg(to_jsonb(n) ORDER BY n.offer_key, n.start_date), '[]')
                          FROM incentives.enrollments AS n WHERE n.participant_key = $2))
$$;
COMMENT ON FUNCTION incentives_internal.participant_data(integer, text) IS
  'A participant''s transactions and enrollment windows as JSON ({"transactions": [...], "enrollments": [...]}), for a coordinator that moves them to another shard';

CREATE OR REPLACE FUNCTION incentives_internal.store_participant_data(partition_hash integer, data jsonb)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n     bigint;
    saved text := current_setting('check_function_bodies');
BEGIN
    n := incentives_internal.put_transactions(ARRAY(SELECT jsonb_array_elements(data -> 'transactions')));
    -- check_function_bodies off while the windows go in: they were stored
    -- on another shard, and one naming no offer (kept from before 0.4)
    -- moves as it is (code/11_offer_keys.sql)
    PERFORM set_config('check_function_bodies', 'off', true);
    INSERT INTO incentives.enrollments AS t (participant_key, offer_key, start_date, end_date)
    SELECT r.participant_key, r.offer_key, r.start_date, r.end_date
      FROM jsonb_populate_recordset(NULL::incentives.enrollments, data -> 'enrollments') AS r
    ON CONFLICT (participant_key, offer_key, start_date) DO UPDATE SET end_date = EXCLUDED.end_date;
    PERFORM set_config('check_function_bodies', saved, true);
    RETURN COALESCE(n, 0);
END
$$;
COMMENT ON FUNCTION incentives_internal.store_participant_data(integer, jsonb) IS
  'Stores what participant_data returned on another shard (transactions upserted, windows inserted or replaced); returns how many transactions';

CREATE OR REPLACE FUNCTION incentives_internal.drop_participant_data(partition_hash integer, participant_key text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    DELETE FROM incentives.enrollments AS e WHERE e.participant_key = $2;
    DELETE FROM incentives.transactions AS t WHERE t.participant_key = $2;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;
COMMENT ON FUNCTION incentives_internal.drop_participant_data(integer, text) IS
  'Deletes a participant''s transactions and enrollment windows (moved to another shard by a coordinator); returns how many transactions';

-- Transactions.  A transaction never changes participant through an
-- upsert: on a sharded deployment that would leave it on the wrong shard.
-- store_transactions is the one upsert that says so; put_transactions and
-- put_transaction call it.
CREATE OR REPLACE FUNCTION incentives_internal.store_transactions(transactions jsonb[])
RETURNS SETOF boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n      bigint;
    bad_id text;
    bad_pk text;
    old_pk text;
BEGIN
    RETURN QUERY
    WITH changed AS (
        INSERT INTO incentives.transactions AS x
               (transaction_id, participant_key, transaction_type, transaction_date,
                sku_key, quantity, uom_key, amount, grower_key, currency,
                original_transaction_id)
        SELECT t ->> 'transaction_id', t ->> 'participant_key', t ->> 'transaction_type',
               (t ->> 'transaction_date')::date, t ->> 'sku_key', (t ->> 'quantity')::numeric,
               t ->> 'uom_key', (t ->> 'amount')::numeric, t ->> 'grower_key', t ->> 'currency',
               t ->> 'original_transaction_id'
          FROM unnest(transactions) AS t
        ON CONFLICT (transaction_id) DO UPDATE
           SET transaction_type = EXCLUDED.transaction_type,
               transaction_date = EXCLUDED.transaction_date,
               sku_key = EXCLUDED.sku_key, quantity = EXCLUDED.quantity,
               uom_key = EXCLUDED.uom_key, amount = EXCLUDED.amount,
               grower_key = EXCLUDED.grower_key, currency = EXCLUDED.currency,
               original_transaction_id = EXCLUDED.original_transaction_id
         WHERE x.participant_key = EXCLUDED.participant_key
        RETURNING x.xmax = 0 AS is_new)
    SELECT c.is_new FROM changed AS c;
    GET DIAGNOSTICS n = ROW_COUNT;

    IF n < cardinality(transactions) THEN
        SELECT t ->> 'transaction_id', t ->> 'participant_key', x.participant_key
          INTO bad_id, bad_pk, old_pk
          FROM unnest(transactions) AS t
          JOIN incentives.transactions x ON x.transaction_id = t ->> 'transaction_id'
         WHERE x.participant_key IS DISTINCT FROM t ->> 'participant_key'
         LIMIT 1;
        -- (a NULL is written <NULL>, as RAISE writes a NULL)
        PERFORM incentives_internal.raise_error(
            '23505',
            format('transaction "%s" belongs to participant "%s", not "%s"', COALESCE(bad_id, '<NULL>'),
                   COALESCE(old_pk, '<NULL>'), COALESCE(bad_pk, '<NULL>')),
            '', 'Delete it (incentives_internal.delete_transaction) before storing it under another participant.');
    END IF;
END
$$;
COMMENT ON FUNCTION incentives_internal.store_transactions(jsonb[]) IS
  'Part of put_transactions and put_transaction: inserts or replaces transactions given as JSON objects with the transaction columns (grower_key, currency and original_transaction_id optional: NULL when absent), refusing one that would change participant (23505); per row stored, true when it is new';

CREATE OR REPLACE FUNCTION incentives_internal.put_transactions(transactions jsonb[])
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*) FROM incentives_internal.store_transactions($1)
$$;
COMMENT ON FUNCTION incentives_internal.put_transactions(jsonb[]) IS
  'Inserts or replaces transactions given as JSON objects with the transaction columns (grower_key, currency and original_transaction_id optional: NULL when absent); returns how many. Through a coordinator: each on the shard of its participant';

CREATE OR REPLACE FUNCTION incentives_internal.put_transaction(
    transaction_id   text,
    participant_key  text,
    transaction_type text,
    transaction_date date,
    sku_key          text,
    quantity         numeric,
    uom_key          text,
    amount           numeric)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.is_new
      FROM incentives_internal.store_transactions(ARRAY[jsonb_build_object(
               'transaction_id', $1, 'participant_key', $2, 'transaction_type', $3, 'transaction_date', $4,
               'sku_key', $5, 'quantity', $6, 'uom_key', $7, 'amount', $8)]) AS s(is_new)
$$;
COMMENT ON FUNCTION incentives_internal.put_transaction(text, text, text, date, text, numeric, text, numeric) IS
  'Inserts or replaces one transaction of the eight required columns (grower_key, currency and original_transaction_id NULL: put_transactions takes them); true when it is new. Through a coordinator: on the shard of its participant';

CREATE OR REPLACE FUNCTION incentives_internal.delete_transaction(participant_key text, transaction_id text)
RETURNS boolean
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (DELETE FROM incentives.transactions x
                WHERE x.participant_key = $1 AND x.transaction_id = $2 RETURNING 1)
    SELECT count(*) > 0 FROM d
$$;
COMMENT ON FUNCTION incentives_internal.delete_transaction(text, text) IS
  'Deletes one transaction of a participant; true when it existed. Through a coordinator: on the shard of the participant';

CREATE OR REPLACE FUNCTION incentives_internal.load_transactions(transactions jsonb)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_internal.put_transactions(ARRAY(SELECT jsonb_array_elements($1)))
$$;
COMMENT ON FUNCTION incentives_internal.load_transactions(jsonb) IS
  'Inserts or replaces a JSON array of transactions (objects with the transaction columns); returns how many. Through a coordinator: each on the shard of its participant';

-- What incentives.cluster_check() on a coordinator compares across shards:
-- a digest of each reference table (they must be identical everywhere) and
-- the transactions that do not hash to this shard's partition.
CREATE OR REPLACE FUNCTION incentives_internal.shard_summary(partitions integer, partition integer)
RETURNS TABLE (object text, row_count bigint, digest text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- each reference table: its rows as lines in key order, and their md5;
    -- the offer history without its times (each shard writes its own)
    SELECT * FROM (
        SELECT t.object, count(l.object),
               md5(coalesce(string_agg(l.line, E'\n' ORDER BY l.key1 COLLATE "C", l.key2 COLLATE "C", l.version), ''))
          FROM (VALUES (1, 'offers'), (2, 'offer_versions'), (3, 'skus'), (4, 'uom_conversions'),
                       (5, 'participant_properties'), (6, 'participant_groups'), (7, 'products'),
                       (8, 'sku_products'), (9, 'groups'), (10, 'exchange_rates')) AS t(n, object)
          LEFT JOIN (
            SELECT 'offers' AS object, o.offer_key || ' ' || o.document::text AS line,
                   o.offer_key AS key1, NULL::text AS key2, NULL::integer AS version
              FROM incentives.offers o
            UNION ALL
            SELECT 'offer_versions', format('%s %s %s %s %s', v.offer_key, v.version, v.document, v.valid_to IS NULL, v.effective_from),
                   v.offer_key, NULL, v.version
              FROM incentives.offer_versions v
            UNION ALL
            SELECT 'skus', format('%s %s %s', s.sku_key, s.uom_key, s.label), s.sku_key, NULL, NULL
              FROM incentives.skus s
            UNION ALL
            SELECT 'uom_conversions', format('%s %s %s', c.from_uom_key, c.to_uom_key, c.factor),
                   c.from_uom_key, c.to_uom_key, NULL
              FROM incentives.uom_conversions c
            UNION ALL
            SELECT 'participant_properties', format('%s %s %s', p.participant_key, p.property_key, p.value),
                   p.participant_key, p.property_key, NULL
              FROM incentives.participant_properties p
            UNION ALL
            SELECT 'participant_groups', format('%s %s %s %s', g.participant_key, g.group_key, g.start_date, g.end_date),
                   g.participant_key, g.start_date::text, NULL
              FROM incentives.participant_groups g
            UNION ALL
            SELECT 'products', format('%s %s %s', p.product_key, p.parent_key, p.label),
                   p.product_key, NULL, NULL
              FROM incentives.products p
            UNION ALL
            SELECT 'sku_products', format('%s %s %s %s', w.sku_key, w.product_key, w.start_date, w.end_date),
                   w.sku_key, w.product_key || ' ' || w.start_date::text, NULL
              FROM incentives.sku_products w
            UNION ALL
            SELECT 'groups', format('%s %s %s', g.group_key, g.group_type, g.label),
                   g.group_key, NULL, NULL
              FROM incentives.groups g
            UNION ALL
            SELECT 'exchange_rates', format('%s %s %s %s', r.from_currency, r.to_currency, r.rate_date, r.rate),
                   r.from_currency || ' ' || r.to_currency, r.rate_date::text, NULL
              FROM incentives.exchange_rates r) AS l ON l.object = t.object
         GROUP BY t.n, t.object
         ORDER BY t.n) AS reference_tables
    UNION ALL
    -- each participant table: its rows, and those not on this partition
    -- (a member of a group: the partition of the first key of its unit of
    -- placement_units())
    SELECT x.object, x.row_count, NULL
      FROM (SELECT 'transactions' AS tab, count(*) AS total,
                   count(*) FILTER (WHERE (hashtext(COALESCE(u.unit_key, t.participant_key)) & ($1 - 1)) <> $2) AS misplaced
              FROM incentives.transactions t
              LEFT JOIN incentives_internal.placement_units() AS u ON u.participant_key = t.participant_key
            UNION ALL
            SELECT 'enrollments', count(*),
                   count(*) FILTER (WHERE (hashtext(COALESCE(u.unit_key, n.participant_key)) & ($1 - 1)) <> $2)
              FROM incentives.enrollments n
              LEFT JOIN incentives_internal.placement_units() AS u ON u.participant_key = n.participant_key) AS c
     CROSS JOIN LATERAL (VALUES (c.tab, c.total), ('misplaced_' || c.tab, c.misplaced)) AS x(object, row_count)
$$;
COMMENT ON FUNCTION incentives_internal.shard_summary(integer, integer) IS
  'Row counts and digests of the reference tables (the memberships, the types of groups, the product catalog and the exchange rates included) and the offer history (without its times), the transaction and enrollment counts, and how many transactions and enrollments do not belong to this partition (hashtext(placement key) & (partitions - 1) <> partition; the placement key is the participant''s own, or the first key of its unit of incentives_internal.placement_units())';

-- incentives.refresh_earnings as a function, so that a coordinator can run
-- it on the shards (PL/Proxy calls functions, not procedures).  Called from
-- a function, the procedure cannot COMMIT: the refresh is one transaction
-- on each shard, and a failure leaves that shard's earnings and run log as
-- they were.
CREATE OR REPLACE FUNCTION incentives_internal.refresh_earnings_run(
    participant_key text     DEFAULT NULL,
    transactions    regclass DEFAULT 'incentives.transactions',
    progress_every  integer  DEFAULT 1000,
    on_error        text     DEFAULT 'raise',
    changed_only    boolean  DEFAULT false)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text,
               exceptions integer)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
BEGIN
    CALL incentives.refresh_earnings(refresh_earnings_run.participant_key,
                                     refresh_earnings_run.transactions,
                                     refresh_earnings_run.progress_every,
                                     refresh_earnings_run.on_error,
                                     refresh_earnings_run.changed_only);
    RETURN QUERY
        SELECT r.run_id, r.participants, r.rows, r.total_incentive, r.status, r.exceptions
          FROM incentives.calculation_runs AS r
         WHERE r.pid = pg_backend_pid()
         ORDER BY r.run_id DESC
         LIMIT 1;
END
$$;
COMMENT ON FUNCTION incentives_internal.refresh_earnings_run(text, regclass, integer, text, boolean) IS
  'CALLs incentives.refresh_earnings in the caller''s transaction and returns its run (what a coordinator''s refresh_earnings runs on each shard)';

-- incentives.settle as a function, for a coordinator (each shard settles
-- its own participants: statements and their numbers are per shard).
-- Called from a function the procedure cannot COMMIT: the statement is
-- part of the caller's transaction on the shard.
CREATE OR REPLACE FUNCTION incentives_internal.settle_run(
    statement_date   date,
    participant_key  text     DEFAULT NULL,
    transactions     regclass DEFAULT 'incentives.transactions',
    minimum_payment  numeric  DEFAULT 0,
    final_offer_keys text[]   DEFAULT NULL)
RETURNS TABLE (statement_id bigint, lines bigint, amount_due numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.settle_work(settle_run.statement_date, settle_run.participant_key,
                                            settle_run.transactions, settle_run.minimum_payment,
                                            settle_run.final_offer_keys);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.amount_due), 0.00)
          FROM incentives.statement_lines AS l
         WHERE l.statement_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.settle_run(date, text, regclass, numeric, text[]) IS
  'Settles in the caller''s transaction (incentives.settle''s work) and returns the statement: what a coordinator''s settle runs on each shard';

-- The accrual of a shard's own participants (docs/lifecycle.md, Accruals;
-- accruals and their numbers are per shard), in the caller's transaction
-- on the shard: what a coordinator's accrue runs on each shard.
CREATE OR REPLACE FUNCTION incentives_internal.accrue_run(
    as_of_date   date,
    transactions regclass DEFAULT 'incentives.transactions')
RETURNS TABLE (accrual_id bigint, lines bigint, delta numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_id bigint;
BEGIN
    v_id := incentives_internal.accrue_work(accrue_run.as_of_date, accrue_run.transactions);
    RETURN QUERY
        SELECT v_id, count(*), COALESCE(sum(l.delta), 0.00)
          FROM incentives.accrual_lines AS l
         WHERE l.accrual_id = v_id;
END
$$;
COMMENT ON FUNCTION incentives_internal.accrue_run(date, regclass) IS
  'Accrues in the caller''s transaction (incentives.accrue''s work) and returns the accrual: what a coordinator''s accrue runs on each shard';
