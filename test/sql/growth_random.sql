-- growth_random.sql: one random case of growth over a baseline and of the
-- forecast, against a set-based reference written here in SQL
-- (docs/reference.md, Growth over a baseline; Forecast).  Run by
-- test/scripts/growth_random.sh with -v seed=N (0 < N < 1) in a database
-- with the extension; prints one line "growth_random ..." of counts, the
-- mismatches first.
--
-- The case: 2 SKUs measured in gal (transactions in gal or qt), about 30
-- participants with purchases in 2025 (the baselines' year) and 2026 (the
-- offers' period), returns among them, and 10 random offers: stepped
-- offers of both growth types, a baseline by dates or by a property
-- (missing, 0, negative or positive), percent_of_amount, dollars_per_unit
-- or fixed_amount, paying on all the volume, on the growth only or band by
-- band, tiers between -100 % and +50 %; and standard offers gated by a
-- growth requirement.
--
-- The reference works in exact numeric arithmetic: products and sums are
-- exact in numeric, every quotient is rounded by gr.exact_round from its
-- numerator and denominator (half away from zero), and a growth is
-- compared with a threshold by cross-multiplying ((C - B) x 100 >= t x B,
-- B > 0), so no figure depends on a division's precision.  Compared: every
-- earning row (participant, offer, transaction, rate key, incentive
-- amount); tier_progress's growth_percent and no_growth_value; and the
-- forecast of the offers it models (stepped all-volume percent and dollar
-- offers, and the standard ones) at three random dates, every column.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
-- (the estimates of the reference's correlated queries are large: JIT would
-- compile them for seconds)
SET jit = off;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus, incentives.participant_properties;
DROP SCHEMA IF EXISTS gr CASCADE;
CREATE SCHEMA gr;
SELECT setseed(:seed);

-- round(p / q, s), half away from zero, exactly (q <> 0): p and q scaled
-- to integers by 10^k, then floor((2 |p| 10^s + |q|) / (2 |q|)) / 10^s
-- with their sign (one expression, so that the planner inlines it)
CREATE FUNCTION gr.exact_round(p numeric, q numeric, s integer) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
    SELECT round(sign(p) * sign(q)
                 * div(abs(p) * ('1e' || (greatest(scale(p), scale(q)) + s))::numeric * 2
                       + abs(q) * ('1e' || greatest(scale(p), scale(q)))::numeric,
                       2 * abs(q) * ('1e' || greatest(scale(p), scale(q)))::numeric)
                 / ('1e' || s)::numeric, s)
$$;

INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('g_a', 'gal'), ('g_b', 'gal');

-- ---- the offers ------------------------------------------------------------
CREATE TABLE gr.offer AS
SELECT i, 'gr.o' || i AS offer_key,
       CASE WHEN random() < 0.8 THEN 'stepped' ELSE 'standard' END AS kind,
       CASE WHEN random() < 0.5 THEN 'growth_amount' ELSE 'growth_quantity' END AS type,
       random() AS r_calc, random() AS r_pay, random() AS r_base, random() AS r_earn,
       floor(random() * 3)::int + 1 AS ntiers, random() AS r_min
  FROM generate_series(1, 10) AS i;
ALTER TABLE gr.offer ADD calc text, ADD pays text, ADD baseline text, ADD earn_skus text[], ADD req_min numeric;
UPDATE gr.offer SET
    calc = CASE WHEN kind = 'standard' THEN 'percent_of_amount'
                WHEN r_calc < 0.5 THEN 'percent_of_amount' WHEN r_calc < 0.8 THEN 'dollars_per_unit'
                ELSE 'fixed_amount' END,
    baseline = CASE WHEN r_base < 0.6 THEN 'dates' ELSE 'property' END,
    earn_skus = CASE WHEN r_earn < 0.5 THEN ARRAY['g_a'] ELSE ARRAY['g_a', 'g_b'] END,
    req_min = (ARRAY[-50, -10, 0, 5, 15, 40])[1 + floor(r_min * 6)::int];
UPDATE gr.offer SET pays = CASE WHEN kind = 'standard' OR calc = 'fixed_amount' OR r_pay < 0.4 THEN 'all_volume'
                                WHEN r_pay < 0.7 THEN 'growth' ELSE 'incremental' END;

-- tiers: distinct thresholds from the list, keyed t1, t2, ... by threshold
CREATE TABLE gr.tier AS
SELECT o.offer_key, o.calc, t.threshold,
       CASE o.calc WHEN 'percent_of_amount' THEN round((1 + floor(random() * 9))::numeric / 2, 1)
                   WHEN 'dollars_per_unit' THEN round((1 + floor(random() * 20))::numeric / 10, 1)
                   ELSE (100 + floor(random() * 900))::numeric END AS value
  FROM gr.offer AS o
 CROSS JOIN LATERAL (SELECT th AS threshold FROM unnest(ARRAY[-100, -50, -10, 0, 5, 10, 20, 50]) AS th
                      ORDER BY random() + o.i * 0 LIMIT o.ntiers) AS t
 WHERE o.kind = 'stepped';
ALTER TABLE gr.tier ADD rate_key text;
UPDATE gr.tier AS t SET rate_key = 't' || n.n
  FROM (SELECT offer_key, threshold, row_number() OVER (PARTITION BY offer_key ORDER BY threshold) AS n
          FROM gr.tier) AS n
 WHERE n.offer_key = t.offer_key AND n.threshold = t.threshold;

CREATE FUNCTION gr.filter(skus text[]) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_array(jsonb_build_object('period_key', 'season', 'sku_keys', to_jsonb(skus),
                                                'transaction_type', 'buy'))
$$;
CREATE FUNCTION gr.baseline(o gr.offer) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE o.baseline WHEN 'dates' THEN '{"start_date": "2025-01-01", "end_date": "2025-12-31"}'::jsonb
                ELSE jsonb_build_object('property', jsonb_build_object('key', 'plan_' || o.i)) END
$$;

INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', o.offer_key, 'strategy_key', 'stepped', 'calculator_key', o.calc,
         'periods', '[{"key": "season", "start_date": "2026-01-01", "end_date": "2026-12-31"}]'::jsonb,
         'incentive', jsonb_build_object(
             'filters', gr.filter(o.earn_skus),
             'threshold_definition', jsonb_build_object('type', o.type, 'filters', gr.filter(ARRAY['g_a', 'g_b']),
                                                        'baseline', gr.baseline(o)),
             'pays_on', CASE o.pays WHEN 'growth' THEN 'growth' ELSE 'all_volume' END,
             'tier_mode', CASE o.pays WHEN 'incremental' THEN 'incremental' ELSE 'all_volume' END,
             'rates', (SELECT jsonb_agg(jsonb_build_object('key', t.rate_key, 'threshold', t.threshold, 'value', t.value,
                                                           'measure', CASE o.calc WHEN 'percent_of_amount' THEN 'percent'
                                                                                  ELSE 'dollars' END))
                         FROM gr.tier AS t WHERE t.offer_key = o.offer_key)))
  FROM gr.offer AS o WHERE o.kind = 'stepped';
INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', o.offer_key, 'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
         'periods', '[{"key": "season", "start_date": "2026-01-01", "end_date": "2026-12-31"}]'::jsonb,
         'incentives', '[{"key": "k", "period_key": "season", "transaction_type": "buy",
                          "rates": [{"sku_key": "g_a", "rate": 2, "measure": "percent"}]}]'::jsonb,
         'requirements', jsonb_build_array(jsonb_build_object(
             'key', 'grow', 'type', o.type, 'minimum', o.req_min,
             'filters', gr.filter(ARRAY['g_a', 'g_b']), 'baseline', gr.baseline(o))))
  FROM gr.offer AS o WHERE o.kind = 'standard';

-- ---- participants, transactions, properties ----------------------------------
INSERT INTO incentives.transactions
SELECT 'T' || lpad(p::text, 3, '0') || '-' || lpad(n::text, 2, '0'), 'p' || lpad(p::text, 3, '0'),
       CASE WHEN random() < 0.92 THEN 'buy' ELSE 'sell' END,
       date '2025-01-01' + floor(random() * 730)::int,
       CASE WHEN random() < 0.6 THEN 'g_a' ELSE 'g_b' END,
       q, CASE WHEN random() < 0.8 THEN 'gal' ELSE 'qt' END,
       round(q * round((1000 + floor(random() * 5000))::numeric / 100, 2), 2)
  FROM generate_series(1, 30) AS p
 CROSS JOIN LATERAL generate_series(1, floor(random() * 9)::int) AS n
 CROSS JOIN LATERAL (SELECT (CASE WHEN random() < 0.12 THEN -(1 + floor(random() * 30)) ELSE 1 + floor(random() * 40) END
                             + p * 0 + n * 0)::numeric AS q) AS x;
INSERT INTO incentives.participant_properties
SELECT pk, 'plan_' || o.i, v
  FROM (SELECT DISTINCT participant_key AS pk FROM incentives.transactions) AS p
 CROSS JOIN gr.offer AS o
 CROSS JOIN LATERAL (SELECT random() AS r, pk IS NOT NULL AS keep) AS x
 CROSS JOIN LATERAL (SELECT CASE WHEN x.r < 0.25 THEN NULL WHEN x.r < 0.4 THEN 0 WHEN x.r < 0.5 THEN -500
                                 ELSE round((1000 + floor(random() * 40000))::numeric / 10, 1) END AS v) AS y
 WHERE o.baseline = 'property' AND y.v IS NOT NULL;

-- ---- the reference -----------------------------------------------------------
-- transactions with their gallons, through a date (the calculation's
-- through_date; 9999-12-31: all)
CREATE FUNCTION gr.txn(upto date) RETURNS TABLE (transaction_id text, participant_key text, transaction_type text,
                                                 transaction_date date, sku_key text, gal numeric, amount numeric)
LANGUAGE sql STABLE AS $$
    SELECT t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date, t.sku_key,
           CASE t.uom_key WHEN 'qt' THEN t.quantity * 0.25 ELSE t.quantity END, t.amount
      FROM incentives.transactions AS t
     WHERE t.transaction_date <= upto
$$;

-- C and B of every participant and offer through upto; C x k with k =
-- span / elapsed is what a projection to the span's end makes of C
CREATE FUNCTION gr.cb(upto date) RETURNS TABLE (participant_key text, offer_key text, c numeric, b numeric)
LANGUAGE sql STABLE AS $$
    SELECT p.participant_key, o.offer_key,
           COALESCE((SELECT sum(CASE o.type WHEN 'growth_amount' THEN t.amount ELSE t.gal END)
                       FROM gr.txn(upto) AS t
                      WHERE t.participant_key = p.participant_key AND t.transaction_type = 'buy'
                        AND t.transaction_date BETWEEN '2026-01-01' AND '2026-12-31'), 0),
           CASE o.baseline
                WHEN 'dates' THEN COALESCE((SELECT sum(CASE o.type WHEN 'growth_amount' THEN t.amount ELSE t.gal END)
                                              FROM gr.txn(upto) AS t
                                             WHERE t.participant_key = p.participant_key AND t.transaction_type = 'buy'
                                               AND t.transaction_date BETWEEN '2025-01-01' AND '2025-12-31'), 0)
                ELSE (SELECT pp.value FROM incentives.participant_properties AS pp
                       WHERE pp.participant_key = p.participant_key AND pp.property_key = 'plan_' || o.i) END
      FROM (SELECT DISTINCT t.participant_key FROM gr.txn(upto) AS t) AS p
     CROSS JOIN gr.offer AS o
$$;

-- the tier met by C x num / den over B (the highest threshold t with
-- (C num / den - B) x 100 >= t B), NULL without a growth value
CREATE FUNCTION gr.tier_met(offer text, c numeric, b numeric, num numeric, den numeric) RETURNS gr.tier
LANGUAGE sql STABLE AS $$
    SELECT t.* FROM gr.tier AS t
     WHERE t.offer_key = offer AND b > 0 AND (c * num - b * den) * 100 >= t.threshold * b * den
     ORDER BY t.threshold DESC LIMIT 1
$$;

-- the earning rows through upto, the volume projected by num / den (1 / 1:
-- as it is) for the transactions of the span (2026); the projection is
-- modelled for the all-volume rate offers and the standard ones (the
-- others' rows are computed as they are only)
CREATE FUNCTION gr.rows(upto date, num numeric, den numeric)
RETURNS TABLE (participant_key text, offer_key text, transaction_id text, rate_key text, amount numeric)
LANGUAGE sql STABLE AS $$
    WITH cb AS MATERIALIZED (SELECT * FROM gr.cb(upto)),
    met AS MATERIALIZED (   -- the tier each participant meets in each stepped offer
        SELECT o.offer_key, o.calc, o.pays, o.earn_skus, cb.participant_key, cb.c, cb.b,
               m.rate_key, m.threshold, m.value
          FROM gr.offer AS o
          JOIN cb ON cb.offer_key = o.offer_key
         CROSS JOIN LATERAL gr.tier_met(o.offer_key, cb.c, cb.b, num, den) AS m
         WHERE o.kind = 'stepped' AND m.rate_key IS NOT NULL),
    earn AS (   -- the earning transactions of each stepped offer, with the tier met
        SELECT m.offer_key, m.calc, m.pays, m.c, m.b, t.transaction_id, t.participant_key,
               t.amount, t.gal, m.rate_key, m.threshold, m.value
          FROM met AS m
          JOIN gr.txn(upto) AS t ON t.participant_key = m.participant_key
         WHERE t.transaction_type = 'buy' AND t.sku_key = ANY (m.earn_skus)
           AND t.transaction_date BETWEEN '2026-01-01' AND '2026-12-31'),
    exact AS (  -- every row's exact amount at the tier's rate (as it is)
        SELECT e.*, CASE e.calc WHEN 'percent_of_amount' THEN e.amount * e.value / 100 ELSE e.gal * e.value END AS x
          FROM earn AS e),
    all_volume AS (
        SELECT participant_key, offer_key, transaction_id, rate_key,
               CASE calc WHEN 'percent_of_amount' THEN gr.exact_round(amount * value * num, 100 * den, 2)
                         ELSE gr.exact_round(gal * value * num, den, 2) END AS amount
          FROM earn WHERE pays = 'all_volume' AND calc <> 'fixed_amount'),
    pools AS (  -- fixed_amount: the tier's value shared by running sums
        SELECT participant_key, offer_key, transaction_id, rate_key,
               gr.exact_round(value * sum(amount) OVER w, sum(amount) OVER p, 2)
               - gr.exact_round(value * (sum(amount) OVER w - amount), sum(amount) OVER p, 2) AS amount,
               sum(amount) OVER p AS total
          FROM earn WHERE calc = 'fixed_amount' AND num = den
        WINDOW p AS (PARTITION BY participant_key, offer_key),
               w AS (PARTITION BY participant_key, offer_key ORDER BY transaction_id COLLATE "C")),
    growth AS ( -- pays_on growth: exact amounts x (C - B) / C by running sums
        SELECT participant_key, offer_key, transaction_id, rate_key,
               gr.exact_round((sum(x) OVER w) * (c - b), c, 2)
               - gr.exact_round((sum(x) OVER w - x) * (c - b), c, 2) AS amount
          FROM exact WHERE pays = 'growth' AND c > b AND num = den
        WINDOW w AS (PARTITION BY participant_key, offer_key ORDER BY transaction_id COLLATE "C")),
    bands AS (  -- incremental: R x C = sum of v(i) x (min(C, e(i+1)) - e(i)) over e(i) <= C
        SELECT e.participant_key, e.offer_key, e.transaction_id, e.rate_key, e.calc, e.c, e.amount, e.gal,
               (SELECT sum(t.value * (least(e.c, COALESCE(e.b * (100 + nx.threshold) * 0.01, e.c))
                                      - e.b * (100 + t.threshold) * 0.01))
                  FROM gr.tier AS t
                  LEFT JOIN LATERAL (SELECT n.threshold FROM gr.tier AS n
                                      WHERE n.offer_key = t.offer_key AND n.threshold > t.threshold
                                      ORDER BY n.threshold LIMIT 1) AS nx ON true
                 WHERE t.offer_key = e.offer_key AND e.b * (100 + t.threshold) * 0.01 <= e.c) AS rc
          FROM earn AS e WHERE e.pays = 'incremental' AND e.c > 0 AND num = den),
    incremental AS (
        SELECT participant_key, offer_key, transaction_id, rate_key,
               CASE calc WHEN 'percent_of_amount' THEN gr.exact_round(amount * rc, 100 * c, 2)
                         ELSE gr.exact_round(gal * rc, c, 2) END AS amount
          FROM bands),
    gated AS (  -- standard offers: 2 % of g_a when the growth reaches the minimum
        SELECT t.participant_key, o.offer_key, t.transaction_id, 'k', gr.exact_round(t.amount * 2 * num, 100 * den, 2)
          FROM gr.offer AS o
          JOIN cb ON cb.offer_key = o.offer_key
          JOIN gr.txn(upto) AS t ON t.participant_key = cb.participant_key
         WHERE o.kind = 'standard' AND cb.b > 0 AND (cb.c * num - cb.b * den) * 100 >= o.req_min * cb.b * den
           AND t.transaction_type = 'buy' AND t.sku_key = 'g_a'
           AND t.transaction_date BETWEEN '2026-01-01' AND '2026-12-31')
    SELECT * FROM all_volume
    UNION ALL SELECT participant_key, offer_key, transaction_id, rate_key, amount FROM pools WHERE total > 0
    UNION ALL SELECT * FROM growth
    UNION ALL SELECT * FROM incremental
    UNION ALL SELECT * FROM gated
$$;

-- ---- the comparisons -----------------------------------------------------------
CREATE TEMP TABLE engine_rows AS
SELECT participant_key, offer_key, transaction_id, incentive_rate_key AS rate_key, incentive_amount AS amount
  FROM incentives.incentive_calculate();
CREATE TEMP TABLE reference_rows AS SELECT * FROM gr.rows('9999-12-31', 1, 1);
SELECT count(*) AS row_mismatches FROM (
    (TABLE engine_rows EXCEPT ALL TABLE reference_rows)
    UNION ALL (TABLE reference_rows EXCEPT ALL TABLE engine_rows)) AS x \gset

-- the growth percentage and why there is none, per participant and stepped offer
SELECT count(*) AS progress_mismatches
  FROM incentives.tier_progress() AS tp
  JOIN gr.cb('9999-12-31') AS cb USING (participant_key, offer_key)
 WHERE tp.growth_percent IS DISTINCT FROM
           CASE WHEN cb.b > 0 THEN gr.exact_round((cb.c - cb.b) * 100, cb.b, 6) END
    OR tp.no_growth_value IS DISTINCT FROM
           CASE WHEN cb.b IS NULL THEN 'baseline is missing' WHEN cb.b <= 0 THEN 'baseline is not positive' END \gset

-- the forecast at three random dates of 2026 (span 365 days), for the
-- offers modelled: all-volume percent and dollar stepped offers, standard
CREATE TEMP TABLE forecast_mismatches (as_of date, n bigint);
CREATE TEMP TABLE forecast_rows (n bigint);
CREATE FUNCTION gr.forecast_reference(as_of date)
RETURNS TABLE (participant_key text, offer_key text, elapsed_days integer, span_days integer,
               basis_to_date numeric, projected_basis numeric, rate_key_to_date text, projected_rate_key text,
               earned_to_date numeric, projected_earnings numeric, accrual_to_date numeric)
LANGUAGE sql STABLE AS $$
    WITH d AS (SELECT (least(as_of, date '2026-12-31') - date '2026-01-01' + 1)::numeric AS elapsed,
                      365::numeric AS span),
    modelled AS (SELECT o.* FROM gr.offer AS o
                  WHERE o.kind = 'standard' OR (o.pays = 'all_volume' AND o.calc <> 'fixed_amount')),
    actual AS (SELECT r.participant_key, r.offer_key, sum(r.amount) AS amount
                 FROM gr.rows(as_of, 1, 1) AS r GROUP BY 1, 2),
    projected AS (SELECT r.participant_key, r.offer_key, sum(r.amount) AS amount
                    FROM d, gr.rows(as_of, d.span, d.elapsed) AS r GROUP BY 1, 2)
    SELECT cb.participant_key, o.offer_key, d.elapsed::integer, d.span::integer,
           CASE WHEN o.kind = 'stepped' AND cb.b > 0 THEN gr.exact_round((cb.c - cb.b) * 100, cb.b, 6) END,
           CASE WHEN o.kind = 'stepped' AND cb.b > 0
                THEN gr.exact_round((cb.c * d.span - cb.b * d.elapsed) * 100, cb.b * d.elapsed, 6) END,
           CASE WHEN o.kind = 'stepped' THEN (gr.tier_met(o.offer_key, cb.c, cb.b, 1, 1)).rate_key END,
           CASE WHEN o.kind = 'stepped' THEN (gr.tier_met(o.offer_key, cb.c, cb.b, d.span, d.elapsed)).rate_key END,
           COALESCE(a.amount, 0.00), COALESCE(p.amount, 0.00),
           -- the straight line's share, never less than what is earned
           GREATEST(gr.exact_round(COALESCE(p.amount, 0.00) * d.elapsed, d.span, 2), COALESCE(a.amount, 0.00))
      FROM d, gr.cb(as_of) AS cb
      JOIN modelled AS o ON o.offer_key = cb.offer_key
      LEFT JOIN actual AS a ON a.participant_key = cb.participant_key AND a.offer_key = cb.offer_key
      LEFT JOIN projected AS p ON p.participant_key = cb.participant_key AND p.offer_key = cb.offer_key
     WHERE a.offer_key IS NOT NULL OR p.offer_key IS NOT NULL
$$;
DO $$
DECLARE
    d date;
    n bigint;
BEGIN
    FOREACH d IN ARRAY (SELECT array_agg(date '2026-01-01' + floor(random() * 365)::int) FROM generate_series(1, 3)) LOOP
        CREATE TEMP TABLE f_reference AS SELECT * FROM gr.forecast_reference(d);
        CREATE TEMP TABLE f_engine AS
        SELECT participant_key, offer_key, elapsed_days, span_days, basis_to_date, projected_basis,
               rate_key_to_date, projected_rate_key, earned_to_date, projected_earnings, accrual_to_date
          FROM incentives.forecast(d) AS f
         WHERE f.offer_key IN (SELECT o.offer_key FROM gr.offer AS o
                                WHERE o.kind = 'standard' OR (o.pays = 'all_volume' AND o.calc <> 'fixed_amount'));
        SELECT count(*) INTO n FROM ((TABLE f_engine EXCEPT ALL TABLE f_reference)
                                     UNION ALL (TABLE f_reference EXCEPT ALL TABLE f_engine)) AS x;
        INSERT INTO forecast_mismatches VALUES (d, n);
        INSERT INTO forecast_rows SELECT count(*) FROM f_reference;
        DROP TABLE f_reference, f_engine;
    END LOOP;
END
$$;

-- ---- one line of counts --------------------------------------------------------
SELECT format('growth_random seed=%s: row_mismatches=%s progress_mismatches=%s forecast_mismatches=%s '
              '| rows=%s (all_volume=%s growth=%s incremental=%s pools=%s gated=%s) no_growth_value=%s '
              'forecast_rows=%s forecast_dates=%s',
              :'seed', :row_mismatches, :progress_mismatches,
              (SELECT sum(n) FROM forecast_mismatches),
              (SELECT count(*) FROM reference_rows),
              (SELECT count(*) FROM reference_rows r JOIN gr.offer o USING (offer_key)
                WHERE o.kind = 'stepped' AND o.pays = 'all_volume' AND o.calc <> 'fixed_amount'),
              (SELECT count(*) FROM reference_rows r JOIN gr.offer o USING (offer_key) WHERE o.pays = 'growth'),
              (SELECT count(*) FROM reference_rows r JOIN gr.offer o USING (offer_key) WHERE o.pays = 'incremental'),
              (SELECT count(*) FROM reference_rows r JOIN gr.offer o USING (offer_key) WHERE o.calc = 'fixed_amount'),
              (SELECT count(*) FROM reference_rows r JOIN gr.offer o USING (offer_key) WHERE o.kind = 'standard'),
              (SELECT count(*) FROM gr.cb('9999-12-31') WHERE b IS NULL OR b <= 0),
              (SELECT sum(n) FROM forecast_rows),
              (SELECT string_agg(as_of::text, ',') FROM forecast_mismatches)) AS line;
