-- returns_random.sql: one random case of returns against their sale,
-- against a reference written here in plain SQL (docs/reference.md,
-- Returns against their sale).  Run by test/scripts/returns_random.sh
-- with -v seed=N (0 < N < 1) in a database with the extension; prints one
-- line "returns_random ..." of counts, the mismatches first, and on a
-- mismatch WARNINGs naming the differing rows, then an error naming the
-- seed.
--
-- The case: 6 participants, 3 SKUs, 160 sales dated from two months
-- before the season (2025-10-01 .. 2026-09-30) to two months after it,
-- and 90 rows naming an original_transaction_id or not: returns of a sale
-- of the same participant and SKU dated on or after it (usable), before
-- it (not usable), of another participant's sale, of another SKU's, of
-- nothing; price credits (quantity 0, a negative amount) of a usable
-- sale; rows that are no return naming a sale (a positive quantity; a
-- zero quantity with a positive amount); returns naming nothing.  The
-- offers, all in one call:
--   std_flat   standard 2% over the season;
--   std_halves standard, 1% on the first half of the season and 4% on
--              the second (two entries, two periods);
--   std_enr    standard 3%, enrollment required, each participant's
--              windows at random (none, one, two);
--   stp        stepped all volume on aggregated_amount over the season,
--              1% from 0 and 2% from a random threshold.
--
-- The reference: a row is a return when its quantity is negative, or zero
-- with a negative amount; its matching date is the date of the
-- transaction its original_transaction_id names when that one has the
-- same participant and SKU and is dated on or before it, else its own.
-- Periods, enrollment windows and the stepped threshold read the matching
-- date; each earning row pays round(amount * rate / 100, 2).  Compared:
-- every earning row of everyone (participant, offer, transaction, rate
-- key, incentive amount), then the same through a random through_date
-- (which reads rows by their own date), then each participant's call
-- against its rows of the call for everyone.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET jit = off;
TRUNCATE incentives.offers, incentives.transactions, incentives.enrollments;
DROP SCHEMA IF EXISTS rr CASCADE;
CREATE SCHEMA rr;
SELECT setseed(:seed), set_config('rr.seed', :'seed', false);

-- ---- the transactions --------------------------------------------------------
CREATE TABLE rr.sale AS
SELECT 'S' || lpad(i::text, 3, '0') AS transaction_id,
       'p' || (1 + floor(random() * 6)::int) AS participant_key,
       's' || (1 + floor(random() * 3)::int) AS sku_key,
       DATE '2025-08-01' + floor(random() * 485)::int AS transaction_date,
       (1 + floor(random() * 40)::int) AS quantity,
       round((20 + random() * 980)::numeric, 2) AS amount
  FROM generate_series(1, 160) AS i;

-- the other rows, by kind
CREATE TABLE rr.other (transaction_id text, participant_key text, sku_key text,
                       transaction_date date, quantity numeric, amount numeric,
                       original_transaction_id text, kind text);
DO $$
DECLARE
    i int;
    k float8;
    s record;
    o record;
BEGIN
    FOR i IN 1..90 LOOP
        k := random();
        SELECT * INTO s FROM rr.sale ORDER BY random() LIMIT 1;
        IF k < 0.35 THEN
            -- a usable return: same participant and SKU, on or after the sale
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                s.transaction_date + floor(random() * 120)::int, -(1 + floor(random() * 5)::int),
                -round((10 + random() * 300)::numeric, 2), s.transaction_id, 'usable');
        ELSIF k < 0.45 THEN
            -- a price credit of a usable sale
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                s.transaction_date + floor(random() * 90)::int, 0,
                -round((5 + random() * 100)::numeric, 2), s.transaction_id, 'price_credit');
        ELSIF k < 0.55 THEN
            -- dated before its original
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                s.transaction_date - (1 + floor(random() * 60)::int), -1,
                -round((10 + random() * 100)::numeric, 2), s.transaction_id, 'before');
        ELSIF k < 0.63 THEN
            -- another participant's sale
            INSERT INTO rr.other VALUES ('R' || i,
                CASE s.participant_key WHEN 'p1' THEN 'p2' ELSE 'p1' END, s.sku_key,
                s.transaction_date + floor(random() * 60)::int, -1,
                -round((10 + random() * 100)::numeric, 2), s.transaction_id, 'other_participant');
        ELSIF k < 0.71 THEN
            -- another SKU's sale
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key,
                CASE s.sku_key WHEN 's1' THEN 's2' ELSE 's1' END,
                s.transaction_date + floor(random() * 60)::int, -1,
                -round((10 + random() * 100)::numeric, 2), s.transaction_id, 'other_sku');
        ELSIF k < 0.78 THEN
            -- nothing by that id
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                s.transaction_date + floor(random() * 60)::int, -2,
                -round((10 + random() * 100)::numeric, 2), 'NOPE-' || i, 'missing');
        ELSIF k < 0.85 THEN
            -- no return (a positive quantity, or zero with a positive amount)
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                s.transaction_date + floor(random() * 60)::int,
                CASE WHEN random() < 0.5 THEN 2 ELSE 0 END,
                round((10 + random() * 100)::numeric, 2), s.transaction_id, 'no_return');
        ELSE
            -- a return naming nothing
            INSERT INTO rr.other VALUES ('R' || i, s.participant_key, s.sku_key,
                DATE '2025-08-01' + floor(random() * 485)::int, -1,
                -round((10 + random() * 100)::numeric, 2), NULL, 'no_original');
        END IF;
    END LOOP;
END
$$;

INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type,
                                     transaction_date, sku_key, quantity, uom_key, amount,
                                     original_transaction_id)
SELECT transaction_id, participant_key, 'buy', transaction_date, sku_key, quantity, 'gal', amount, NULL
  FROM rr.sale
UNION ALL
SELECT transaction_id, participant_key, 'buy', transaction_date, sku_key, quantity, 'gal', amount,
       original_transaction_id
  FROM rr.other;

-- ---- the offers --------------------------------------------------------------
CREATE TABLE rr.threshold AS SELECT round((500 + random() * 6000)::numeric, 0) AS value;
INSERT INTO incentives.offers (document) VALUES
('{"offer_key": "std_flat", "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "periods": [{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
   "incentives": [{"key": "flat", "period_key": "season", "transaction_type": "buy",
                   "rates": [{"sku_key": "s1", "rate": 2, "measure": "percent"},
                             {"sku_key": "s2", "rate": 2, "measure": "percent"},
                             {"sku_key": "s3", "rate": 2, "measure": "percent"}]}]}'),
('{"offer_key": "std_halves", "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "periods": [{"key": "h1", "start_date": "2025-10-01", "end_date": "2026-03-31"},
               {"key": "h2", "start_date": "2026-04-01", "end_date": "2026-09-30"}],
   "incentives": [{"key": "first", "period_key": "h1", "transaction_type": "buy",
                   "rates": [{"sku_key": "s1", "rate": 1, "measure": "percent"},
                             {"sku_key": "s2", "rate": 1, "measure": "percent"}]},
                  {"key": "second", "period_key": "h2", "transaction_type": "buy",
                   "rates": [{"sku_key": "s1", "rate": 4, "measure": "percent"},
                             {"sku_key": "s2", "rate": 4, "measure": "percent"}]}]}'),
('{"offer_key": "std_enr", "strategy_key": "standard", "calculator_key": "percent_of_amount",
   "enrollment": "required",
   "periods": [{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}],
   "incentives": [{"key": "enrolled", "period_key": "season", "transaction_type": "buy",
                   "rates": [{"sku_key": "s1", "rate": 3, "measure": "percent"},
                             {"sku_key": "s3", "rate": 3, "measure": "percent"}]}]}');
INSERT INTO incentives.offers (document)
SELECT jsonb_build_object(
  'offer_key', 'stp', 'strategy_key', 'stepped', 'calculator_key', 'percent_of_amount',
  'periods', '[{"key": "season", "start_date": "2025-10-01", "end_date": "2026-09-30"}]'::jsonb,
  'incentive', jsonb_build_object(
     'filters', '[{"period_key": "season", "sku_keys": ["s1", "s2", "s3"], "transaction_type": "buy"}]'::jsonb,
     'threshold_definition', '{"type": "aggregated_amount", "filters": [{"period_key": "season", "sku_keys": ["s1", "s2", "s3"], "transaction_type": "buy"}]}'::jsonb,
     'rates', jsonb_build_array(
        jsonb_build_object('key', 'low', 'threshold', 0, 'value', 1, 'measure', 'percent'),
        jsonb_build_object('key', 'high', 'threshold', value, 'value', 2, 'measure', 'percent'))))
  FROM rr.threshold;

-- enrollment windows in std_enr: none, one, or two apart
DO $$
DECLARE
    p int;
    r float8;
    a date;
BEGIN
    FOR p IN 1..6 LOOP
        r := random();
        a := DATE '2025-10-01' + floor(random() * 200)::int;
        IF r < 0.2 THEN
            CONTINUE;
        ELSIF r < 0.7 THEN
            INSERT INTO incentives.enrollments VALUES ('p' || p, 'std_enr', a, a + floor(random() * 200)::int);
        ELSE
            INSERT INTO incentives.enrollments VALUES ('p' || p, 'std_enr', a, a + 40),
                                                      ('p' || p, 'std_enr', a + 90, NULL);
        END IF;
    END LOOP;
END
$$;

-- ---- the reference -----------------------------------------------------------
-- each transaction's matching date
CREATE TABLE rr.txn AS
SELECT t.transaction_id, t.participant_key, t.sku_key, t.transaction_date, t.amount,
       COALESCE(CASE WHEN t.quantity < 0 OR (t.quantity = 0 AND t.amount < 0) THEN
                  (SELECT o.transaction_date FROM incentives.transactions AS o
                    WHERE o.transaction_id = t.original_transaction_id
                      AND o.participant_key = t.participant_key
                      AND o.sku_key = t.sku_key
                      AND o.transaction_date <= t.transaction_date) END,
                t.transaction_date) AS matching_date
  FROM incentives.transactions AS t;

-- expected rows as of a through_date (NULL: every row)
CREATE FUNCTION rr.expected(through date)
RETURNS TABLE (participant_key text, offer_key text, transaction_id text,
               incentive_rate_key text, incentive_amount numeric)
LANGUAGE sql AS $f$
    WITH t AS (SELECT * FROM rr.txn WHERE through IS NULL OR transaction_date <= through),
    season AS (SELECT * FROM t WHERE matching_date BETWEEN '2025-10-01' AND '2026-09-30'),
    stp_sum AS (SELECT participant_key, sum(amount) AS value FROM season GROUP BY 1),
    stp_tier AS (SELECT s.participant_key,
                        CASE WHEN s.value >= (SELECT value FROM rr.threshold) THEN 'high'
                             WHEN s.value >= 0 THEN 'low' END AS tier
                   FROM stp_sum AS s)
    SELECT participant_key, 'std_flat', transaction_id, 'flat', round(amount * 2 / 100, 2)
      FROM season
    UNION ALL
    SELECT participant_key, 'std_halves', transaction_id,
           CASE WHEN matching_date <= '2026-03-31' THEN 'first' ELSE 'second' END,
           round(amount * CASE WHEN matching_date <= '2026-03-31' THEN 1 ELSE 4 END / 100, 2)
      FROM season WHERE sku_key IN ('s1', 's2')
    UNION ALL
    SELECT s.participant_key, 'std_enr', s.transaction_id, 'enrolled', round(s.amount * 3 / 100, 2)
      FROM season AS s
     WHERE s.sku_key IN ('s1', 's3')
       AND EXISTS (SELECT FROM incentives.enrollments AS e
                    WHERE e.participant_key = s.participant_key AND e.offer_key = 'std_enr'
                      AND s.matching_date >= e.start_date
                      AND (e.end_date IS NULL OR s.matching_date <= e.end_date))
    UNION ALL
    SELECT s.participant_key, 'stp', s.transaction_id, x.tier,
           round(s.amount * CASE x.tier WHEN 'high' THEN 2 ELSE 1 END / 100, 2)
      FROM season AS s JOIN stp_tier AS x USING (participant_key)
     WHERE x.tier IS NOT NULL
$f$;

-- ---- the engine --------------------------------------------------------------
CREATE TABLE rr.through AS SELECT DATE '2025-11-01' + floor(random() * 420)::int AS d;
CREATE TABLE rr.diff AS
WITH actual AS (SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount
                  FROM incentives.incentive_calculate()),
     want AS (SELECT * FROM rr.expected(NULL)),
     actual_through AS (SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount
                          FROM incentives.incentive_calculate(through_date => (SELECT d FROM rr.through))),
     want_through AS (SELECT * FROM rr.expected((SELECT d FROM rr.through)))
SELECT 'missing' AS side, 'everyone' AS call, * FROM (TABLE want EXCEPT ALL TABLE actual) AS m
UNION ALL
SELECT 'extra', 'everyone', * FROM (TABLE actual EXCEPT ALL TABLE want) AS x
UNION ALL
SELECT 'missing', 'through', * FROM (TABLE want_through EXCEPT ALL TABLE actual_through) AS m
UNION ALL
SELECT 'extra', 'through', * FROM (TABLE actual_through EXCEPT ALL TABLE want_through) AS x;

-- each participant's call against its rows of the call for everyone
CREATE TABLE rr.everyone AS SELECT * FROM incentives.incentive_calculate();
CREATE TABLE rr.alone_diff AS
SELECT p.participant_key, d.side, d.e
  FROM (SELECT DISTINCT participant_key FROM incentives.transactions) AS p,
       LATERAL (SELECT 'missing' AS side, e::text AS e
                  FROM (SELECT * FROM rr.everyone AS w WHERE w.participant_key = p.participant_key
                        EXCEPT ALL
                        SELECT * FROM incentives.incentive_calculate(p.participant_key)) AS e
                UNION ALL
                SELECT 'extra', e::text
                  FROM (SELECT * FROM incentives.incentive_calculate(p.participant_key)
                        EXCEPT ALL
                        SELECT * FROM rr.everyone AS w WHERE w.participant_key = p.participant_key) AS e) AS d;

SELECT format('returns_random row_mismatches=%s alone_mismatches=%s rows=%s matched=%s '
              'kinds=%s through=%s seed=%s',
              (SELECT count(*) FROM rr.diff), (SELECT count(*) FROM rr.alone_diff),
              (SELECT count(*) FROM rr.everyone),
              (SELECT count(*) FROM rr.txn WHERE matching_date <> transaction_date),
              (SELECT string_agg(kind || ':' || n, ',' ORDER BY kind)
                 FROM (SELECT kind, count(*) AS n FROM rr.other GROUP BY 1) AS k),
              (SELECT d FROM rr.through), :'seed');

-- on a mismatch: the rows, then an error naming the seed
DO $$
DECLARE
    d record;
BEGIN
    FOR d IN SELECT * FROM rr.diff ORDER BY transaction_id, offer_key, side LIMIT 40 LOOP
        RAISE WARNING 'returns_random: % % %', d.call, d.side,
            row(d.participant_key, d.offer_key, d.transaction_id, d.incentive_rate_key, d.incentive_amount);
    END LOOP;
    FOR d IN SELECT * FROM rr.alone_diff ORDER BY participant_key, side LIMIT 40 LOOP
        RAISE WARNING 'returns_random: participant % %: %', d.participant_key, d.side, d.e;
    END LOOP;
    IF EXISTS (TABLE rr.diff) OR EXISTS (TABLE rr.alone_diff) THEN
        RAISE EXCEPTION 'returns_random: seed % differs from the reference', current_setting('rr.seed');
    END IF;
END
$$;
