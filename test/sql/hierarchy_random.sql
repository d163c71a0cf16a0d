-- hierarchy_random.sql: one random case of offers aggregated over a
-- participant hierarchy, against a reference written here in plain SQL
-- (docs/reference.md, Participant groups; Participant hierarchies).  Run
-- by test/scripts/hierarchy_random.sh with -v seed=N (0 < N < 1) in a
-- database with the extension; prints one line "hierarchy_random ..." of
-- counts, the mismatches first, and on a mismatch WARNINGs naming the
-- differing rows, then an error naming the seed.
--
-- The case: a forest of up to 24 locations in 4 to 6 chains (a few
-- directly in a region), the chains in 2 or 3 regions, the regions maybe
-- in one national group; each member has one open window, or moves to
-- another group mid-season, or leaves its group, or joins late, or stays
-- alone.  Most cases add a chain c9 with no member in a region.  Each chain, region and national group gets a type in
-- incentives.groups: mostly its level's, sometimes another level's,
-- sometimes none.  400 transactions over the season and a little beyond
-- (buys and sells, amounts with cents, a few returns), most by locations,
-- some by chains (a head office buying directly), a few by regions and
-- the national group.  The offers, all in one call:
--   amt_group     stepped all volume on aggregated_amount, by group,
--                 without group_type;
--   amt_chain, amt_region, amt_national
--                 the same with that group_type (each in a case at random);
--   qty_*         stepped on aggregated_quantity, by group, a random level;
--   amt_self      stepped on aggregated_amount, by participant (control);
--   std_*         standard percent_of_amount, a random aggregation and
--                 level (control: aggregation changes only its group_key).
-- Stepped offers have 2 or 3 tiers of percent rates (the lowest at 0 in
-- half of them) and threshold filters of other SKUs than their earning
-- filters.
--
-- The reference: each transaction's ancestors on its date by a recursive
-- walk of incentives.participant_groups; its aggregation key without a
-- group_type: the participant when it is a group_key of some window,
-- else its first ancestor, else itself; with group_type T: the first of
-- itself and its ancestors whose type in incentives.groups is T, else
-- itself.  The threshold is the key's sum over the offer's threshold
-- filter, the tier the highest reached (none reached: no row), each
-- earning transaction paid round(amount * value / 100, 2); group_key is
-- the key when it is a group_key of some window, NULL in offers by
-- participant.  Compared: every earning row of everyone (participant,
-- offer, transaction, rate key, incentive amount, group_key), then the
-- whole rows of calls for each offer alone, and for a few participants
-- alone with all the offers, two or one, against the same rows of the
-- call for everyone.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
TRUNCATE incentives.offers, incentives.transactions, incentives.participant_groups,
         incentives.groups;
DROP SCHEMA IF EXISTS hr CASCADE;
CREATE SCHEMA hr;
SELECT setseed(:seed), set_config('hr.seed', :'seed', false);

-- ---- the hierarchy -----------------------------------------------------------
-- the keys, by level: 0 location, 1 chain, 2 region, 3 national
CREATE TABLE hr.node (key text PRIMARY KEY, level int NOT NULL);
INSERT INTO hr.node
SELECT 'l' || lpad(i::text, 2, '0'), 0 FROM generate_series(1, 16 + floor(random() * 9)::int) AS i;
INSERT INTO hr.node SELECT 'c' || i, 1 FROM generate_series(1, 4 + floor(random() * 3)::int) AS i;
INSERT INTO hr.node SELECT 'r' || i, 2 FROM generate_series(1, 2 + floor(random() * 2)::int) AS i;
INSERT INTO hr.node SELECT 'n1', 3 WHERE random() < 0.7;

-- each member's windows: a group a level up (a location in a region one
-- time in ten); one open window, a move to another group on a day m, a
-- window ending on m, a window starting on m, or none
DO $$
DECLARE
    n record;
    g1 text;
    g2 text;
    up int;
    r float8;
    m date;
BEGIN
    FOR n IN SELECT key, level FROM hr.node ORDER BY key LOOP
        up := n.level + 1;
        IF n.level = 0 AND random() < 0.1 THEN
            up := 2;
        END IF;
        SELECT key INTO g1 FROM hr.node WHERE level = up ORDER BY random() LIMIT 1;
        SELECT key INTO g2 FROM hr.node WHERE level = up AND key <> g1 ORDER BY random() LIMIT 1;
        r := random();
        m := date '2025-10-15' + floor(random() * 320)::int;
        CONTINUE WHEN g1 IS NULL OR r < 0.1;
        IF r < 0.55 OR (r < 0.75 AND g2 IS NULL) THEN
            INSERT INTO incentives.participant_groups VALUES (n.key, g1, '2025-01-01', NULL);
        ELSIF r < 0.75 THEN
            INSERT INTO incentives.participant_groups VALUES
              (n.key, g1, '2025-01-01', m - 1),
              (n.key, g2, m + floor(random() * 2)::int, NULL);
        ELSIF r < 0.88 THEN
            INSERT INTO incentives.participant_groups VALUES (n.key, g1, '2025-01-01', m);
        ELSE
            INSERT INTO incentives.participant_groups VALUES (n.key, g1, m, NULL);
        END IF;
    END LOOP;
END
$$;

-- in most cases a chain with no member, itself in a region
INSERT INTO hr.node SELECT 'c9', 1 WHERE random() < 0.6;
INSERT INTO incentives.participant_groups
SELECT 'c9', (SELECT key FROM hr.node WHERE level = 2 ORDER BY random() LIMIT 1), '2025-01-01', NULL
  FROM hr.node WHERE key = 'c9';

-- types: the level's mostly, another level's sometimes, none sometimes
INSERT INTO incentives.groups (group_key, group_type)
SELECT key, CASE WHEN r < 0.75 THEN (ARRAY['chain', 'region', 'national'])[level]
                 ELSE (ARRAY['chain', 'region', 'national'])[1 + floor(random() * 3)::int] END
  FROM (SELECT key, level, random() AS r FROM hr.node WHERE level > 0) AS x
 WHERE r < 0.88;

-- ---- the transactions --------------------------------------------------------
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount)
SELECT 'T' || lpad(i::text, 4, '0'), p.key,
       CASE WHEN random() < 0.9 THEN 'buy' ELSE 'sell' END,
       date '2025-09-20' + floor(random() * 385)::int,
       's' || (1 + floor(random() * 5))::int,
       sign * round((1 + floor(random() * 400))::numeric / 4, 2), 'gal',
       sign * round((5 + random() * 4000)::numeric, 2)
  FROM (SELECT i, random() AS rp, CASE WHEN random() < 0.06 THEN -1 ELSE 1 END AS sign
          FROM generate_series(1, 400) AS i) AS t
 CROSS JOIN LATERAL (
       SELECT key FROM hr.node
        WHERE level = least(CASE WHEN t.rp < 0.8 THEN 0 WHEN t.rp < 0.95 THEN 1 WHEN t.rp < 0.98 THEN 2 ELSE 3 END,
                            (SELECT max(level) FROM hr.node))
        ORDER BY random() + i * 0 LIMIT 1) AS p;

-- ---- the offers --------------------------------------------------------------
-- level: NULL by participant, '' by group without group_type, else the type
CREATE TABLE hr.offer (offer_key text PRIMARY KEY, strategy text, level text, measure text,
                       earning_skus text[], threshold_skus text[]);
CREATE TABLE hr.tier (offer_key text, threshold numeric, value numeric);
CREATE TABLE hr.rate (offer_key text, sku_key text, rate numeric);

-- a random set of 2 to 4 SKUs
CREATE FUNCTION hr.skus() RETURNS text[] LANGUAGE sql VOLATILE AS $$
    SELECT array_agg(s ORDER BY s)
      FROM (SELECT 's' || i AS s FROM generate_series(1, 5) AS i
             ORDER BY random() LIMIT 2 + floor(random() * 3)::int) AS x
$$;

DO $$
DECLARE
    lv text;
    k text;
    t0 numeric;
    t1 numeric;
    t2 numeric;
    v0 numeric;
    v1 numeric;
    unit numeric;
BEGIN
    INSERT INTO hr.offer VALUES ('amt_group', 'stepped', '', 'amount', hr.skus(), hr.skus()),
                                ('amt_self', 'stepped', NULL, 'amount', hr.skus(), hr.skus());
    FOREACH lv IN ARRAY ARRAY['chain', 'region', 'national'] LOOP
        IF random() < 0.75 THEN
            INSERT INTO hr.offer VALUES ('amt_' || lv, 'stepped', lv, 'amount', hr.skus(), hr.skus());
        END IF;
    END LOOP;
    lv := (ARRAY['', 'chain', 'region'])[1 + floor(random() * 3)::int];
    INSERT INTO hr.offer VALUES ('qty_' || COALESCE(NULLIF(lv, ''), 'group'), 'stepped', lv,
                                 'quantity', hr.skus(), hr.skus());
    lv := (ARRAY[NULL, '', 'chain', 'region'])[1 + floor(random() * 4)::int];
    k := 'std_' || COALESCE(NULLIF(lv, ''), CASE WHEN lv IS NULL THEN 'self' ELSE 'group' END);
    INSERT INTO hr.offer VALUES (k, 'standard', lv, 'amount', hr.skus(), NULL);
    INSERT INTO hr.rate SELECT k, s, trim_scale((1 + floor(random() * 40))::numeric / 8)
      FROM unnest((SELECT earning_skus FROM hr.offer WHERE offer_key = k)) AS s;

    -- tiers: thresholds in reach of a location, a chain and a region
    FOR k, unit IN SELECT offer_key, CASE measure WHEN 'amount' THEN 1000 ELSE 25 END
                     FROM hr.offer WHERE strategy = 'stepped' LOOP
        t0 := CASE WHEN random() < 0.5 THEN 0 ELSE unit * (1 + floor(random() * 15))::numeric END;
        t1 := t0 + unit * (5 + floor(random() * 60))::numeric;
        t2 := t1 + unit * (10 + floor(random() * 120))::numeric;
        v0 := (8 + floor(random() * 16))::numeric / 8;
        v1 := v0 + (1 + floor(random() * 16))::numeric / 8;
        INSERT INTO hr.tier VALUES (k, t0, trim_scale(v0)), (k, t1, trim_scale(v1));
        IF random() < 0.5 THEN
            INSERT INTO hr.tier VALUES (k, t2, trim_scale(v1 + (1 + floor(random() * 16))::numeric / 8));
        END IF;
    END LOOP;
END
$$;

-- an offer's aggregation fields
CREATE FUNCTION hr.aggregation(p_level text) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_level IS NULL THEN jsonb_build_object('aggregation', 'participant')
                WHEN p_level = '' THEN jsonb_build_object('aggregation', 'group')
                ELSE jsonb_build_object('aggregation', 'group', 'group_type', p_level) END
$$;

INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', o.offer_key, 'strategy_key', 'stepped', 'calculator_key', 'percent_of_amount',
         'periods', '[{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}]'::jsonb,
         'incentive', jsonb_build_object(
           'filters', jsonb_build_array(jsonb_build_object('period_key', 'season', 'transaction_type', 'buy',
                                                           'sku_keys', to_jsonb(o.earning_skus))),
           'threshold_definition', jsonb_build_object(
             'type', 'aggregated_' || o.measure,
             'filters', jsonb_build_array(jsonb_build_object('period_key', 'season', 'transaction_type', 'buy',
                                                             'sku_keys', to_jsonb(o.threshold_skus)))),
           'rates', (SELECT jsonb_agg(jsonb_build_object('threshold', t.threshold, 'value', t.value,
                                                         'measure', 'percent') ORDER BY random())
                       FROM hr.tier AS t WHERE t.offer_key = o.offer_key)))
       || hr.aggregation(o.level)
  FROM hr.offer AS o WHERE o.strategy = 'stepped';

INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
         'offer_key', o.offer_key, 'strategy_key', 'standard', 'calculator_key', 'percent_of_amount',
         'periods', '[{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}]'::jsonb,
         'incentives', jsonb_build_array(jsonb_build_object(
           'period_key', 'season', 'transaction_type', 'buy',
           'rates', (SELECT jsonb_agg(jsonb_build_object('sku_key', r.sku_key, 'rate', r.rate,
                                                         'measure', 'percent') ORDER BY r.sku_key)
                       FROM hr.rate AS r WHERE r.offer_key = o.offer_key))))
       || hr.aggregation(o.level)
  FROM hr.offer AS o WHERE o.strategy = 'standard';

-- ---- the reference -----------------------------------------------------------
-- the keys that are a group_key of some window
CREATE TABLE hr.is_group AS SELECT DISTINCT group_key AS key FROM incentives.participant_groups;

-- each transaction's participant (depth 0) and its ancestors on its date
CREATE TABLE hr.up AS
WITH RECURSIVE up(transaction_id, transaction_date, depth, key) AS (
    SELECT transaction_id, transaction_date, 0, participant_key FROM incentives.transactions
    UNION ALL
    SELECT u.transaction_id, u.transaction_date, u.depth + 1, w.group_key
      FROM up AS u
      JOIN incentives.participant_groups AS w
        ON w.participant_key = u.key AND w.start_date <= u.transaction_date
       AND (w.end_date IS NULL OR w.end_date >= u.transaction_date)
     WHERE u.depth < 10)
SELECT transaction_id, depth, key FROM up;

-- each transaction's aggregation key in each offer
CREATE TABLE hr.agg AS
SELECT o.offer_key, t.transaction_id,
       CASE WHEN o.level IS NULL THEN t.participant_key
            WHEN o.level = '' THEN
                 CASE WHEN t.participant_key IN (TABLE hr.is_group) THEN t.participant_key
                      ELSE COALESCE((SELECT u.key FROM hr.up AS u
                                      WHERE u.transaction_id = t.transaction_id AND u.depth = 1),
                                    t.participant_key) END
            ELSE COALESCE((SELECT u.key FROM hr.up AS u
                             JOIN incentives.groups AS g ON g.group_key = u.key
                            WHERE u.transaction_id = t.transaction_id AND g.group_type = o.level
                            ORDER BY u.depth LIMIT 1),
                          t.participant_key) END AS key
  FROM hr.offer AS o CROSS JOIN incentives.transactions AS t;

-- a transaction in the season's buys of a list of SKUs
CREATE FUNCTION hr.matches(p_type text, p_date date, p_sku text, p_skus text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
    SELECT p_type = 'buy' AND p_date BETWEEN date '2025-10-01' AND date '2026-09-30' AND p_sku = ANY (p_skus)
$$;

-- each stepped offer's threshold value per aggregation key (a key with
-- no transaction of the threshold filter: 0)
CREATE TABLE hr.threshold AS
SELECT o.offer_key, a.key,
       sum(CASE o.measure WHEN 'amount' THEN t.amount ELSE t.quantity END) AS value
  FROM hr.offer AS o
  JOIN hr.agg AS a ON a.offer_key = o.offer_key
  JOIN incentives.transactions AS t ON t.transaction_id = a.transaction_id
 WHERE o.strategy = 'stepped'
   AND hr.matches(t.transaction_type, t.transaction_date, t.sku_key, o.threshold_skus)
 GROUP BY o.offer_key, a.key;

CREATE TABLE hr.expected AS
SELECT t.participant_key, o.offer_key, t.transaction_id,
       format('%s_percent_greater_than_or_equal_to_%s', tier.value, tier.threshold) AS incentive_rate_key,
       round(t.amount * tier.value / 100, 2) AS incentive_amount,
       CASE WHEN o.level IS NOT NULL AND a.key IN (TABLE hr.is_group) THEN a.key END AS group_key
  FROM hr.offer AS o
  JOIN hr.agg AS a ON a.offer_key = o.offer_key
  JOIN incentives.transactions AS t ON t.transaction_id = a.transaction_id
  LEFT JOIN hr.threshold AS h ON h.offer_key = o.offer_key AND h.key = a.key
 CROSS JOIN LATERAL (SELECT x.threshold, x.value FROM hr.tier AS x
                      WHERE x.offer_key = o.offer_key AND x.threshold <= COALESCE(h.value, 0)
                      ORDER BY x.threshold DESC LIMIT 1) AS tier
 WHERE o.strategy = 'stepped'
   AND hr.matches(t.transaction_type, t.transaction_date, t.sku_key, o.earning_skus);

INSERT INTO hr.expected
SELECT t.participant_key, o.offer_key, t.transaction_id, 'season_buy',
       round(t.amount * r.rate / 100, 2),
       CASE WHEN o.level IS NOT NULL AND a.key IN (TABLE hr.is_group) THEN a.key END
  FROM hr.offer AS o
  JOIN hr.rate AS r ON r.offer_key = o.offer_key
  JOIN hr.agg AS a ON a.offer_key = o.offer_key
  JOIN incentives.transactions AS t ON t.transaction_id = a.transaction_id AND t.sku_key = r.sku_key
 WHERE o.strategy = 'standard'
   AND hr.matches(t.transaction_type, t.transaction_date, t.sku_key, o.earning_skus);

-- ---- the engine --------------------------------------------------------------
CREATE TABLE hr.everyone AS SELECT * FROM incentives.incentive_calculate();
CREATE TABLE hr.actual AS
SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
  FROM hr.everyone;

CREATE TABLE hr.diff AS
SELECT 'missing' AS side, * FROM (TABLE hr.expected EXCEPT ALL TABLE hr.actual) AS m
UNION ALL
SELECT 'extra', * FROM (TABLE hr.actual EXCEPT ALL TABLE hr.expected) AS x;

-- the calls checked against the call for everyone: each offer alone
-- (its level alone ties the units), and for a few participants alone all
-- the offers, two at random and one at random; the participants: one
-- that moves, a chain and a region (or the national group) that buy
-- directly, a group with no transaction of its own, one at random
CREATE TABLE hr.pick AS
SELECT DISTINCT key FROM (
    (SELECT participant_key AS key FROM incentives.participant_groups
      GROUP BY 1 HAVING count(*) > 1 ORDER BY random() LIMIT 1)
    UNION ALL
    (SELECT t.participant_key FROM incentives.transactions AS t
       JOIN hr.node AS n ON n.key = t.participant_key AND n.level = 1 ORDER BY random() LIMIT 1)
    UNION ALL
    (SELECT t.participant_key FROM incentives.transactions AS t
       JOIN hr.node AS n ON n.key = t.participant_key AND n.level >= 2 ORDER BY random() LIMIT 1)
    UNION ALL
    (SELECT key FROM hr.is_group
      WHERE key NOT IN (SELECT participant_key FROM incentives.transactions) ORDER BY random() LIMIT 1)
    UNION ALL
    (SELECT participant_key FROM incentives.transactions ORDER BY random() LIMIT 1)) AS x;
CREATE TABLE hr.calls AS
SELECT ARRAY[offer_key] AS offer_keys, NULL::text AS participant_key FROM hr.offer
UNION ALL
SELECT c.offer_keys, p.key
  FROM (SELECT NULL::text[] AS offer_keys
        UNION ALL (SELECT array_agg(offer_key) FROM (SELECT offer_key FROM hr.offer ORDER BY random() LIMIT 2) AS x)
        UNION ALL (SELECT ARRAY[offer_key] FROM hr.offer ORDER BY random() LIMIT 1)) AS c
 CROSS JOIN hr.pick AS p;

CREATE TABLE hr.alone_diff (call text, side text, row text);
DO $$
DECLARE
    c text[];
    p text;
BEGIN
    FOR c, p IN SELECT offer_keys, participant_key FROM hr.calls
                 ORDER BY offer_keys NULLS FIRST, participant_key NULLS FIRST LOOP
        INSERT INTO hr.alone_diff
        WITH alone AS MATERIALIZED (
                 SELECT * FROM incentives.incentive_calculate(participant_key => p, offer_keys => c)),
             want AS MATERIALIZED (
                 SELECT * FROM hr.everyone
                  WHERE (p IS NULL OR participant_key = p) AND (c IS NULL OR offer_key = ANY (c)))
        SELECT format('participant %s offers %s', COALESCE(p, 'everyone'), COALESCE(c::text, 'all')),
               d.side, d.e
          FROM (SELECT 'missing' AS side, e::text AS e FROM (TABLE want EXCEPT ALL TABLE alone) AS e
                UNION ALL
                SELECT 'extra', e::text FROM (TABLE alone EXCEPT ALL TABLE want) AS e) AS d;
    END LOOP;
END
$$;

SELECT format('hierarchy_random row_mismatches=%s alone_mismatches=%s rows=%s grouped=%s '
              'tierless_keys=%s offers=%s alone=%s seed=%s',
              (SELECT count(*) FROM hr.diff), (SELECT count(*) FROM hr.alone_diff),
              (SELECT count(*) FROM hr.actual),
              (SELECT count(*) FROM hr.actual WHERE group_key IS NOT NULL),
              (SELECT count(*) FROM hr.threshold AS h
                WHERE NOT EXISTS (SELECT FROM hr.tier AS x
                                   WHERE x.offer_key = h.offer_key AND x.threshold <= h.value)),
              (SELECT string_agg(coalesce(level, '-') || ':' || offer_key, ',' ORDER BY offer_key) FROM hr.offer),
              (SELECT string_agg(key, ',' ORDER BY key) FROM hr.pick), :'seed');

-- on a mismatch: the rows, then an error naming the seed
DO $$
DECLARE
    d record;
BEGIN
    FOR d IN SELECT * FROM hr.diff ORDER BY transaction_id, offer_key, side LIMIT 40 LOOP
        RAISE WARNING 'hierarchy_random: % %', d.side, row(d.participant_key, d.offer_key, d.transaction_id,
                                                            d.incentive_rate_key, d.incentive_amount, d.group_key);
    END LOOP;
    FOR d IN SELECT * FROM hr.alone_diff ORDER BY call, side LIMIT 40 LOOP
        RAISE WARNING 'hierarchy_random: % %: %', d.call, d.side, d.row;
    END LOOP;
    IF EXISTS (TABLE hr.diff) OR EXISTS (TABLE hr.alone_diff) THEN
        RAISE EXCEPTION 'hierarchy_random: seed % differs from the reference', current_setting('hr.seed');
    END IF;
END
$$;
