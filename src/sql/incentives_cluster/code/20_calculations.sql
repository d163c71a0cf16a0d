------------------------------------------------------------------------
-- The calculations: one participant on its partition, everyone on all
-- partitions (rows merged; any failing partition fails the call)
--
-- Each is a PL/Proxy function with a single node's name, arguments and
-- result, but for transactions: the name of a relation (text), resolved on
-- each shard.  Without a TARGET, PL/Proxy calls the function of the same
-- name and arguments on the shard.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives.incentive_calculate(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.earning
LANGUAGE plproxy
ROWS 1000
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_calculate(text, jsonb, text[], text, timestamptz, date) IS
  'Earnings computed on the shards: one participant on its partition, all participants (NULL) on every partition; transactions names a relation on the shards; as_of reads each shard''s offer history, through_date limits the transactions';

CREATE OR REPLACE FUNCTION incentives.incentive_diagnostics(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    offer_keys      text[]      DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.diagnostics_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.incentive_diagnostics(text, jsonb, text[], text, timestamptz, date) IS
  'Diagnostics computed on the shards: one participant on its partition, all participants (NULL) on every partition';

CREATE OR REPLACE FUNCTION incentives.tier_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.tier_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.tier_progress(text, jsonb, text, timestamptz, date) IS
  'Tier progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.requirement_progress(
    participant_key text        DEFAULT NULL,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.requirement_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.requirement_progress(text, jsonb, text, timestamptz, date) IS
  'Requirement progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.stack_progress(
    participant_key text        DEFAULT NULL,
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS SETOF incentives.stack_progress_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.stack_progress(text, text, timestamptz, date) IS
  'Stack progress computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

CREATE OR REPLACE FUNCTION incentives.forecast(
    as_of_date      date,
    participant_key text   DEFAULT NULL,
    offer_keys      text[] DEFAULT NULL,
    transactions    text   DEFAULT 'incentives.transactions')
RETURNS SETOF incentives.forecast_row
LANGUAGE plproxy
ROWS 100
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
$$;
COMMENT ON FUNCTION incentives.forecast(date, text, text[], text) IS
  'The forecast computed on the shards: one participant on its partition, all participants (NULL) on every partition (rows merged, not ordered)';

-- One participant, always: a NULL participant_key goes to one partition,
-- which raises the function's own error.
CREATE OR REPLACE FUNCTION incentives.incentive_explain(
    participant_key text,
    offer_key       text,
    properties      jsonb       DEFAULT '{}',
    transactions    text        DEFAULT 'incentives.transactions',
    as_of           timestamptz DEFAULT NULL,
    through_date    date        DEFAULT NULL)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.placement_hash(coalesce(participant_key, ''));
$$;
COMMENT ON FUNCTION incentives.incentive_explain(text, text, jsonb, text, timestamptz, date) IS
  'incentive_explain on the participant''s partition';

CREATE OR REPLACE FUNCTION incentives.request_hash(request jsonb)
RETURNS integer
LANGUAGE sql VOLATILE
AS $$
    SELECT coalesce(incentives.placement_hash($1 OPERATOR(pg_catalog.->>) 'participant_key'),
                    (pg_catalog.random() OPERATOR(pg_catalog.*) 2147483647)::integer)
$$;
COMMENT ON FUNCTION incentives.request_hash(jsonb) IS
  'RUN ON target of calculate(): the request''s participant''s partition (its stored transactions and properties), any partition when it names none';

CREATE OR REPLACE FUNCTION incentives.calculate(request jsonb)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.request_hash(request);
$$;
COMMENT ON FUNCTION incentives.calculate(jsonb) IS
  'The JSON what-if entry point, on the partition of the request''s participant_key (any partition without one)';

-- The procedures of a single node that write on the shards: each is a
-- procedure of the same name and arguments that calls
-- incentives_internal.<name>_run on the participant's partition, or on
-- every partition (NULL), through the proxy incentives_cluster.<name>
-- (which passes every argument: it has no defaults), and reports each
-- shard's row as a NOTICE.
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
--   accrue: each shard books the accrual of its own participants, as
--     settle writes statements (an accrual on the same date again books
--     nothing new).

CREATE OR REPLACE FUNCTION incentives_cluster.refresh_earnings(
    participant_key text,
    transactions    text,
    progress_every  integer,
    on_error        text,
    changed_only    boolean)
RETURNS TABLE (run_id bigint, participants integer, rows bigint, total_incentive numeric, status text, exceptions integer)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
    TARGET incentives_internal.refresh_earnings_run;
$$;
COMMENT ON FUNCTION incentives_cluster.refresh_earnings(text, text, integer, text, boolean) IS
  'incentives.refresh_earnings_run on the participant''s partition, or on every partition (NULL)';

CREATE OR REPLACE PROCEDURE incentives.refresh_earnings(
    participant_key text    DEFAULT NULL,
    transactions    text    DEFAULT 'incentives.transactions',
    progress_every  integer DEFAULT 1000,
    on_error        text    DEFAULT 'raise',
    changed_only    boolean DEFAULT false)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.refresh_earnings(participant_key, transactions, progress_every, on_error, changed_only) LOOP
        RAISE NOTICE 'refresh_earnings: shard run % %: % participants, % rows, total %, % exceptions',
              r.run_id, r.status, r.participants, r.rows, r.total_incentive, r.exceptions;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.refresh_earnings(text, text, integer, text, boolean) IS
  'Refreshes incentives.earnings on the shards: the participant''s partition, or every partition in parallel (NULL); each shard atomically; on_error and changed_only as on a single node';

CREATE OR REPLACE FUNCTION incentives_cluster.settle(
    statement_date   date,
    participant_key  text,
    transactions     text,
    minimum_payment  numeric,
    final_offer_keys text[])
RETURNS TABLE (statement_id bigint, lines bigint, amount_due numeric)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON incentives.partitions_for(participant_key);
    TARGET incentives_internal.settle_run;
$$;
COMMENT ON FUNCTION incentives_cluster.settle(date, text, text, numeric, text[]) IS
  'incentives.settle_run on the participant''s partition, or on every partition (NULL)';

CREATE OR REPLACE FUNCTION incentives_cluster.settle_final_check(
    statement_date   date,
    participant_key  text,
    final_offer_keys text[])
RETURNS SETOF text[]
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.settle_final_check;
$$;
COMMENT ON FUNCTION incentives_cluster.settle_final_check(date, text, text[]) IS
  'incentives_internal.settle_final_check on every partition: final_offer_keys refused on any shard are refused before a shard settles';

CREATE OR REPLACE PROCEDURE incentives.settle(
    statement_date   date,
    participant_key  text    DEFAULT NULL,
    transactions     text    DEFAULT 'incentives.transactions',
    minimum_payment  numeric DEFAULT 0,
    final_offer_keys text[]  DEFAULT NULL)
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    -- a season closes on every shard or none: every shard checks the keys
    -- first (a shard that fails later is settled again with the same date:
    -- an offer it closed on that date is a retry there)
    IF final_offer_keys IS NOT NULL THEN
        PERFORM FROM incentives_cluster.settle_final_check(statement_date, participant_key, final_offer_keys);
    END IF;
    FOR r IN SELECT * FROM incentives_cluster.settle(statement_date, participant_key, transactions,
                                                     minimum_payment, final_offer_keys) LOOP
        RAISE NOTICE 'settle: shard statement %: % lines, % due', r.statement_id, r.lines, r.amount_due;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.settle(date, text, text, numeric, text[]) IS
  'Settles on the shards from the transactions relation (its name on the shards): the participant''s partition, or every partition (NULL); each shard writes its own statement atomically and refuses a date after today; minimum_payment applies per shard''s participants, final_offer_keys are checked on every shard before any settles';

CREATE OR REPLACE FUNCTION incentives_cluster.accrue(as_of_date date, transactions text)
RETURNS TABLE (accrual_id bigint, lines bigint, delta numeric)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.accrue_run;
$$;
COMMENT ON FUNCTION incentives_cluster.accrue(date, text) IS
  'incentives.accrue_run on every partition';

CREATE OR REPLACE PROCEDURE incentives.accrue(
    as_of_date   date,
    transactions text DEFAULT 'incentives.transactions')
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM incentives_cluster.accrue(as_of_date, transactions) LOOP
        RAISE NOTICE 'accrue: shard accrual %: % lines, % booked', r.accrual_id, r.lines, r.delta;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE incentives.accrue(date, text) IS
  'Books the accrual on the shards from the transactions relation (its name on the shards): every partition, each shard its own participants'' accrual atomically; refuses a date after today';
