------------------------------------------------------------------------
-- Reference data: the same change on every partition
------------------------------------------------------------------------

-- What the shards answered: true when any shard answered true (put: the
-- row was new; delete: it existed); a warning when they disagreed, which
-- means the shards had diverged before this change (the change itself has
-- now been applied everywhere).
CREATE OR REPLACE FUNCTION incentives_cluster.agreed(answers boolean[], change text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF coalesce(cardinality(answers), 0) = 0 THEN
        RAISE EXCEPTION 'no partition of incentives_cluster answered %', change;
    END IF;
    IF true = ANY (answers) AND false = ANY (answers) THEN
        RAISE WARNING '%: the partitions disagreed (% of % had the row); they had diverged and now agree',
              change, (SELECT count(*) FROM unnest(answers) a WHERE NOT a), cardinality(answers)
              USING HINT = 'SELECT * FROM incentives.cluster_check() compares the partitions.';
    END IF;
    RETURN true = ANY (answers);
END
$$;
COMMENT ON FUNCTION incentives_cluster.agreed(boolean[], text) IS
  'Combines the partitions'' answers to a reference-data change; warns when they disagreed';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_error(document jsonb)
RETURNS text
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives.offer_error;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_error(jsonb) IS
  'incentives.offer_error on any one partition: validates an offer before it is sent to all of them';

-- A change of reference data goes to every partition: for each,
-- incentives_cluster.<change> calls incentives_internal.<change> on all
-- of them (the proxy passes every argument: it has no defaults), and
-- incentives.<change> combines their answers (incentives_cluster.agreed),
-- naming the row by its key in a warning when they disagreed.
-- (incentives.put_offer, below, validates the offer first.)

CREATE OR REPLACE FUNCTION incentives_cluster.put_offer(document jsonb)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.put_offer(jsonb) IS
  'incentives.put_offer on every partition';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_offer(offer_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_offer(text) IS
  'incentives.delete_offer on every partition';

-- An offer with settled money on any shard is removed by none
-- (docs/lifecycle.md, Removing a settled offer): delete_offer asks every
-- shard first (each shard's own end-of-transaction check refuses it too,
-- but only for itself); remove_settled_offer removes it on purpose on
-- every shard, each logging it.
CREATE OR REPLACE FUNCTION incentives_cluster.offer_settled(offer_key text)
RETURNS TABLE (settled_total numeric, participants integer, last_statement_date date)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.offer_settled;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_settled(text) IS
  'incentives_internal.offer_settled on every partition: each shard''s settled money for the offer';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_removal_refuse(offer_key text)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v record;
BEGIN
    SELECT COALESCE(sum(s.settled_total), 0.00) AS settled_total, COALESCE(sum(s.participants), 0) AS participants,
           max(s.last_statement_date) AS last_statement_date
      INTO v FROM incentives_cluster.offer_settled(offer_removal_refuse.offer_key) AS s;
    IF v.participants > 0 THEN
        RAISE EXCEPTION 'offer "%" cannot be removed (DELETE): % settled for it, the latest statement %',
                        offer_removal_refuse.offer_key, v.settled_total, v.last_statement_date
              USING ERRCODE = 'object_not_in_prerequisite_state',
                    DETAIL = format('Participants with a settled balance for it, on all shards: %s. The next statement would claw it all back. No shard removed it.', v.participants),
                    HINT = format('To stop it paying from a date, change its rates to zero from that date (a prospective change). To remove it on purpose and claw its payments back: SELECT incentives.remove_settled_offer(%L, reason).',
                                  offer_removal_refuse.offer_key);
    END IF;
END
$$;
COMMENT ON FUNCTION incentives_cluster.offer_removal_refuse(text) IS
  'Raises 55000 when any shard has settled money for the offer: the total over the shards and the latest statement';

CREATE OR REPLACE FUNCTION incentives.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    existed boolean;
BEGIN
    PERFORM incentives_cluster.offer_removal_refuse(delete_offer.offer_key);
    existed := incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_offer(delete_offer.offer_key)),
                                         format('delete_offer(%s)', delete_offer.offer_key));
    PERFORM incentives_cluster.place_again('delete_offer');
    RETURN existed;
END
$$;
COMMENT ON FUNCTION incentives.delete_offer(text) IS
  'Deletes an offer on every partition; true when it existed; refused (55000) before any partition deletes it when one has settled money for it; fails if any partition fails; then moves the data of every participant whose placement changed';

CREATE OR REPLACE FUNCTION incentives_cluster.remove_settled_offer(offer_key text, reason text)
RETURNS SETOF bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.remove_settled_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.remove_settled_offer(text, text) IS
  'incentives.remove_settled_offer on every partition';

CREATE OR REPLACE FUNCTION incentives.remove_settled_offer(offer_key text, reason text)
RETURNS integer
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT count(*)::integer FROM incentives_cluster.remove_settled_offer($1, $2)
$$;
COMMENT ON FUNCTION incentives.remove_settled_offer(text, text) IS
  'Removes an offer on purpose on every partition, settled money and all (each shard logs it in incentives.offer_removals; its next statement claws it back); returns the number of partitions';

-- A closed offer is reopened on every shard or none (docs/lifecycle.md,
-- Why a line moved, holdbacks, minimums and closing a season): every
-- shard is asked first whether it has the offer closed, then each
-- reopens and logs it.
CREATE OR REPLACE FUNCTION incentives_cluster.offer_closed(offer_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.offer_closed;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_closed(text) IS
  'incentives_internal.offer_closed on every partition';

CREATE OR REPLACE FUNCTION incentives_cluster.reopen_offer(offer_key text, reason text)
RETURNS SETOF bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.reopen_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.reopen_offer(text, text) IS
  'incentives.reopen_offer on every partition';

CREATE OR REPLACE FUNCTION incentives.reopen_offer(offer_key text, reason text)
RETURNS integer
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_open integer;
BEGIN
    SELECT count(*) FILTER (WHERE NOT c) INTO v_open FROM incentives_cluster.offer_closed(reopen_offer.offer_key) AS c;
    IF v_open > 0 THEN
        RAISE EXCEPTION 'offer "%" is not closed on % partitions', reopen_offer.offer_key, v_open
              USING ERRCODE = 'invalid_parameter_value',
                    DETAIL = 'No partition reopened it.',
                    HINT = 'incentives.closed_offers lists the closed offers of each partition.';
    END IF;
    RETURN (SELECT count(*)::integer FROM incentives_cluster.reopen_offer(reopen_offer.offer_key, reopen_offer.reason));
END
$$;
COMMENT ON FUNCTION incentives.reopen_offer(text, text) IS
  'Reopens a closed offer on every partition (each logs it in incentives.offer_reopenings; its next statement writes final lines), after every partition has said it is closed there (22023 otherwise, and none reopens it); returns the number of partitions';

CREATE OR REPLACE FUNCTION incentives_cluster.put_sku(sku_key text, uom_key text, label text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.put_sku(text, text, text) IS
  'incentives.put_sku on every partition';

CREATE OR REPLACE FUNCTION incentives.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_sku($1, $2, $3)),
                                     format('put_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.put_sku(text, text, text) IS
  'Inserts or replaces a SKU on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_sku(sku_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_sku(text) IS
  'incentives.delete_sku on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_sku($1)),
                                     format('delete_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_sku(text) IS
  'Deletes a SKU on every partition; true when it existed; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.put_uom_conversion(text, text, numeric) IS
  'incentives.put_uom_conversion on every partition';

CREATE OR REPLACE FUNCTION incentives.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_uom_conversion($1, $2, $3)),
                                     format('put_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_uom_conversion(text, text) IS
  'incentives.delete_uom_conversion on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_uom_conversion($1, $2)),
                                     format('delete_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion on every partition; true when it existed; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.put_participant_property(text, text, numeric) IS
  'incentives.put_participant_property on every partition';

CREATE OR REPLACE FUNCTION incentives.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_participant_property($1, $2, $3)),
                                     format('put_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_participant_property(participant_key text, property_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_participant_property(text, text) IS
  'incentives.delete_participant_property on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_participant_property($1, $2)),
                                     format('delete_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_participant_property(text, text) IS
  'Deletes a stored participant property on every partition; true when it existed; fails if any partition fails';


CREATE OR REPLACE FUNCTION incentives.put_offer(document jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- the coordinator's setting applies on the shards (NULL: theirs)
    fields  text := current_setting('incentives.unknown_offer_fields', true);
    problem jsonb;
    is_new  boolean;
BEGIN
    -- An offer a shard's write would refuse (its document, its key) is
    -- refused before any partition stores anything, with the shard's
    -- SQLSTATE (code/35_offer_checks.sql).
    problem := incentives_cluster.offer_problem(document, NULLIF(fields, ''));
    IF problem ? 'hint' THEN
        RAISE EXCEPTION '%', problem ->> 'message'
              USING ERRCODE = problem ->> 'sqlstate', HINT = problem ->> 'hint';
    ELSIF problem IS NOT NULL THEN
        RAISE EXCEPTION '%', problem ->> 'message' USING ERRCODE = problem ->> 'sqlstate';
    END IF;
    is_new := incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_offer_under(document, NULLIF(fields, ''))),
                                        format('put_offer(%s)', document ->> 'offer_key'));
    -- an offer at a new level of the hierarchies joins units
    PERFORM incentives_cluster.place_again('put_offer');
    RETURN is_new;
END
$$;
COMMENT ON FUNCTION incentives.put_offer(jsonb) IS
  'Checks an offer on one partition (its document under the coordinator''s incentives.unknown_offer_fields, its key), then inserts or replaces it on every partition; true when it is new; fails if any partition fails; then moves the data of every participant whose placement changed (an offer at a new level of a hierarchy)';

-- The types of groups (docs/reference.md, Participant hierarchies;
-- docs/scaling.md, Participant groups): reference data, identical on
-- every partition, so that an offer with "group_type" aggregates at the
-- same levels on each.  A key that is not well formed or equal to another
-- but for letter case is refused by every partition alike, and so stored
-- nowhere.  A type can change placements: the units a coordinator places
-- follow the levels the offers aggregate at (docs/scaling.md).

CREATE OR REPLACE FUNCTION incentives_cluster.put_group(group_key text, group_type text, label text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_group;
$$;
COMMENT ON FUNCTION incentives_cluster.put_group(text, text, text) IS
  'incentives.put_group on every partition';

CREATE OR REPLACE FUNCTION incentives.put_group(group_key text, group_type text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    is_new boolean;
BEGIN
    is_new := incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_group($1, $2, $3)),
                                        format('put_group(%s)', $1));
    -- a group's type says which levels an offer's group_type joins
    PERFORM incentives_cluster.place_again('put_group');
    RETURN is_new;
END
$$;
COMMENT ON FUNCTION incentives.put_group(text, text, text) IS
  'Inserts or replaces the type and label of a group on every partition; true when it is new; fails if any partition fails; then moves the data of every participant whose placement changed';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_group(group_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_group;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_group(text) IS
  'incentives.delete_group on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_group(group_key text)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    existed boolean;
BEGIN
    existed := incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_group($1)),
                                         format('delete_group(%s)', $1));
    PERFORM incentives_cluster.place_again('delete_group');
    RETURN existed;
END
$$;
COMMENT ON FUNCTION incentives.delete_group(text) IS
  'Deletes the type and label of a group on every partition (its memberships stay); true when it existed; fails if any partition fails; then moves the data of every participant whose placement changed';

-- The product catalog (docs/reference.md, Products; docs/scaling.md):
-- reference data, identical on every partition.  A cycle, a key equal to
-- another but for letter case or an overlapping window is refused by the
-- tables' triggers on every partition alike (they hold the same catalog),
-- and so stored nowhere.

CREATE OR REPLACE FUNCTION incentives_cluster.put_product(product_key text, parent_key text, label text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_product;
$$;
COMMENT ON FUNCTION incentives_cluster.put_product(text, text, text) IS
  'incentives.put_product on every partition';

CREATE OR REPLACE FUNCTION incentives.put_product(product_key text, parent_key text DEFAULT NULL,
                                                  label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_product($1, $2, $3)),
                                     format('put_product(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.put_product(text, text, text) IS
  'Inserts or replaces a product node (its parent and label) on every partition; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_product(product_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_product;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_product(text) IS
  'incentives.delete_product on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_product(product_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_product($1)),
                                     format('delete_product(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_product(text) IS
  'Deletes a product node on every partition (refused while it has children or SKU windows); true when it existed; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.put_sku_product(sku_key text, product_key text,
                                                              start_date date, end_date date)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_sku_product;
$$;
COMMENT ON FUNCTION incentives_cluster.put_sku_product(text, text, date, date) IS
  'incentives.put_sku_product on every partition';

CREATE OR REPLACE FUNCTION incentives.put_sku_product(sku_key text, product_key text,
                                                      start_date date DEFAULT '-infinity',
                                                      end_date date DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_sku_product($1, $2, $3, $4)),
                                     format('put_sku_product(%L, %L, %L)', $1, $2, $3))
$$;
COMMENT ON FUNCTION incentives.put_sku_product(text, text, date, date) IS
  'Inserts a window of a SKU in a product node on every partition, or replaces the end_date of the one starting that day (an overlapping window is refused); true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_sku_product(sku_key text, product_key text, start_date date)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_sku_product;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_sku_product(text, text, date) IS
  'incentives.delete_sku_product on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_sku_product(sku_key text, product_key text, start_date date)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_sku_product($1, $2, $3)),
                                     format('delete_sku_product(%L, %L, %L)', $1, $2, $3))
$$;
COMMENT ON FUNCTION incentives.delete_sku_product(text, text, date) IS
  'Deletes the window of a SKU in a product node starting that day on every partition; true when it existed; fails if any partition fails';

-- Exchange rates (docs/reference.md, Currencies; docs/scaling.md):
-- reference data, identical on every partition, so that a transaction is
-- converted at the same rate whichever partition holds it.  A rate the
-- table's checks refuse is refused by every partition alike, and so
-- stored nowhere.  A rate changes no placement.

CREATE OR REPLACE FUNCTION incentives_cluster.put_exchange_rate(from_currency text, to_currency text,
                                                                rate_date date, rate numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_exchange_rate;
$$;
COMMENT ON FUNCTION incentives_cluster.put_exchange_rate(text, text, date, numeric) IS
  'incentives.put_exchange_rate on every partition';

CREATE OR REPLACE FUNCTION incentives.put_exchange_rate(from_currency text, to_currency text,
                                                        rate_date date, rate numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_exchange_rate($1, $2, $3, $4)),
                                     format('put_exchange_rate(%L, %L, %L)', $1, $2, $3))
$$;
COMMENT ON FUNCTION incentives.put_exchange_rate(text, text, date, numeric) IS
  'Inserts the rate of a pair of currencies from a day on every partition, or replaces the rate of that day; true when it is new; fails if any partition fails';

CREATE OR REPLACE FUNCTION incentives_cluster.delete_exchange_rate(from_currency text, to_currency text,
                                                                   rate_date date)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.delete_exchange_rate;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_exchange_rate(text, text, date) IS
  'incentives.delete_exchange_rate on every partition';

CREATE OR REPLACE FUNCTION incentives.delete_exchange_rate(from_currency text, to_currency text, rate_date date)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_exchange_rate($1, $2, $3)),
                                     format('delete_exchange_rate(%L, %L, %L)', $1, $2, $3))
$$;
COMMENT ON FUNCTION incentives.delete_exchange_rate(text, text, date) IS
  'Deletes the rate of a pair of currencies from that day on every partition; true when it existed; fails if any partition fails';
