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

CREATE OR REPLACE FUNCTION incentives.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_offer($1)),
                                     format('delete_offer(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_offer(text) IS
  'Deletes an offer on every partition; true when it existed; fails if any partition fails';

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
    RETURN incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_offer_under(document, NULLIF(fields, ''))),
                                     format('put_offer(%s)', document ->> 'offer_key'));
END
$$;
COMMENT ON FUNCTION incentives.put_offer(jsonb) IS
  'Checks an offer on one partition (its document under the coordinator''s incentives.unknown_offer_fields, its key), then inserts or replaces it on every partition; true when it is new; fails if any partition fails';
