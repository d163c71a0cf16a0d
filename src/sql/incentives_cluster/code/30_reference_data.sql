------------------------------------------------------------------------
-- Reference data: the same change on every partition
------------------------------------------------------------------------

-- What the shards answered: true when any shard answered true (put: the
-- row was new; delete: it existed); a warning when they disagreed, which
-- means the shards had diverged before this change (the change itself has
-- now been applied everywhere).
CREATE FUNCTION incentives_cluster.agreed(answers boolean[], change text)
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

SELECT incentives_cluster.create_proxy(
    'incentives_cluster.offer_error', ARRAY['document jsonb'], 'text', 'ANY', 'incentives.offer_error',
    'incentives.offer_error on any one partition: validates an offer before it is sent to all of them');

-- A change of reference data goes to every partition: for each,
-- incentives_cluster.<change> calls incentives_internal.<change> on all
-- of them, and incentives.<change> combines their answers
-- (incentives_cluster.agreed), naming the row by its key when they
-- disagreed.  (incentives.put_offer, below, validates the offer first.)
DO $reference_data$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT * FROM (VALUES
               ('put_offer', ARRAY['document jsonb'], NULL::integer, NULL),
               ('delete_offer', ARRAY['offer_key text'], 1,
                'Deletes an offer on every partition; true when it existed; fails if any partition fails'),
               ('put_sku', ARRAY['sku_key text', 'uom_key text', 'label text DEFAULT NULL'], 1,
                'Inserts or replaces a SKU on every partition; true when it is new; fails if any partition fails'),
               ('delete_sku', ARRAY['sku_key text'], 1,
                'Deletes a SKU on every partition; true when it existed; fails if any partition fails'),
               ('put_uom_conversion', ARRAY['from_uom_key text', 'to_uom_key text', 'factor numeric'], 2,
                'Inserts or replaces a unit conversion on every partition; true when it is new; fails if any partition fails'),
               ('delete_uom_conversion', ARRAY['from_uom_key text', 'to_uom_key text'], 2,
                'Deletes a unit conversion on every partition; true when it existed; fails if any partition fails'),
               ('put_participant_property', ARRAY['participant_key text', 'property_key text', 'value numeric'], 2,
                'Inserts or replaces a stored participant property on every partition; true when it is new; fails if any partition fails'),
               ('delete_participant_property', ARRAY['participant_key text', 'property_key text'], 2,
                'Deletes a stored participant property on every partition; true when it existed; fails if any partition fails'))
             AS x(change, arguments, key_arguments, comment)
    LOOP
        -- the proxy passes every argument: it has no defaults
        PERFORM incentives_cluster.create_proxy(
            'incentives_cluster.' || c.change,
            ARRAY(SELECT regexp_replace(a, ' DEFAULT .*', '') FROM unnest(c.arguments) AS a),
            'SETOF boolean', 'ALL', 'incentives_internal.' || c.change,
            format('incentives.%s on every partition', c.change));
        CONTINUE WHEN c.comment IS NULL;
        -- incentives.<change>(...): the answers, and the change named as
        -- <change>(key, ...) in a warning
        EXECUTE format($sql$
            CREATE FUNCTION incentives.%1$I(%2$s)
            RETURNS boolean
            LANGUAGE sql
            SET search_path = pg_catalog, pg_temp
            AS $$
                SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.%1$I(%3$s)),
                                                 format(%4$L, %5$s))
            $$$sql$,
            c.change, array_to_string(c.arguments, ', '),
            (SELECT string_agg('$' || n, ', ') FROM generate_series(1, cardinality(c.arguments)) AS n),
            c.change || '(' || (SELECT string_agg('%s', ', ') FROM generate_series(1, c.key_arguments)) || ')',
            (SELECT string_agg('$' || n, ', ') FROM generate_series(1, c.key_arguments) AS n));
        EXECUTE format('COMMENT ON FUNCTION incentives.%I IS %L', c.change, c.comment);
    END LOOP;
END
$reference_data$;

CREATE FUNCTION incentives.put_offer(document jsonb)
RETURNS boolean
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    problem text := incentives_cluster.offer_error(document);
BEGIN
    -- An invalid offer is rejected before any partition stores anything.
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION '%', problem USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_offer(document)),
                                     format('put_offer(%s)', document ->> 'offer_key'));
END
$$;
COMMENT ON FUNCTION incentives.put_offer(jsonb) IS
  'Validates an offer on one partition, then inserts or replaces it on every partition; true when it is new; fails if any partition fails';
