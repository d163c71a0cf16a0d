-- bench/reference.sql: the same calculation as incentives.incentive_calculate,
-- written as one set-based SQL query (the benchmark's baseline and cross-check).
--
--   psql -X -v ON_ERROR_STOP=1 -f bench/reference.sql
--
-- Creates bench.reference_calculate(), a set-returning function with one
-- row per earning:
-- (participant_key, offer_key, offer_calculator, incentive_rate_key,
-- transaction_id, sku_key, incentive_amount).  It reads the offers as
-- stored (flattening the JSON with jsonb functions, nothing hard-coded),
-- incentives.transactions, skus, uom_conversions and participant_properties
-- (the call-level properties argument is not modelled: the benchmark passes
-- none), and follows docs/reference.md: standard entries, stepped tiers over
-- aggregated amount / quantity / property thresholds, stacked coverage
-- overlaps, and penny-exact fixed pools with window functions.
--
-- Exactness.  The engine computes with exact rationals; plain numeric
-- division would round intermediate values (a coverage of 10 l at
-- 0.3 gal/acre is a repeating decimal) and could move a figure across a
-- half-cent.  So quantities are carried in units of 1/M, where M is the
-- product of the distinct conversion factors: a quantity converted into
-- any unit is then an exact decimal (q * w, w = factor * M or M / factor).
-- Stacked coverage is carried in units of 1/(M * product of the set's
-- distinct conversion rates) the same way.  Sums (thresholds, pool bases,
-- set coverage) are therefore exact, and every reported figure is one
-- division of two exact decimals, taken at >= 60 decimal places and then
-- rounded half away from zero like the engine.  Nothing else is special:
-- this is what an analyst who read the spec would write.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

-- product(numeric): the exact product of a column.
CREATE OR REPLACE AGGREGATE bench.product(numeric) (
    sfunc = numeric_mul, stype = numeric, initcond = '1');

-- bench.reference_rules(): flatten the offers into small rule tables
-- (temporary, analyzed, so the planner sees their sizes), one row per
-- (rule, SKU).  Part of every reference run.
CREATE OR REPLACE FUNCTION bench.reference_rules()
RETURNS void
LANGUAGE plpgsql
SET client_min_messages = warning
AS $fn$
BEGIN
    DROP TABLE IF EXISTS pg_temp.ref_m, pg_temp.ref_cw, pg_temp.ref_std, pg_temp.ref_step_offer,
        pg_temp.ref_step_filter, pg_temp.ref_step_tier, pg_temp.ref_sk_conv, pg_temp.ref_sk_stack_set;

    -- M, and w(u, v): a quantity q in unit u is q * w / M in unit v (direct
    -- conversions first, then inverse ones; no chaining).  The 60 zero
    -- decimals make the division exact (M / factor is a product of the
    -- other factors).
    CREATE TEMP TABLE ref_m AS
    SELECT bench.product(DISTINCT factor) AS m FROM incentives.uom_conversions;
    CREATE TEMP TABLE ref_cw AS
    SELECT DISTINCT ON (u, v) u, v, w
      FROM (SELECT c.from_uom_key AS u, c.to_uom_key AS v, c.factor * m.m AS w, 1 AS pref
              FROM incentives.uom_conversions c, ref_m m
            UNION ALL
            SELECT c.to_uom_key, c.from_uom_key,
                   trim_scale((m.m + 0.000000000000000000000000000000000000000000000000000000000000) / c.factor), 2
              FROM incentives.uom_conversions c, ref_m m) x
     ORDER BY u, v, pref;

    -- standard: one row per (offer, entry, SKU rate)
    CREATE TEMP TABLE ref_std AS
    SELECT o.offer_key, o.document ->> 'calculator_key' AS calc,
           coalesce(e.value ->> 'key', (e.value ->> 'period_key') || '_' || (e.value ->> 'transaction_type')) AS rate_key,
           e.ord AS entry, e.value ->> 'transaction_type' AS tt,
           (p.value ->> 'start_date')::date AS start_date, (p.value ->> 'end_date')::date AS end_date,
           r.value ->> 'sku_key' AS sku_key, (r.value ->> 'rate')::numeric AS rate,
           (SELECT (pr.value ->> 'price')::numeric
              FROM jsonb_array_elements(coalesce(o.document -> 'prices', '[]')) pr
             WHERE pr.value ->> 'sku_key' = r.value ->> 'sku_key') AS price
      FROM incentives.offers o
      CROSS JOIN LATERAL jsonb_array_elements(o.document -> 'incentives') WITH ORDINALITY e(value, ord)
      CROSS JOIN LATERAL jsonb_array_elements(e.value -> 'rates') r
      JOIN LATERAL jsonb_array_elements(o.document -> 'periods') p
        ON p.value ->> 'key' = e.value ->> 'period_key'
     WHERE o.document ->> 'strategy_key' = 'standard';

    -- stepped: offers, filters (earning and threshold) per SKU, tiers
    CREATE TEMP TABLE ref_step_offer AS
    SELECT o.offer_key, o.document ->> 'calculator_key' AS calc,
           o.document -> 'incentive' -> 'threshold_definition' ->> 'type' AS ttype,
           o.document -> 'incentive' -> 'threshold_definition' -> 'property' ->> 'key' AS property_key
      FROM incentives.offers o
     WHERE o.document ->> 'strategy_key' = 'stepped';
    CREATE TEMP TABLE ref_step_filter AS
    SELECT o.offer_key, f.kind, f.value ->> 'transaction_type' AS tt,
           (p.value ->> 'start_date')::date AS start_date, (p.value ->> 'end_date')::date AS end_date,
           sku.sku_key,
           (SELECT (pr.value ->> 'price')::numeric
              FROM jsonb_array_elements(coalesce(o.document -> 'prices', '[]')) pr
             WHERE pr.value ->> 'sku_key' = sku.sku_key) AS price
      FROM incentives.offers o
      CROSS JOIN LATERAL (SELECT 'earn' AS kind, value
                            FROM jsonb_array_elements(o.document -> 'incentive' -> 'filters')
                          UNION ALL
                          SELECT 'threshold', value
                            FROM jsonb_array_elements(coalesce(o.document -> 'incentive' -> 'threshold_definition' -> 'filters', '[]'))) f
      CROSS JOIN LATERAL jsonb_array_elements_text(f.value -> 'sku_keys') sku(sku_key)
      JOIN LATERAL jsonb_array_elements(o.document -> 'periods') p
        ON p.value ->> 'key' = f.value ->> 'period_key'
     WHERE o.document ->> 'strategy_key' = 'stepped';
    CREATE TEMP TABLE ref_step_tier AS
    SELECT o.offer_key, (t.value ->> 'threshold')::numeric AS threshold,
           (t.value ->> 'value')::numeric AS value,
           coalesce(t.value ->> 'key',
                    trim_scale((t.value ->> 'value')::numeric)::text || '_' || (t.value ->> 'measure')
                    || '_greater_than_or_equal_to_' || trim_scale((t.value ->> 'threshold')::numeric)::text) AS rate_key
      FROM incentives.offers o, jsonb_array_elements(o.document -> 'incentive' -> 'rates') t
     WHERE o.document ->> 'strategy_key' = 'stepped';

    -- stacked: one row per set member SKU.  crs is the product of the
    -- set's distinct conversion rates and pj = crs / rate (a product of the
    -- others), so that coverage * M * crs = q * w(u, from) * pj exactly.
    CREATE TEMP TABLE ref_sk_conv AS
    SELECT o.offer_key, o.document ->> 'calculator_key' AS calc, s.value ->> 'key' AS set_key,
           s.value ->> 'transaction_type' AS tt,
           (p.value ->> 'start_date')::date AS start_date, (p.value ->> 'end_date')::date AS end_date,
           c.value ->> 'sku_key' AS sku_key, c.value ->> 'from' AS from_uom,
           trim_scale((x.crs + 0.000000000000000000000000000000000000000000000000000000000000)
                      / (c.value ->> 'rate')::numeric) AS pj,
           x.crs,
           coalesce((SELECT (r.value ->> 'rate')::numeric FROM jsonb_array_elements(s.value -> 'rates') r
                      WHERE r.value ->> 'sku_key' = c.value ->> 'sku_key'), 0) AS pay_rate
      FROM incentives.offers o
      CROSS JOIN LATERAL jsonb_array_elements(o.document -> 'incentive' -> 'sku_sets') s
      CROSS JOIN LATERAL (SELECT bench.product(DISTINCT (c2.value ->> 'rate')::numeric) AS crs
                            FROM jsonb_array_elements(s.value -> 'conversion' -> 'rates') c2) x
      CROSS JOIN LATERAL jsonb_array_elements(s.value -> 'conversion' -> 'rates') c
      JOIN LATERAL jsonb_array_elements(o.document -> 'periods') p
        ON p.value ->> 'key' = s.value ->> 'period_key'
     WHERE o.document ->> 'strategy_key' = 'stacked';
    -- stacks: the rate key (key, or the set keys joined with _and_) per set
    CREATE TEMP TABLE ref_sk_stack_set AS
    SELECT o.offer_key,
           coalesce(k.value ->> 'key',
                    (SELECT string_agg(a.x, '_and_' ORDER BY a.ord)
                       FROM jsonb_array_elements_text(k.value -> 'sku_set_keys') WITH ORDINALITY a(x, ord))) AS rate_key,
           jsonb_array_length(k.value -> 'sku_set_keys') AS nsets,
           set_key
      FROM incentives.offers o
      CROSS JOIN LATERAL jsonb_array_elements(o.document -> 'incentive' -> 'stacks') k
      CROSS JOIN LATERAL jsonb_array_elements_text(k.value -> 'sku_set_keys') set_key
     WHERE o.document ->> 'strategy_key' = 'stacked';

    ANALYZE pg_temp.ref_m, pg_temp.ref_cw, pg_temp.ref_std, pg_temp.ref_step_offer,
        pg_temp.ref_step_filter, pg_temp.ref_step_tier, pg_temp.ref_sk_conv, pg_temp.ref_sk_stack_set;
END
$fn$;

-- bench.ref_amount(calc, bm, qm, rate, m): the incentive of a rate, rounded
-- to the cent: percent_of_amount on bm (the base amount times M), else per
-- unit of qm (the quantity times M).  bench.ref_share(amount, running,
-- total): a pool's running share, rounded.  (The zero of 60 decimal places
-- gives the divisions their scale.)  Inlined by the planner.
CREATE OR REPLACE FUNCTION bench.ref_amount(calc text, bm numeric, qm numeric, rate numeric, m numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT round(CASE calc
                   WHEN 'percent_of_amount'
                   THEN (bm * rate + 0.000000000000000000000000000000000000000000000000000000000000) / (m * 100)
                   ELSE (qm * rate + 0.000000000000000000000000000000000000000000000000000000000000) / m
                 END, 2)
$$;
CREATE OR REPLACE FUNCTION bench.ref_share(amount numeric, running numeric, total numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
    SELECT round((amount * running + 0.000000000000000000000000000000000000000000000000000000000000) / total, 2)
$$;

-- bench.reference_calculate(): every earning, in one set-based query over
-- the rule tables and the transactions.
--
-- The planner cannot estimate the CTEs' sizes (jsonb-derived keys, DISTINCT
-- ON, windowed sums) and picks nested loops over hundred-thousand-row
-- inputs (> 10 minutes at 1M transactions); hash joins are what the
-- analyst would force, so the function turns nested loops off.
CREATE OR REPLACE FUNCTION bench.reference_calculate()
RETURNS TABLE (participant_key text, offer_key text, offer_calculator text,
               incentive_rate_key text, transaction_id text, sku_key text,
               incentive_amount numeric)
LANGUAGE plpgsql
SET enable_nestloop = off
AS $fn$
BEGIN
    PERFORM bench.reference_rules();
    RETURN QUERY EXECUTE $q$
WITH
-- every transaction with its quantity in its SKU's unit, times M
txn AS NOT MATERIALIZED (
    SELECT t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date,
           t.sku_key, t.quantity, t.uom_key, t.amount,
           t.quantity * CASE WHEN k.uom_key IS NULL OR k.uom_key = t.uom_key THEN m.m ELSE c.w END AS qm,
           t.amount * m.m AS am,
           m.m
      FROM incentives.transactions t
      CROSS JOIN pg_temp.ref_m m
      LEFT JOIN incentives.skus k ON k.sku_key = t.sku_key
      LEFT JOIN pg_temp.ref_cw c ON c.u = t.uom_key AND c.v = k.uom_key),

------------------------------------------------------------------ standard
std_tx AS NOT MATERIALIZED (
    SELECT s.offer_key, s.calc, s.rate_key, s.entry, s.rate, t.*,
           CASE WHEN s.price IS NOT NULL THEN t.qm * s.price ELSE t.am END AS bm   -- base amount * M
      FROM pg_temp.ref_std s
      JOIN txn t ON t.sku_key = s.sku_key AND t.transaction_type = s.tt
                AND t.transaction_date BETWEEN s.start_date AND s.end_date),
------------------------------------------------------------------ stepped
-- a transaction counts once however many filters of a kind it matches
step_match AS (
    SELECT DISTINCT ON (f.kind, f.offer_key, t.transaction_id) f.kind, f.offer_key, f.price, t.*
      FROM pg_temp.ref_step_filter f
      JOIN txn t ON t.sku_key = f.sku_key AND t.transaction_type = f.tt
                AND t.transaction_date BETWEEN f.start_date AND f.end_date
     ORDER BY f.kind, f.offer_key, t.transaction_id),
step_value AS (
    SELECT offer_key, participant_key, sum(amount) AS amount, sum(qm) AS qm
      FROM step_match
     WHERE kind = 'threshold'
     GROUP BY offer_key, participant_key),
-- the tier of each participant that has earning transactions
step_applied AS MATERIALIZED (
    SELECT e.offer_key, e.participant_key, s.calc, tier.value, tier.rate_key
      FROM (SELECT DISTINCT offer_key, participant_key FROM step_match WHERE kind = 'earn') e
      JOIN pg_temp.ref_step_offer s ON s.offer_key = e.offer_key
      CROSS JOIN pg_temp.ref_m m
      LEFT JOIN step_value v ON v.offer_key = e.offer_key AND v.participant_key = e.participant_key
      LEFT JOIN incentives.participant_properties pp
             ON pp.participant_key = e.participant_key AND pp.property_key = s.property_key
      CROSS JOIN LATERAL (
          SELECT st.value, st.rate_key
            FROM pg_temp.ref_step_tier st
           WHERE st.offer_key = e.offer_key
             AND CASE s.ttype
                   WHEN 'aggregated_amount' THEN st.threshold <= coalesce(v.amount, 0)
                   WHEN 'aggregated_quantity' THEN st.threshold * m.m <= coalesce(v.qm, 0)
                   ELSE st.threshold <= pp.value
                 END
           ORDER BY st.threshold DESC
           LIMIT 1) tier),
step_tx AS NOT MATERIALIZED (
    SELECT a.calc, a.value, a.rate_key, e.*,
           CASE WHEN e.price IS NOT NULL THEN e.qm * e.price ELSE e.am END AS bm
      FROM step_match e
      JOIN step_applied a ON a.offer_key = e.offer_key AND a.participant_key = e.participant_key
     WHERE e.kind = 'earn'),
------------------------------------------------------- standard and stepped
-- the earning transactions of both, with their rate (a stepped offer's: its
-- tier's value) and the keys of their fixed_amount pools: a standard offer
-- has a pool per (entry, SKU) and participant, shared by the running-share
-- rule in transaction_id byte order over (rate_key, SKU); a stepped offer's
-- tier value is one pool over the participant's earning transactions (the
-- keys NULL)
rate_tx AS NOT MATERIALIZED (
    SELECT participant_key, offer_key, calc, rate_key, transaction_id, sku_key, bm, qm, m, rate,
           entry::text AS pool_a, sku_key AS pool_b, rate_key AS share_a, sku_key AS share_b
      FROM std_tx
    UNION ALL
    SELECT participant_key, offer_key, calc, rate_key, transaction_id, sku_key, bm, qm, m, value,
           NULL, NULL, NULL, NULL
      FROM step_tx),
rate_rows AS (
    SELECT participant_key, offer_key, calc, rate_key, transaction_id, sku_key,
           bench.ref_amount(calc, bm, qm, rate, m) AS incentive_amount
      FROM rate_tx
     WHERE calc <> 'fixed_amount'),
pool AS (
    SELECT participant_key, offer_key, calc, rate_key, transaction_id, sku_key, total, share_a, share_b,
           bench.ref_share(rate, running, total) AS s
      FROM (SELECT *,
                   sum(bm) OVER (PARTITION BY offer_key, pool_a, pool_b, participant_key) AS total,
                   sum(bm) OVER (PARTITION BY offer_key, pool_a, pool_b, participant_key
                                 ORDER BY transaction_id COLLATE "C" ROWS UNBOUNDED PRECEDING) AS running
              FROM rate_tx
             WHERE calc = 'fixed_amount') x),
pool_rows AS (
    SELECT participant_key, offer_key, calc, rate_key, transaction_id, sku_key,
           s - lag(s, 1, 0) OVER (PARTITION BY offer_key, share_a, share_b, participant_key
                                  ORDER BY transaction_id COLLATE "C") AS incentive_amount
      FROM pool
     WHERE total > 0),

------------------------------------------------------------------ stacked
-- set members with coverage * M * crs, and C(s) * M * crs (x) per participant
sk_tx AS (
    SELECT k.offer_key, k.calc, k.set_key, k.pay_rate, k.crs, t.participant_key, t.transaction_id, t.sku_key, t.m,
           t.quantity * CASE WHEN t.uom_key = k.from_uom THEN t.m ELSE c.w END * k.pj AS cov,
           sum(t.quantity * CASE WHEN t.uom_key = k.from_uom THEN t.m ELSE c.w END * k.pj)
               OVER (PARTITION BY k.offer_key, k.set_key, t.participant_key) AS x
      FROM pg_temp.ref_sk_conv k
      JOIN txn t ON t.sku_key = k.sku_key AND t.transaction_type = k.tt
                AND t.transaction_date BETWEEN k.start_date AND k.end_date
      LEFT JOIN pg_temp.ref_cw c ON c.u = t.uom_key AND c.v = k.from_uom),
sk_cov AS (
    SELECT DISTINCT offer_key, set_key, participant_key, x, m * crs AS ms
      FROM sk_tx),
-- O(k): the smallest C(s) of the stack's sets; a set without coverage makes it 0
sk_overlap AS (
    SELECT offer_key, rate_key, participant_key, xo, mso
      FROM (SELECT DISTINCT ON (ss.offer_key, ss.rate_key, c.participant_key)
                   ss.offer_key, ss.rate_key, c.participant_key, ss.nsets, c.x AS xo, c.ms AS mso,
                   count(*) OVER (PARTITION BY ss.offer_key, ss.rate_key, c.participant_key) AS nfound
              FROM pg_temp.ref_sk_stack_set ss
              JOIN sk_cov c ON c.offer_key = ss.offer_key AND c.set_key = ss.set_key
             ORDER BY ss.offer_key, ss.rate_key, c.participant_key,
                      (c.x + 0.000000000000000000000000000000000000000000000000000000000000) / c.ms) o
     WHERE nfound = nsets AND xo > 0),
-- each transaction of each set of the stack, f = O / C(s):
-- coverage * f * rate = cov * xo * rate / (mso * x)
sk_rows AS (
    SELECT t.participant_key, t.offer_key, t.calc, ov.rate_key, t.transaction_id, t.sku_key,
           round((t.cov * ov.xo * t.pay_rate + 0.000000000000000000000000000000000000000000000000000000000000)
                 / (ov.mso * t.x), 2) AS incentive_amount
      FROM sk_tx t
      JOIN pg_temp.ref_sk_stack_set ss ON ss.offer_key = t.offer_key AND ss.set_key = t.set_key
      JOIN sk_overlap ov ON ov.offer_key = t.offer_key AND ov.rate_key = ss.rate_key
                        AND ov.participant_key = t.participant_key
     WHERE t.pay_rate > 0)

SELECT * FROM rate_rows
UNION ALL SELECT * FROM pool_rows
UNION ALL SELECT * FROM sk_rows
$q$;
END
$fn$;
COMMENT ON FUNCTION bench.reference_calculate() IS
  'Set-based SQL implementation of the incentive calculation (bench/reference.sql): one row per earning with its incentive_amount';

-- bench.crosscheck(): compare the engine with the reference, per (offer,
-- participant): row count and total incentive_amount.  Returns the number
-- of (offer, participant) pairs that differ (0 required), the pairs
-- compared, and the rows and totals on each side.
CREATE OR REPLACE FUNCTION bench.crosscheck(
    OUT mismatches bigint, OUT pairs bigint,
    OUT engine_rows bigint, OUT reference_rows bigint,
    OUT engine_total numeric, OUT reference_total numeric)
LANGUAGE sql
AS $$
    WITH e AS (SELECT offer_key, participant_key, count(*) AS n, sum(incentive_amount) AS total
                 FROM incentives.incentive_calculate()
                GROUP BY 1, 2),
         r AS (SELECT offer_key, participant_key, count(*) AS n, sum(incentive_amount) AS total
                 FROM bench.reference_calculate()
                GROUP BY 1, 2)
    SELECT count(*) FILTER (WHERE e.n IS DISTINCT FROM r.n OR e.total IS DISTINCT FROM r.total),
           count(*), sum(e.n), sum(r.n), sum(e.total), sum(r.total)
      FROM e FULL JOIN r USING (offer_key, participant_key)
$$;

-- bench.crosscheck_rows(): the stronger, row-level check: earnings present
-- on one side only, compared on (transaction_id, offer_key,
-- incentive_rate_key, incentive_amount).  0 required.
CREATE OR REPLACE FUNCTION bench.crosscheck_rows(OUT only_engine bigint, OUT only_reference bigint)
LANGUAGE sql
AS $$
    WITH e AS MATERIALIZED (SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount
                              FROM incentives.incentive_calculate()),
         r AS MATERIALIZED (SELECT transaction_id, offer_key, incentive_rate_key, incentive_amount
                              FROM bench.reference_calculate())
    SELECT (SELECT count(*) FROM (TABLE e EXCEPT ALL TABLE r) x),
           (SELECT count(*) FROM (TABLE r EXCEPT ALL TABLE e) y)
$$;
RESET client_min_messages;
