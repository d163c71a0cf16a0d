------------------------------------------------------------------------
-- The calculations: one participant on its partition, everyone on all
-- partitions (rows merged; any failing partition fails the call)
------------------------------------------------------------------------

-- The calculations take a single node's arguments, but for transactions:
-- the name of a relation (text), resolved on each shard.
DO $calculations$
DECLARE
    participant_key CONSTANT text := 'participant_key text DEFAULT NULL';
    properties      CONSTANT text := 'properties jsonb DEFAULT ''{}''';
    offer_keys      CONSTANT text := 'offer_keys text[] DEFAULT NULL';
    transactions    CONSTANT text := 'transactions text DEFAULT ''incentives.transactions''';
    as_of           CONSTANT text := 'as_of timestamptz DEFAULT NULL';
    through_date    CONSTANT text := 'through_date date DEFAULT NULL';
BEGIN
    PERFORM incentives_cluster.create_proxy(p.name, p.arguments, p.result,
                                            'incentives.partitions_for(participant_key)', NULL, p.comment, p.rows)
       FROM (VALUES
         ('incentives.incentive_calculate',
          ARRAY[participant_key, properties, offer_keys, transactions, as_of, through_date],
          'SETOF incentives.earning', 1000,
          'Earnings computed on the shards: one participant on its partition, all participants (NULL) on every partition; transactions names a relation on the shards; as_of reads each shard''s offer history, through_date limits the transactions'),
         ('incentives.incentive_diagnostics',
          ARRAY[participant_key, properties, offer_keys, transactions, as_of, through_date],
          'TABLE (participant_key text, offer_key text, strategy_key text, diagnostics jsonb)', 100,
          'Diagnostics computed on the shards: one participant on its partition, all participants (NULL) on every partition'),
         ('incentives.tier_progress',
          ARRAY[participant_key, properties, transactions, as_of, through_date],
          $$TABLE (
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
              earned_at_next       numeric,
              tier_mode            text,
              blended_rate         numeric,
              blended_rate_at_next numeric,
              qualified            boolean,
              requirement_gaps     jsonb,
              limit_applied        text)$$, 100,
          'Tier progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)'),
         ('incentives.requirement_progress',
          ARRAY[participant_key, properties, transactions, as_of, through_date],
          $$TABLE (
              participant_key  text,
              offer_key        text,
              strategy_key     text,
              requirement_key  text,
              requirement_type text,
              property_key     text,
              value            numeric,
              minimum          numeric,
              gap              numeric,
              met              boolean,
              qualified        boolean)$$, 100,
          'Requirement progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)'),
         ('incentives.stack_progress',
          ARRAY[participant_key, transactions, as_of, through_date],
          $$TABLE (
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
              shortfall       numeric)$$, 100,
          'Stack progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)'))
         AS p(name, arguments, result, rows, comment);

    -- One participant, always: a NULL participant_key goes to one
    -- partition, which raises the function's own error.
    PERFORM incentives_cluster.create_proxy(
        'incentives.incentive_explain',
        ARRAY['participant_key text', 'offer_key text', properties, transactions, as_of, through_date],
        'jsonb', 'pg_catalog.hashtext(coalesce(participant_key, ''''))', NULL,
        'incentive_explain on the participant''s partition');
END
$calculations$;

CREATE FUNCTION incentives.request_hash(request jsonb)
RETURNS integer
LANGUAGE sql VOLATILE
AS $$
    SELECT coalesce(pg_catalog.hashtext($1 OPERATOR(pg_catalog.->>) 'participant_key'),
                    (pg_catalog.random() OPERATOR(pg_catalog.*) 2147483647)::integer)
$$;
COMMENT ON FUNCTION incentives.request_hash(jsonb) IS
  'RUN ON target of calculate(): the request''s participant''s partition (its stored transactions and properties), any partition when it names none';

SELECT incentives_cluster.create_proxy(
    'incentives.calculate', ARRAY['request jsonb'], 'jsonb', 'incentives.request_hash(request)', NULL,
    'The JSON what-if entry point, on the partition of the request''s participant_key (any partition without one)');

-- The procedures of a single node that write on the shards: each is a
-- procedure of the same name and arguments that calls
-- incentives_internal.<name>_run on the participant's partition, or on
-- every partition (NULL), through the proxy incentives_cluster.<name>,
-- and reports each shard's row as a NOTICE.
--
--   refresh_earnings: each shard materializes its own participants'
--     earnings (incentives.earnings lives on the shards).  One transaction
--     per shard: when a shard fails the call fails, that shard keeps its
--     previous earnings, and the others keep their new ones -- call it
--     again.
--   settle: each shard writes the statement of its own participants (one
--     transaction per shard, serialized there against other settles).
--     When one shard fails the call fails and that shard has no statement;
--     the others keep theirs: call it again with the same date (a shard
--     that has one settles nothing new on the same date).
DO $procedures$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT * FROM (VALUES
        ('refresh_earnings',
         ARRAY['participant_key text    DEFAULT NULL',
               'transactions    text    DEFAULT ''incentives.transactions''',
               'progress_every  integer DEFAULT 1000',
               'on_error        text    DEFAULT ''raise''',
               'changed_only    boolean DEFAULT false'],
         'TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text, exceptions integer)',
         $$'refresh_earnings: shard run % %: % participants, % rows, total %, % exceptions',
              r.run_id, r.status, r.participants, r.rows, r.total_incentive, r.exceptions$$,
         'Refreshes incentives.earnings on the shards: the participant''s partition, or every partition in parallel (NULL); each shard atomically; on_error and changed_only as on a single node'),
        ('settle',
         ARRAY['statement_date  date',
               'participant_key text DEFAULT NULL'],
         'TABLE (statement_id bigint, lines bigint, amount_due numeric)',
         $$'settle: shard statement %: % lines, % due', r.statement_id, r.lines, r.amount_due$$,
         'Settles on the shards: the participant''s partition, or every partition (NULL); each shard writes its own statement atomically'))
        AS x(name, arguments, result, notice, comment)
    LOOP
        -- the proxy passes every argument: it has no defaults
        PERFORM incentives_cluster.create_proxy(
            'incentives_cluster.' || p.name,
            ARRAY(SELECT regexp_replace(a, ' +DEFAULT .*', '') FROM unnest(p.arguments) AS a),
            p.result, 'incentives.partitions_for(participant_key)', format('incentives_internal.%s_run', p.name),
            format('incentives.%s_run on the participant''s partition, or on every partition (NULL)', p.name));
        EXECUTE format($sql$
            CREATE PROCEDURE incentives.%1$I(%2$s)
            LANGUAGE plpgsql
            SET search_path = pg_catalog, pg_temp
            AS $$
            DECLARE
                r record;
            BEGIN
                FOR r IN SELECT * FROM incentives_cluster.%1$I(%3$s) LOOP
                    RAISE NOTICE %4$s;
                END LOOP;
            END
            $$$sql$,
            p.name, array_to_string(p.arguments, ', '),
            (SELECT string_agg(split_part(a, ' ', 1), ', ') FROM unnest(p.arguments) AS a), p.notice);
        EXECUTE format('COMMENT ON PROCEDURE incentives.%I IS %L', p.name, p.comment);
    END LOOP;
END
$procedures$;
