-- incentives_cluster: the coordinator of a sharded incentives deployment
-- (docs/scaling.md).  The Makefile joins this file with the other parts
-- into build/incentives_cluster--<version>.sql (docs/architecture.md).
--
-- Layout.  Every shard is a PostgreSQL database with the incentives
-- extension and a share of the transactions: a participant's transactions
-- (and its enrollment windows) all live on partition
-- hashtext(participant_key) & (partitions - 1), which is PL/Proxy's own
-- mapping of a RUN ON hash.  Offers, SKUs, unit
-- conversions and participant properties are identical on every shard.  A
-- participant's earnings depend only on its own transactions and properties
-- (docs/reference.md, incentive_calculate), so a shard computes them exactly,
-- with no cross-shard work.
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
-- The earning row, exactly as on the shards (docs/reference.md, Earning rows)
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
COMMENT ON TYPE incentives.earning IS 'One earning row: what one transaction earns under one offer and rate (docs/reference.md, Earning rows); the shards'' type';
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

-- One row of incentives.cluster_check().
CREATE TYPE incentives_cluster.shard_row AS (
    partition integer,
    object    text,
    row_count bigint,
    digest    text
);
COMMENT ON TYPE incentives_cluster.shard_row IS 'One row of incentives.cluster_check()';
