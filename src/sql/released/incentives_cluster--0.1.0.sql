-- incentives_cluster: the coordinator of a sharded incentives deployment
-- (issue 6, docs/scaling.md).  mk/cluster.mk turns this file into
-- incentives_cluster--<version>.sql.
--
-- Layout.  Every shard is a PostgreSQL database with the incentives
-- extension and a share of the transactions: a participant's transactions
-- all live on partition hashtext(participant_key) & (partitions - 1), which
-- is PL/Proxy's own mapping of a RUN ON hash.  Offers, SKUs, unit
-- conversions and participant properties are identical on every shard.  A
-- participant's earnings depend only on its own transactions and properties
-- (SPEC §2), so a shard computes them exactly, with no cross-shard work.
--
-- This extension goes on the coordinator (with plproxy) and creates, in
-- schema incentives, functions with the same names, arguments and result
-- columns as the shards' -- PL/Proxy calls the remote function by the proxy
-- function's own name and result columns.  The one difference is the type
-- of `transactions`: text here, resolved to a relation on each shard (the
-- coordinator has no tables).
--
-- The cluster itself is configuration, not part of the extension: a
-- PL/Proxy SQL/MED server named incentives_cluster with one pN option per
-- partition (a power of 2), and user mappings, e.g.
--
--   CREATE SERVER incentives_cluster FOREIGN DATA WRAPPER plproxy
--     OPTIONS (p0 'dbname=incentives host=10.0.0.11', p1 'dbname=incentives host=10.0.0.12');
--   CREATE USER MAPPING FOR PUBLIC SERVER incentives_cluster
--     OPTIONS (user 'incentives_app', password '...');
--   GRANT USAGE ON FOREIGN SERVER incentives_cluster TO incentives_app;
--   GRANT USAGE ON SCHEMA incentives, incentives_cluster TO incentives_app;

\echo Use "CREATE EXTENSION incentives_cluster" to load this file. \quit

COMMENT ON SCHEMA incentives IS
  'Channel incentives (rebates), sharded: PL/Proxy functions that run the incentives extension''s functions on the shards of cluster incentives_cluster';

CREATE SCHEMA incentives_cluster;
COMMENT ON SCHEMA incentives_cluster IS
  'incentives_cluster internals: the RUN ON ALL / RUN ON ANY proxies behind incentives.put_*, delete_*, refresh_earnings and cluster_check()';
-- Like the shards' extension, nothing for PUBLIC: a DBA grants USAGE on
-- both schemas (and on the foreign server) to the roles that use the
-- cluster (docs/scaling.md).
REVOKE ALL ON SCHEMA incentives FROM PUBLIC;

------------------------------------------------------------------------
-- The earning row, exactly as on the shards (SPEC §4.1)
------------------------------------------------------------------------

CREATE TYPE incentives.earning AS (
    participant_key                text,
    offer_key                      text,
    offer_calculator               text,
    sku_key                        text,
    incentive_rate_key             text,
    incentive_rate_measure         text,
    incentive_rate_value           numeric,
    offer_sku_pay_rate             numeric,
    transaction_id                 text,
    provided_quantity              numeric,
    provided_uom_key               text,
    provided_amount                numeric,
    incentivized_quantity          numeric,
    incentivized_amount            numeric,
    incentive_amount               numeric,
    incentive_contribution_percent numeric,
    incentive_effective_rate       numeric
);
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (SPEC §4.1); the shards'' type';
COMMENT ON COLUMN incentives.earning.participant_key IS 'The participant (retailer) who earns';
COMMENT ON COLUMN incentives.earning.offer_key IS 'The offer';
COMMENT ON COLUMN incentives.earning.offer_calculator IS 'The offer''s calculator_key';
COMMENT ON COLUMN incentives.earning.sku_key IS 'The transaction''s SKU';
COMMENT ON COLUMN incentives.earning.incentive_rate_key IS 'Standard: the entry key; stepped: the tier key; stacked: the stack key';
COMMENT ON COLUMN incentives.earning.incentive_rate_measure IS 'percent or dollars';
COMMENT ON COLUMN incentives.earning.incentive_rate_value IS 'The rate as written in the offer (tier value for stepped, pool for fixed_amount)';
COMMENT ON COLUMN incentives.earning.offer_sku_pay_rate IS 'Rate as a multiplier: rate/100 for percent, rate for dollars, pool / sum of base amounts (6 places) for fixed_amount';
COMMENT ON COLUMN incentives.earning.transaction_id IS 'The earning transaction';
COMMENT ON COLUMN incentives.earning.provided_quantity IS 'The transaction''s quantity, as stored';
COMMENT ON COLUMN incentives.earning.provided_uom_key IS 'The transaction''s unit of measure';
COMMENT ON COLUMN incentives.earning.provided_amount IS 'The transaction''s amount, as stored';
COMMENT ON COLUMN incentives.earning.incentivized_quantity IS 'Quantity in the SKU''s unit (times the contribution factor for stacked), 6 places';
COMMENT ON COLUMN incentives.earning.incentivized_amount IS 'Base amount: quantity x program price when the offer prices the SKU, else the amount (times the contribution factor for stacked), 2 places';
COMMENT ON COLUMN incentives.earning.incentive_amount IS 'What the row earns, 2 places, half away from zero';
COMMENT ON COLUMN incentives.earning.incentive_contribution_percent IS 'Stacked: overlap / set coverage (<= 1); 1 otherwise; 6 places';
COMMENT ON COLUMN incentives.earning.incentive_effective_rate IS 'incentive_amount / incentivized_amount from the reported figures, 4 places; NULL when incentivized_amount is 0';

------------------------------------------------------------------------
-- Placement: which partition holds a participant
------------------------------------------------------------------------

CREATE FUNCTION incentives.cluster_partitions()
RETURNS integer
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n integer;
BEGIN
    SELECT count(*) INTO n
      FROM pg_foreign_server s
      JOIN pg_foreign_data_wrapper w ON w.oid = s.srvfdw AND w.fdwname = 'plproxy',
           unnest(s.srvoptions) AS o
     WHERE s.srvname = 'incentives_cluster' AND o ~ '^p[0-9]+=';
    IF n = 0 THEN
        RAISE EXCEPTION 'PL/Proxy cluster "incentives_cluster" is not configured'
              USING ERRCODE = 'undefined_object',
                    HINT = 'CREATE SERVER incentives_cluster FOREIGN DATA WRAPPER plproxy OPTIONS (p0 ''dbname=... host=...'', p1 ''...''); see docs/scaling.md';
    END IF;
    RETURN n;
END
$$;
COMMENT ON FUNCTION incentives.cluster_partitions() IS
  'Number of partitions of the PL/Proxy cluster incentives_cluster (its p0, p1, ... server options; a power of 2)';

CREATE FUNCTION incentives.partition_of(participant_key text)
RETURNS integer
LANGUAGE sql STABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT hashtext($1) & (incentives.cluster_partitions() - 1)
$$;
COMMENT ON FUNCTION incentives.partition_of(text) IS
  'The partition that holds a participant''s transactions: hashtext(participant_key) & (partitions - 1), PL/Proxy''s mapping of RUN ON hashtext(participant_key); for bulk loaders';

CREATE FUNCTION incentives.partitions_for(participant_key text)
RETURNS SETOF integer
LANGUAGE sql STABLE
ROWS 1
AS $$
    SELECT pg_catalog.hashtext($1) WHERE $1 IS NOT NULL
    UNION ALL
    SELECT pg_catalog.generate_series(0, incentives.cluster_partitions() OPERATOR(pg_catalog.-) 1) WHERE $1 IS NULL
$$;
COMMENT ON FUNCTION incentives.partitions_for(text) IS
  'RUN ON target of the calculations: the participant''s hash when one is given (its partition), else every partition number (all of them)';

------------------------------------------------------------------------
-- The calculations: one participant on its partition, everyone on all
-- partitions (rows merged; any failing partition fails the call)
------------------------------------------------------------------------

CREATE FUNCTION incentives.incentive_calculate(
    participant_key text   DEFAULT NULL,
    properties      jsonb  DEFAULT '{}',
    offer_keys      text[] DEFAULT NULL,
    transactions    text   DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.earning
LANGUAGE plproxy
ROWS 1000
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], text) IS
  'Earnings computed on the shards: one participant on its partition, all participants (NULL) on every partition; transactions names a relation on the shards';

CREATE FUNCTION incentives.incentive_diagnostics(
    participant_key text   DEFAULT NULL,
    properties      jsonb  DEFAULT '{}',
    offer_keys      text[] DEFAULT NULL,
    transactions    text   DEFAULT 'incentives.transactions')
RETURNS TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], text) IS
  'Diagnostics computed on the shards: one participant on its partition, all participants (NULL) on every partition';

CREATE FUNCTION incentives.tier_progress(
    participant_key text  DEFAULT NULL,
    properties      jsonb DEFAULT '{}',
    transactions    text  DEFAULT 'incentives.transactions')
RETURNS TABLE (
    participant_key      text,
    offer_key            text,
    threshold_type       text,
    property_key         text,
    threshold_value      numeric,
    current_rate_key     text,
    current_threshold    numeric,
    next_rate_key        text,
    next_threshold       numeric,
    gap_to_next          numeric,
    earning_transactions integer,
    earned_now           numeric,
    earned_at_next       numeric)
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, text) IS
  'Tier progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE FUNCTION incentives.stack_progress(
    participant_key text DEFAULT NULL,
    transactions    text DEFAULT 'incentives.transactions')
RETURNS TABLE (
    participant_key text,
    offer_key       text,
    stack_key       text,
    sku_set_key     text,
    coverage_unit   text,
    coverage        numeric,
    overlap         numeric,
    factor          numeric,
    earns           boolean,
    uncovered       numeric,
    shortfall       numeric)
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.stack_progress(text, text) IS
  'Stack progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

-- One participant, always: a NULL participant_key goes to one partition,
-- which raises the function's own error.
CREATE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb DEFAULT '{}',
    transactions    text  DEFAULT 'incentives.transactions')
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON pg_catalog.hashtext(coalesce(participant_key, ''));
$$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, text) IS
  'incentive_explain on the participant''s partition';

CREATE FUNCTION incentives.request_hash(request jsonb)
RETURNS integer
LANGUAGE sql VOLATILE
AS $$
    SELECT coalesce(pg_catalog.hashtext($1 OPERATOR(pg_catalog.->>) 'participant_key'),
                    (pg_catalog.random() OPERATOR(pg_catalog.*) 2147483647)::integer)
$$;
COMMENT ON FUNCTION incentives.request_hash(jsonb) IS
  'RUN ON target of calculate(): the request''s participant''s partition (its stored transactions and properties), any partition when it names none';

CREATE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.request_hash(request);
$$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'The JSON what-if entry point, on the partition of the request''s participant_key (any partition without one)';

-- refresh_earnings: each shard materializes its own participants' earnings
-- (incentives.earnings lives on the shards).  One transaction per shard:
-- when a shard fails the call fails, that shard keeps its previous
-- earnings, and the others keep their new ones -- call it again.
CREATE FUNCTION incentives_cluster.refresh_earnings(
    participant_key text,
    transactions    text,
    progress_every  integer)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
    TARGET incentives.refresh_earnings_run;
$$;
COMMENT ON FUNCTION incentives_cluster.refresh_earnings(text, text, integer) IS
  'incentives.refresh_earnings_run on the participant''s partition, or on every partition (NULL)';

CREATE PROCEDURE incentives.refresh_earnings(
    participant_key text    DEFAULT NULL,
    transactions    text    DEFAULT 'incentives.transactions',
    progress_every  integer DEFAULT 1000)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.refresh_earnings(participant_key, transactions, progress_every) LOOP
        RAISE NOTICE 'refresh_earnings: shard run % %: % participants, % rows, total %',
              r.run_id, r.status, r.participants, r.rows, r.total_incentive;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, text, integer) IS
  'Refreshes incentives.earnings on the shards: the participant''s partition, or every partition in parallel (NULL); each shard atomically';

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

CREATE FUNCTION incentives_cluster.offer_error(document jsonb)
RETURNS text
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives.offer_error;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_error(jsonb) IS
  'incentives.offer_error on any one partition: validates an offer before it is sent to all of them';

CREATE FUNCTION incentives_cluster.put_offer(document jsonb)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.put_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.put_offer(jsonb) IS 'incentives.put_offer on every partition';

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

CREATE FUNCTION incentives_cluster.delete_offer(offer_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.delete_offer;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_offer(text) IS 'incentives.delete_offer on every partition';

CREATE FUNCTION incentives.delete_offer(offer_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_offer($1)),
                                     format('delete_offer(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_offer(text) IS
  'Deletes an offer on every partition; true when it existed; fails if any partition fails';

CREATE FUNCTION incentives_cluster.put_sku(sku_key text, uom_key text, label text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.put_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.put_sku(text, text, text) IS 'incentives.put_sku on every partition';

CREATE FUNCTION incentives.put_sku(sku_key text, uom_key text, label text DEFAULT NULL)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_sku($1, $2, $3)),
                                     format('put_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.put_sku(text, text, text) IS
  'Inserts or replaces a SKU on every partition; true when it is new; fails if any partition fails';

CREATE FUNCTION incentives_cluster.delete_sku(sku_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.delete_sku;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_sku(text) IS 'incentives.delete_sku on every partition';

CREATE FUNCTION incentives.delete_sku(sku_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_sku($1)),
                                     format('delete_sku(%s)', $1))
$$;
COMMENT ON FUNCTION incentives.delete_sku(text) IS
  'Deletes a SKU on every partition; true when it existed; fails if any partition fails';

CREATE FUNCTION incentives_cluster.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.put_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.put_uom_conversion(text, text, numeric) IS 'incentives.put_uom_conversion on every partition';

CREATE FUNCTION incentives.put_uom_conversion(from_uom_key text, to_uom_key text, factor numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_uom_conversion($1, $2, $3)),
                                     format('put_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_uom_conversion(text, text, numeric) IS
  'Inserts or replaces a unit conversion on every partition; true when it is new; fails if any partition fails';

CREATE FUNCTION incentives_cluster.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.delete_uom_conversion;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_uom_conversion(text, text) IS 'incentives.delete_uom_conversion on every partition';

CREATE FUNCTION incentives.delete_uom_conversion(from_uom_key text, to_uom_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_uom_conversion($1, $2)),
                                     format('delete_uom_conversion(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_uom_conversion(text, text) IS
  'Deletes a unit conversion on every partition; true when it existed; fails if any partition fails';

CREATE FUNCTION incentives_cluster.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.put_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.put_participant_property(text, text, numeric) IS 'incentives.put_participant_property on every partition';

CREATE FUNCTION incentives.put_participant_property(participant_key text, property_key text, value numeric)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.put_participant_property($1, $2, $3)),
                                     format('put_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.put_participant_property(text, text, numeric) IS
  'Inserts or replaces a stored participant property on every partition; true when it is new; fails if any partition fails';

CREATE FUNCTION incentives_cluster.delete_participant_property(participant_key text, property_key text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives.delete_participant_property;
$$;
COMMENT ON FUNCTION incentives_cluster.delete_participant_property(text, text) IS 'incentives.delete_participant_property on every partition';

CREATE FUNCTION incentives.delete_participant_property(participant_key text, property_key text)
RETURNS boolean
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives_cluster.agreed(ARRAY(SELECT incentives_cluster.delete_participant_property($1, $2)),
                                     format('delete_participant_property(%s, %s)', $1, $2))
$$;
COMMENT ON FUNCTION incentives.delete_participant_property(text, text) IS
  'Deletes a stored participant property on every partition; true when it existed; fails if any partition fails';

------------------------------------------------------------------------
-- Transactions: each on the partition of its participant
------------------------------------------------------------------------

CREATE FUNCTION incentives.put_transaction(
    transaction_id   text,
    participant_key  text,
    transaction_type text,
    transaction_date date,
    sku_key          text,
    quantity         numeric,
    uom_key          text,
    amount           numeric)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON pg_catalog.hashtext(participant_key);
$$;
COMMENT ON FUNCTION incentives.put_transaction(text, text, text, date, text, numeric, text, numeric) IS
  'Inserts or replaces one transaction on the partition of its participant; true when it is new';

CREATE FUNCTION incentives.delete_transaction(participant_key text, transaction_id text)
RETURNS boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON pg_catalog.hashtext(participant_key);
$$;
COMMENT ON FUNCTION incentives.delete_transaction(text, text) IS
  'Deletes one transaction of a participant on the participant''s partition; true when it existed';

CREATE FUNCTION incentives_cluster.put_transactions(transactions jsonb[])
RETURNS SETOF bigint
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    SPLIT transactions;
    RUN ON pg_catalog.hashtext(transactions ->> 'participant_key');
    TARGET incentives.put_transactions;
$$;
COMMENT ON FUNCTION incentives_cluster.put_transactions(jsonb[]) IS
  'incentives.put_transactions with the array split by partition (each element to the partition of its participant_key)';

CREATE FUNCTION incentives.put_transactions(transactions jsonb[])
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bad jsonb;
BEGIN
    IF coalesce(cardinality(transactions), 0) = 0 THEN
        RETURN 0;
    END IF;
    SELECT t INTO bad FROM unnest(transactions) AS t
     WHERE jsonb_typeof(t) IS DISTINCT FROM 'object' OR t ->> 'participant_key' IS NULL
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'a transaction must be a JSON object with a participant_key: %', bad
              USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN (SELECT sum(n) FROM incentives_cluster.put_transactions(transactions) AS n);
END
$$;
COMMENT ON FUNCTION incentives.put_transactions(jsonb[]) IS
  'Inserts or replaces transactions (JSON objects with the transaction columns), each on the partition of its participant; returns how many; fails if any partition fails';

CREATE FUNCTION incentives.load_transactions(transactions jsonb)
RETURNS bigint
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT incentives.put_transactions(ARRAY(SELECT jsonb_array_elements($1)))
$$;
COMMENT ON FUNCTION incentives.load_transactions(jsonb) IS
  'Inserts or replaces a JSON array of transactions, each on the partition of its participant; returns how many';

------------------------------------------------------------------------
-- Checks
------------------------------------------------------------------------

CREATE FUNCTION incentives_cluster.shard_summary(partitions integer, partition integer)
RETURNS TABLE (object text, row_count bigint, digest text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    TARGET incentives.shard_summary;
$$;
COMMENT ON FUNCTION incentives_cluster.shard_summary(integer, integer) IS
  'incentives.shard_summary on one partition';

CREATE TYPE incentives_cluster.shard_row AS (
    partition integer,
    object    text,
    row_count bigint,
    digest    text
);
COMMENT ON TYPE incentives_cluster.shard_row IS 'One row of incentives.cluster_check()';

CREATE FUNCTION incentives.cluster_check()
RETURNS SETOF incentives_cluster.shard_row
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n        integer := incentives.cluster_partitions();
    summary  incentives_cluster.shard_row[];
    problems text[];
BEGIN
    summary := ARRAY(
        SELECT ROW(p, s.object, s.row_count, s.digest)::incentives_cluster.shard_row
          FROM generate_series(0, n - 1) AS p,
               LATERAL incentives_cluster.shard_summary(n, p) AS s);

    SELECT array_agg(problem ORDER BY problem) INTO problems
      FROM (SELECT format('%s differ between partitions (%s)', object,
                          string_agg(format('p%s: %s rows, md5 %s', partition, row_count, digest), '; '
                                     ORDER BY partition)) AS problem
              FROM unnest(summary)
             WHERE digest IS NOT NULL
             GROUP BY object
            HAVING count(DISTINCT digest) > 1
            UNION ALL
            SELECT format('%s transactions of partition %s belong to another partition', row_count, partition)
              FROM unnest(summary)
             WHERE object = 'misplaced_transactions' AND row_count > 0) x;
    IF problems IS NOT NULL THEN
        RAISE EXCEPTION 'incentives_cluster is inconsistent: %', array_to_string(problems, '; ')
              USING ERRCODE = 'data_exception';
    END IF;
    RETURN QUERY SELECT * FROM unnest(summary);
END
$$;
COMMENT ON FUNCTION incentives.cluster_check() IS
  'Compares the partitions: reference tables must be identical everywhere and every transaction on the partition of its participant; raises naming what differs, else returns the per-partition counts and digests';
