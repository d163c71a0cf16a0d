------------------------------------------------------------------------
-- Offer checks through the coordinator (docs/scaling.md): the same
-- strictness as a single node, and the same warnings, over the shards
--
-- put_offer (code/30_reference_data.sql) asks one shard what a write would
-- refuse (incentives_internal.offer_problem: the document under the
-- coordinator's incentives.unknown_offer_fields, the key: malformed, or
-- equal to another's but for case), then writes every shard with that
-- setting.  Enrollments go to their participant's shard, which refuses one
-- naming no offer (the offers are on every shard).
--
-- The warnings are each shard's, merged (each shard holds every offer and
-- its own participants' transactions and enrollments):
--   offer_warnings: a warning about what the data lacks (unknown_sku,
--     unknown_transaction_type, empty_period, period_outside_book (a
--     shard with the period's transactions silences it), unknown_unit,
--     no_enrollments, no_groups) holds only if every shard reports it, and so does one
--     about the document alone (every shard reports it anyway): the
--     intersection, on (offer_key, path, code), the message of the first
--     partition.  A warning about what a shard holds (enrollment_without_offer,
--     sku_without_unit) is reported by any shard: the union.  Edge cases:
--     sku_without_unit is missed when each shard sees its SKU in one unit but
--     the shards in different units; empty_period ("transactions dated after
--     its end exist") is missed when only some shards have such later
--     transactions and those have none in the period.
--   program_skus: the counts of transactions summed over the shards.
--   transaction_warnings: the union (a transaction is on one shard).
-- transactions names a relation on the shards (text), as for
-- incentive_calculate.
------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION incentives_cluster.offer_problem(document jsonb, unknown_offer_fields text)
RETURNS jsonb
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ANY;
    TARGET incentives_internal.offer_problem;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_problem(jsonb, text) IS
  'incentives_internal.offer_problem on any one partition: what a write of the offer would refuse, before it is sent to all of them';

CREATE OR REPLACE FUNCTION incentives_cluster.put_offer_under(document jsonb, unknown_offer_fields text)
RETURNS SETOF boolean
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    TARGET incentives_internal.put_offer_under;
$$;
COMMENT ON FUNCTION incentives_cluster.put_offer_under(jsonb, text) IS
  'incentives.put_offer on every partition, under the coordinator''s incentives.unknown_offer_fields';

CREATE OR REPLACE FUNCTION incentives_cluster.offer_warnings(partition integer, transactions text)
RETURNS TABLE (offer_key text, path text, code text, message text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    SELECT w.offer_key, w.path, w.code, w.message FROM incentives.offer_warnings(transactions::regclass) AS w;
$$;
COMMENT ON FUNCTION incentives_cluster.offer_warnings(integer, text) IS
  'incentives.offer_warnings on one partition';

CREATE OR REPLACE FUNCTION incentives.offer_warnings(transactions text DEFAULT 'incentives.transactions')
RETURNS TABLE (offer_key text, path text, code text, message text)
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    WITH w AS (
        SELECT p.p, w.*
          FROM generate_series(0, incentives.cluster_partitions() - 1) AS p(p)
         CROSS JOIN LATERAL incentives_cluster.offer_warnings(p.p, $1) AS w)
    SELECT w.offer_key, w.path, w.code, (array_agg(w.message ORDER BY w.p))[1]
      FROM w
     GROUP BY w.offer_key, w.path, w.code
    HAVING w.code IN ('enrollment_without_offer', 'sku_without_unit')
        OR count(DISTINCT w.p) = incentives.cluster_partitions()
     ORDER BY w.offer_key COLLATE "C", w.path COLLATE "C", w.code COLLATE "C"
$$;
COMMENT ON FUNCTION incentives.offer_warnings(text) IS
  'The offers'' warnings over the shards: what every shard reports, and what any shard reports about what it holds (enrollment_without_offer, sku_without_unit); transactions names a relation on the shards';

CREATE OR REPLACE VIEW incentives.offer_warnings WITH (security_invoker = true) AS
    SELECT w.offer_key, w.path, w.code, w.message FROM incentives.offer_warnings() AS w;
COMMENT ON VIEW incentives.offer_warnings IS
  'incentives.offer_warnings() over incentives.transactions of the shards';

CREATE OR REPLACE FUNCTION incentives_cluster.program_skus(partition integer)
RETURNS TABLE (offer_key text, sku_key text, role text, transactions bigint, product_key text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON partition;
    SELECT s.offer_key, s.sku_key, s.role, s.transactions, s.product_key FROM incentives.program_skus AS s;
$$;
COMMENT ON FUNCTION incentives_cluster.program_skus(integer) IS
  'incentives.program_skus of one partition';

CREATE OR REPLACE VIEW incentives.program_skus WITH (security_invoker = true) AS
    SELECT s.offer_key, s.sku_key, s.role, sum(s.transactions)::bigint AS transactions,
           s.product_key
      FROM generate_series(0, incentives.cluster_partitions() - 1) AS p(p)
     CROSS JOIN LATERAL incentives_cluster.program_skus(p.p) AS s
     GROUP BY s.offer_key, s.sku_key, s.role, s.product_key;
COMMENT ON VIEW incentives.program_skus IS
  'Every SKU each offer reads, its role, the product it reads it through (NULL: listed itself), and how many transactions of all the shards match it';

CREATE OR REPLACE FUNCTION incentives_cluster.transaction_warnings(transactions text)
RETURNS TABLE (participant_key text, transaction_id text, code text, message text)
LANGUAGE plproxy
AS $$
    CLUSTER 'incentives_cluster';
    RUN ON ALL;
    SELECT w.participant_key, w.transaction_id, w.code, w.message
      FROM incentives.transaction_warnings(transactions::regclass) AS w;
$$;
COMMENT ON FUNCTION incentives_cluster.transaction_warnings(text) IS
  'incentives.transaction_warnings on every partition';

CREATE OR REPLACE FUNCTION incentives.transaction_warnings(transactions text DEFAULT 'incentives.transactions')
RETURNS TABLE (participant_key text, transaction_id text, code text, message text)
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT w.participant_key, w.transaction_id, w.code, w.message
      FROM incentives_cluster.transaction_warnings($1) AS w
     ORDER BY w.participant_key COLLATE "C", w.transaction_id COLLATE "C", w.code COLLATE "C"
$$;
COMMENT ON FUNCTION incentives.transaction_warnings(text) IS
  'Every stored transaction of the shards a calculation would refuse (the union of the shards''); transactions names a relation on the shards';

CREATE OR REPLACE VIEW incentives.transaction_warnings WITH (security_invoker = true) AS
    SELECT w.participant_key, w.transaction_id, w.code, w.message FROM incentives.transaction_warnings() AS w;
COMMENT ON VIEW incentives.transaction_warnings IS
  'incentives.transaction_warnings() over incentives.transactions of the shards';
