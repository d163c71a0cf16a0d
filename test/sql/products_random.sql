-- products_random.sql: one random case of offers written on products,
-- against a set-based reference written here in SQL (docs/reference.md,
-- Products).  Run by test/scripts/products_random.sh with -v seed=N
-- (0 < N < 1) in a database with the extension; prints one line
-- "products_random ..." of counts, the mismatches first.
--
-- The case: a forest of 10 product nodes (a random parent among the nodes
-- before it, or none), 12 SKUs with 1 to 3 dated windows each in random
-- nodes (open or closed ends, overlapping across nodes, never within one),
-- 300 transactions of 15 participants over 2026, and 6 offers:
--   standard percent_of_amount, one entry, rates on 1 to 2 SKUs and 1 to 4
--   products (in random order), an entry exclusion of a SKU and of a
--   product at random;
--   stepped percent_of_amount, all volume, tiers at 0 and at a random
--   amount, earning and threshold filters of 0 to 2 SKUs and 1 to 2
--   products, an exclusion of a product at random.
-- The reference reads a SKU's products on the transaction's date: a
-- window of the SKU containing the date whose node is the product or a
-- descendant of it, at distance 1 + the edges between them.  Standard: the
-- SKU's own rate, else the listed product at the smallest distance, the
-- first listed of two as near; nothing when excluded.  Stepped: the
-- threshold is the participant's matching amount, the tier the highest
-- reached, each earning transaction paid its rate.  Compared: every
-- earning row (participant, offer, transaction, rate value, incentive
-- amount, product_key).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.sku_products, incentives.products;
DROP SCHEMA IF EXISTS pr CASCADE;
CREATE SCHEMA pr;
SELECT setseed(:seed);

-- ---- the catalog -------------------------------------------------------------
CREATE TABLE pr.node AS
SELECT i, 'n' || i AS product_key,
       CASE WHEN i > 1 AND random() < 0.7 THEN 'n' || (1 + floor(random() * (i - 1)))::int END AS parent_key
  FROM generate_series(1, 10) AS i;
INSERT INTO incentives.products (product_key, parent_key)
SELECT product_key, parent_key FROM pr.node;

-- each SKU's windows: 1 to 3, in distinct nodes (so never two in one node)
CREATE TABLE pr.win AS
SELECT 's' || s AS sku_key, n.product_key,
       CASE WHEN random() < 0.4 THEN '-infinity'::date
            ELSE date '2026-01-01' + floor(random() * 300)::int END AS start_date,
       random() AS r_end
  FROM generate_series(1, 12) AS s,
       LATERAL (SELECT product_key FROM pr.node ORDER BY random() + s * 0 LIMIT 1 + floor(random() * 3)::int) AS n;
ALTER TABLE pr.win ADD end_date date;
UPDATE pr.win SET end_date = CASE WHEN r_end < 0.5 THEN NULL
                                  ELSE greatest(start_date, date '2026-01-01') + floor(r_end * 200)::int END;
INSERT INTO incentives.sku_products (sku_key, product_key, start_date, end_date)
SELECT sku_key, product_key, start_date, end_date FROM pr.win;

-- every (sku, window dates, product) a window reaches, with its distance
CREATE TABLE pr.reach AS
WITH RECURSIVE up(sku_key, start_date, end_date, product_key, distance) AS (
    SELECT w.sku_key, w.start_date, w.end_date, w.product_key, 1 FROM pr.win AS w
    UNION ALL
    SELECT u.sku_key, u.start_date, u.end_date, n.parent_key, u.distance + 1
      FROM up AS u JOIN pr.node AS n ON n.product_key = u.product_key
     WHERE n.parent_key IS NOT NULL)
SELECT * FROM up;
-- pr.dist(sku, product, date): the SKU's distance to the product that day, or NULL
CREATE FUNCTION pr.dist(p_sku text, p_product text, p_date date) RETURNS int
LANGUAGE sql STABLE AS $$
    SELECT min(r.distance) FROM pr.reach AS r
     WHERE r.sku_key = p_sku AND r.product_key = p_product
       AND r.start_date <= p_date AND (r.end_date IS NULL OR r.end_date >= p_date)
$$;

-- ---- the transactions --------------------------------------------------------
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount)
SELECT 'T' || lpad(i::text, 4, '0'), 'p' || (1 + floor(random() * 15))::int,
       CASE WHEN random() < 0.85 THEN 'buy' ELSE 'sell' END,
       date '2026-01-01' + floor(random() * 365)::int,
       's' || (1 + floor(random() * 13))::int,
       1 + floor(random() * 20), 'gal', round((10 + random() * 990)::numeric, 2)
  FROM generate_series(1, 300) AS i;

-- ---- the offers --------------------------------------------------------------
-- rates of a standard offer: the listing order, a SKU or a product, a rate
CREATE TABLE pr.rate (offer_key text, ord int, sku_key text, product_key text, rate numeric);
CREATE TABLE pr.excl (offer_key text, role text, sku_key text, product_key text);
CREATE TABLE pr.filt (offer_key text, role text, sku_key text, product_key text);
CREATE TABLE pr.tier (offer_key text, threshold numeric, value numeric);

DO $$
DECLARE
    o int;
    k text;
    nprod int;
    nsku int;
BEGIN
    FOR o IN 1 .. 3 LOOP
        k := 'std' || o;
        nsku := floor(random() * 3)::int;
        nprod := 1 + floor(random() * 4)::int;
        INSERT INTO pr.rate
        SELECT k, row_number() OVER (ORDER BY random()), x.sku_key, x.product_key,
               (1 + floor(random() * 8))::numeric / 2
          FROM ((SELECT 's' || (1 + floor(random() * 12))::int AS sku_key, NULL::text AS product_key
                   FROM generate_series(1, nsku) GROUP BY 1)
                UNION
                (SELECT NULL, product_key FROM pr.node ORDER BY random() LIMIT nprod)) AS x;
        IF random() < 0.5 THEN
            INSERT INTO pr.excl VALUES (k, 'entry', 's' || (1 + floor(random() * 12))::int, NULL);
        END IF;
        IF random() < 0.5 THEN
            INSERT INTO pr.excl SELECT k, 'entry', NULL, product_key FROM pr.node ORDER BY random() LIMIT 1;
        END IF;
    END LOOP;
    FOR o IN 1 .. 3 LOOP
        k := 'stp' || o;
        INSERT INTO pr.filt SELECT DISTINCT k, r, 's' || (1 + floor(random() * 12))::int, NULL::text
          FROM unnest(ARRAY['earning', 'threshold']) AS r, generate_series(1, floor(random() * 3)::int);
        INSERT INTO pr.filt SELECT k, r, NULL, n.product_key
          FROM unnest(ARRAY['earning', 'threshold']) AS r,
               LATERAL (SELECT product_key FROM pr.node ORDER BY random() + length(r) * 0
                         LIMIT 1 + floor(random() * 2)::int) AS n;
        IF random() < 0.5 THEN
            INSERT INTO pr.excl SELECT k, r, NULL, n.product_key
              FROM unnest(ARRAY['earning', 'threshold']) AS r,
                   LATERAL (SELECT product_key FROM pr.node ORDER BY random() + length(r) * 0 LIMIT 1) AS n;
        END IF;
        INSERT INTO pr.tier VALUES (k, 0, 1), (k, 500 + floor(random() * 4000), 3);
    END LOOP;
END
$$;

-- a filter of role r as JSON
CREATE FUNCTION pr.filter_json(p_offer text, p_role text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('period_key', 'y', 'transaction_type', 'buy')
           || COALESCE((SELECT jsonb_build_object('sku_keys', jsonb_agg(sku_key ORDER BY sku_key))
                          FROM pr.filt WHERE offer_key = p_offer AND role = p_role AND sku_key IS NOT NULL
                        HAVING count(*) > 0), '{}')
           || COALESCE((SELECT jsonb_build_object('product_keys', jsonb_agg(product_key ORDER BY product_key))
                          FROM pr.filt WHERE offer_key = p_offer AND role = p_role AND product_key IS NOT NULL
                        HAVING count(*) > 0), '{}')
           || COALESCE((SELECT jsonb_build_object('exclude_product_keys', jsonb_agg(product_key ORDER BY product_key))
                          FROM pr.excl WHERE offer_key = p_offer AND role = p_role AND product_key IS NOT NULL
                        HAVING count(*) > 0), '{}')
$$;

INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', k, 'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
         'periods', jsonb_build_array(jsonb_build_object('key', 'y', 'start_date', '2026-01-01',
                                                         'end_date', '2026-12-31')),
         'incentives', jsonb_build_array(
           jsonb_build_object('key', 'e', 'period_key', 'y', 'transaction_type', 'buy',
                              'rates', (SELECT jsonb_agg(CASE WHEN r.sku_key IS NOT NULL
                                                              THEN jsonb_build_object('sku_key', r.sku_key)
                                                              ELSE jsonb_build_object('product_key', r.product_key) END
                                                         || jsonb_build_object('rate', r.rate, 'measure', 'percent')
                                                         ORDER BY r.ord)
                                          FROM pr.rate AS r WHERE r.offer_key = k))
           || COALESCE((SELECT jsonb_build_object('exclude_sku_keys', jsonb_agg(sku_key))
                          FROM pr.excl WHERE offer_key = k AND sku_key IS NOT NULL HAVING count(*) > 0), '{}')
           || COALESCE((SELECT jsonb_build_object('exclude_product_keys', jsonb_agg(product_key))
                          FROM pr.excl WHERE offer_key = k AND product_key IS NOT NULL HAVING count(*) > 0), '{}')))
  FROM (SELECT DISTINCT offer_key AS k FROM pr.rate) AS o;

INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', k, 'strategy_key', 'stepped', 'calculator_key', 'percent_of_amount',
         'periods', jsonb_build_array(jsonb_build_object('key', 'y', 'start_date', '2026-01-01',
                                                         'end_date', '2026-12-31')),
         'incentive', jsonb_build_object(
           'filters', jsonb_build_array(pr.filter_json(k, 'earning')),
           'threshold_definition', jsonb_build_object('type', 'aggregated_amount',
                                                      'filters', jsonb_build_array(pr.filter_json(k, 'threshold'))),
           'rates', (SELECT jsonb_agg(jsonb_build_object('threshold', t.threshold, 'value', t.value,
                                                         'measure', 'percent') ORDER BY t.threshold)
                       FROM pr.tier AS t WHERE t.offer_key = k)))
  FROM (SELECT DISTINCT offer_key AS k FROM pr.tier) AS o;

-- ---- the reference -----------------------------------------------------------
-- standard: each transaction's rate in each offer
CREATE TABLE pr.expected AS
SELECT t.participant_key, r.offer_key, t.transaction_id, r.rate AS rate_value,
       round(t.amount * r.rate / 100, 2) AS incentive_amount, r.product_key
  FROM incentives.transactions AS t
 CROSS JOIN LATERAL (
       SELECT c.offer_key, c.rate, c.product_key
         FROM (SELECT DISTINCT offer_key FROM pr.rate) AS o
        CROSS JOIN LATERAL (
              SELECT q.offer_key, q.rate, q.product_key
                FROM pr.rate AS q
               WHERE q.offer_key = o.offer_key
                 AND (q.sku_key = t.sku_key OR pr.dist(t.sku_key, q.product_key, t.transaction_date) IS NOT NULL)
               ORDER BY CASE WHEN q.sku_key IS NOT NULL THEN 0
                             ELSE pr.dist(t.sku_key, q.product_key, t.transaction_date) END, q.ord
               LIMIT 1) AS c
        WHERE NOT EXISTS (SELECT FROM pr.excl AS x
                           WHERE x.offer_key = o.offer_key
                             AND (x.sku_key = t.sku_key
                                  OR pr.dist(t.sku_key, x.product_key, t.transaction_date) IS NOT NULL))) AS r
 WHERE t.transaction_type = 'buy';

-- stepped: a transaction matches a filter of role r
CREATE FUNCTION pr.matches(p_offer text, p_role text, p_sku text, p_date date) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT FROM pr.filt AS f
                    WHERE f.offer_key = p_offer AND f.role = p_role
                      AND (f.sku_key = p_sku OR pr.dist(p_sku, f.product_key, p_date) IS NOT NULL))
       AND NOT EXISTS (SELECT FROM pr.excl AS x
                        WHERE x.offer_key = p_offer AND x.role = p_role
                          AND pr.dist(p_sku, x.product_key, p_date) IS NOT NULL)
$$;
INSERT INTO pr.expected
SELECT t.participant_key, o.offer_key, t.transaction_id, tier.value,
       round(t.amount * tier.value / 100, 2), NULL
  FROM (SELECT DISTINCT offer_key FROM pr.tier) AS o
  JOIN incentives.transactions AS t ON t.transaction_type = 'buy'
 CROSS JOIN LATERAL (SELECT COALESCE(sum(u.amount), 0) AS total
                       FROM incentives.transactions AS u
                      WHERE u.participant_key = t.participant_key AND u.transaction_type = 'buy'
                        AND pr.matches(o.offer_key, 'threshold', u.sku_key, u.transaction_date)) AS th
 CROSS JOIN LATERAL (SELECT x.value FROM pr.tier AS x
                      WHERE x.offer_key = o.offer_key AND x.threshold <= th.total
                      ORDER BY x.threshold DESC LIMIT 1) AS tier
 WHERE pr.matches(o.offer_key, 'earning', t.sku_key, t.transaction_date);

CREATE TABLE pr.actual AS
SELECT participant_key, offer_key, transaction_id, incentive_rate_value AS rate_value,
       incentive_amount, product_key
  FROM incentives.incentive_calculate();

SELECT format('products_random row_mismatches=%s rows=%s standard_rows=%s product_rows=%s excluded=%s seed=%s',
              (SELECT count(*) FROM ((TABLE pr.expected EXCEPT ALL TABLE pr.actual)
                                     UNION ALL (TABLE pr.actual EXCEPT ALL TABLE pr.expected)) AS d),
              (SELECT count(*) FROM pr.actual),
              (SELECT count(*) FROM pr.actual WHERE offer_key LIKE 'std%'),
              (SELECT count(*) FROM pr.actual WHERE product_key IS NOT NULL),
              (SELECT count(*) FROM pr.excl), :'seed');
