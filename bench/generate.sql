-- bench/generate.sql: a deterministic, seedable benchmark data set for the
-- incentives extension (bench/README.md).
--
--   psql -X -v ON_ERROR_STOP=1 -v n_transactions=1000000 -v seed=42 -f bench/generate.sql
--
-- Needs the extension (CREATE EXTENSION incentives) in the database.  It
-- empties incentives.offers, transactions, skus and participant_properties
-- (and the user-added unit conversions), then loads:
--
--   1,000 participants (retailer_0001 .. retailer_1000, mildly skewed sizes)
--   300 SKUs in incentives.skus: 130 in gal, 100 in lb, 70 in unit
--   one extra unit conversion, qt -> l 0.946352946 (exactly gal->l / 4), so
--     every unit a transaction uses converts to every unit an offer needs
--   60 offers, each checked with incentives.offer_error() and then inserted
--     through the validation trigger:
--       20 standard (7 percent_of_amount, 7 dollars_per_unit, 6 fixed_amount;
--          one or two entries, some with program prices)
--       20 stepped  (aggregated_amount, aggregated_quantity and property
--          thresholds; percent_of_amount, dollars_per_unit, fixed_amount)
--       20 stacked  (2 or 3 SKU sets, 2 stacks, anchor SKUs at rate 0)
--   participant_properties for the property thresholds (some missing)
--   :n_transactions transactions: both transaction types, dates from
--     2025-08-01 to 2026-10-31 (inside and outside the offer periods),
--     ~3% returns (negative quantity and amount), units gal/qt/l, lb/oz, unit
--
-- Every pseudo-random choice is a hash of (seed, stream, row number)
-- (hashint8extended), so the same seed gives the same data on any run,
-- whatever the plan or the degree of parallelism.  Thresholds of the
-- aggregated stepped offers scale with n_transactions / 1,000,000 so the
-- tiers stay spread over the participants at every size.
\set ON_ERROR_STOP 1
\if :{?n_transactions}
\else
\set n_transactions 1000000
\endif
\if :{?seed}
\else
\set seed 42
\endif

SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS bench;

-- bench.rnd: a uniform float in [0, 1) from (seed, stream, i); inlined.
CREATE OR REPLACE FUNCTION bench.rnd(seed bigint, stream int, i bigint)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (hashint8extended(i, seed * 1000 + stream) & 4503599627370495)::float8 / 4503599627370496.0 $$;

-- bench.pick: the SKU index of the j-th SKU of a pick in one category
-- (gal 0..129, lb 130..229, unit 230..299): a stride of 11 through the
-- category (11 is prime to 130, 100 and 70, so no SKU repeats within a pick
-- of up to the category's size).
CREATE OR REPLACE FUNCTION bench.pick(category int, start int, j int)
RETURNS int LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE category
               WHEN 0 THEN (start + 11 * j) % 130
               WHEN 1 THEN 130 + (start + 11 * j) % 100
               ELSE 230 + (start + 11 * j) % 70 END $$;

CREATE OR REPLACE FUNCTION bench.sku_key(i int)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN i < 130 THEN format('chem_%s_gal', lpad(i::text, 3, '0'))
                  WHEN i < 230 THEN format('dry_%s_lb', lpad(i::text, 3, '0'))
                  ELSE format('seed_%s_bag', lpad(i::text, 3, '0')) END $$;

-- bench.skus_json: the SKU keys of a pick as a jsonb array.
CREATE OR REPLACE FUNCTION bench.skus_json(category int, start int, n int)
RETURNS jsonb LANGUAGE sql IMMUTABLE
AS $$ SELECT jsonb_agg(bench.sku_key(bench.pick(category, start, j)) ORDER BY j)
        FROM generate_series(0, n - 1) j $$;

-- bench.list_price: the SKU's list price per unit of its unit of measure.
CREATE OR REPLACE FUNCTION bench.list_price(seed bigint, i int)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT round((CASE WHEN i < 130 THEN 20 + 100 * bench.rnd(seed, 1, i)
                         WHEN i < 230 THEN 2 + 13 * bench.rnd(seed, 1, i)
                         ELSE 50 + 250 * bench.rnd(seed, 1, i) END)::numeric, 2) $$;

-- bench.make_offers: the 60 offer documents.  scale multiplies the
-- aggregated thresholds (n_transactions / 1e6).
CREATE OR REPLACE FUNCTION bench.make_offers(seed bigint, scale numeric)
RETURNS SETOF jsonb LANGUAGE plpgsql
AS $fn$
DECLARE
    types    text[] := ARRAY['retailer_purchases_from_distribution', 'retailer_sales_to_growers'];
    periods  jsonb := '[{"key": "incentive_period", "start_date": "2025-10-01", "end_date": "2026-09-30"},
                        {"key": "early_order", "start_date": "2025-09-01", "end_date": "2025-12-15"},
                        {"key": "season", "start_date": "2026-01-01", "end_date": "2026-06-30"}]';
    calcs    text[] := ARRAY['percent_of_amount', 'dollars_per_unit', 'fixed_amount'];
    i int; j int; k int; cat int; start int; start0 int; n int;
    calc text; measure text;
    entries jsonb; rates jsonb; prices jsonb; doc jsonb; tiers jsonb;
    filters jsonb; tfilters jsonb; tdef jsonb; sets jsonb; stacks jsonb;
    sku text; r float8; ttype text; v numeric; base numeric; step numeric;
    set_keys text[];
    set_cat int[] := ARRAY[2, 0, 1];          -- seed (unit), treatment (gal), insecticide (lb)
    set_names text[] := ARRAY['seed', 'treatment', 'insecticide'];
BEGIN
    ---------------------------------------------------------------- standard
    FOR i IN 0 .. 19 LOOP
        calc := calcs[i % 3 + 1];
        measure := CASE WHEN calc = 'percent_of_amount' THEN 'percent' ELSE 'dollars' END;
        cat := (i / 3) % 3;
        entries := '[]';
        prices := '[]';
        FOR k IN 0 .. CASE WHEN i % 4 IN (0, 1) THEN 1 ELSE 0 END LOOP
            start := floor(bench.rnd(seed, 100, i * 10 + k) * 100)::int;
            n := 6 + (i + k) % 5 * 2;
            rates := '[]';
            FOR j IN 0 .. n - 1 LOOP
                sku := bench.sku_key(bench.pick(cat, start, j));
                r := bench.rnd(seed, 101, i * 1000 + k * 100 + j);
                v := CASE calc
                       WHEN 'percent_of_amount' THEN round((0.5 + 4.5 * r)::numeric, 1)
                       WHEN 'dollars_per_unit' THEN
                            CASE cat WHEN 0 THEN round((0.25 + 2.75 * r)::numeric, 2)
                                     WHEN 1 THEN round((0.02 + 0.48 * r)::numeric, 3)
                                     ELSE round((1 + 9 * r)::numeric, 2) END
                       ELSE round((50 + 450 * r)::numeric, 0) + CASE WHEN j % 2 = 0 THEN 0.5 ELSE 0 END
                     END;
                rates := rates || jsonb_build_object('sku_key', sku, 'rate', v, 'measure', measure);
                IF i % 5 = 2 AND j % 2 = 0 AND k = 0 THEN
                    prices := prices || jsonb_build_object('sku_key', sku,
                        'price', round(bench.list_price(seed, bench.pick(cat, start, j)) * 1.05, 2));
                END IF;
            END LOOP;
            IF i % 4 = 0 THEN
                -- early order on purchases, then the full season on sales:
                -- generated keys differ
                entries := entries || jsonb_build_object(
                    'period_key', CASE k WHEN 0 THEN 'early_order' ELSE 'incentive_period' END,
                    'transaction_type', types[k + 1],
                    'rates', rates);
            ELSIF i % 4 = 1 THEN
                -- two entries of the same period and type: explicit keys
                entries := entries || jsonb_build_object(
                    'key', CASE k WHEN 0 THEN 'base' ELSE 'growth_bonus' END,
                    'label', CASE k WHEN 0 THEN 'Base rebate' ELSE 'Growth bonus' END,
                    'period_key', 'incentive_period',
                    'transaction_type', types[i % 2 + 1],
                    'rates', rates);
            ELSE
                entries := entries || jsonb_build_object(
                    'label', 'Full season',
                    'period_key', CASE WHEN i % 3 = 0 THEN 'season' ELSE 'incentive_period' END,
                    'transaction_type', types[i % 2 + 1],
                    'rates', rates);
            END IF;
        END LOOP;
        doc := jsonb_build_object(
            'offer_key', format('bench.2026.standard.%s.%s', calc, lpad(i::text, 2, '0')),
            'label', format('Standard %s', i),
            'strategy_key', 'standard',
            'calculator_key', calc,
            'periods', periods,
            'incentives', entries);
        IF jsonb_array_length(prices) > 0 THEN
            doc := doc || jsonb_build_object('prices', prices);
        END IF;
        RETURN NEXT doc;
    END LOOP;

    ---------------------------------------------------------------- stepped
    FOR i IN 0 .. 19 LOOP
        calc := CASE i % 4 WHEN 0 THEN 'percent_of_amount' WHEN 1 THEN 'percent_of_amount'
                           WHEN 2 THEN 'dollars_per_unit' ELSE 'fixed_amount' END;
        measure := CASE WHEN calc = 'percent_of_amount' THEN 'percent' ELSE 'dollars' END;
        cat := (i + 1) % 3;
        ttype := types[(i / 2) % 2 + 1];
        -- earning filters: one or two picks in the category
        filters := '[]';
        FOR k IN 0 .. CASE WHEN i % 3 = 1 THEN 1 ELSE 0 END LOOP
            start := floor(bench.rnd(seed, 200, i * 10 + k) * 100)::int;
            IF k = 0 THEN
                start0 := start;
            END IF;
            n := 8 + (i + k) % 3 * 2;
            filters := filters || jsonb_build_object(
                'period_key', CASE k WHEN 0 THEN 'incentive_period' ELSE 'early_order' END,
                'sku_keys', bench.skus_json(cat, start, n),
                'transaction_type', ttype);
        END LOOP;
        -- thresholds
        n := 12;
        start := floor(bench.rnd(seed, 201, i) * 100)::int;
        tfilters := jsonb_build_array(jsonb_build_object(
            'period_key', 'incentive_period',
            'sku_keys', bench.skus_json(cat, start, n),
            'transaction_type', types[1]));
        IF i % 2 = 0 THEN
            -- a second, overlapping threshold filter: a transaction counts once
            tfilters := tfilters || jsonb_build_object(
                'period_key', 'season',
                'sku_keys', bench.skus_json(cat, start, n / 2),
                'transaction_type', types[1]);
        END IF;
        IF i % 3 = 0 THEN
            -- aggregated_amount: ~ 12/300 of a participant's ~$5.5M of purchases
            tdef := jsonb_build_object('type', 'aggregated_amount', 'filters', tfilters);
            base := 40000;
        ELSIF i % 3 = 1 THEN
            -- aggregated_quantity in the SKUs' units
            tdef := jsonb_build_object('type', 'aggregated_quantity', 'filters', tfilters);
            base := CASE cat WHEN 0 THEN 600 WHEN 1 THEN 5000 ELSE 200 END;
        ELSE
            tdef := jsonb_build_object('type', 'property', 'property',
                jsonb_build_object('key', CASE WHEN i % 2 = 0 THEN 'business_plan_achieved' ELSE 'growth_pct' END,
                                   'type', 'number', 'level', 'request'));
            base := NULL;
        END IF;
        tiers := '[]';
        FOR k IN 0 .. 2 + i % 2 LOOP
            IF base IS NULL THEN
                step := CASE WHEN i % 2 = 0 THEN (ARRAY[75, 85, 100, 110])[k + 1]
                             ELSE (ARRAY[0, 5, 12.5, 20])[k + 1] END;
            ELSE
                step := round(base * scale * (0.6 + k * 0.55 + 0.2 * bench.rnd(seed, 202, i * 10 + k)::numeric), 0);
            END IF;
            v := CASE calc
                   WHEN 'percent_of_amount' THEN 1 + k * 0.75 + CASE WHEN k = 1 THEN 0.13 ELSE 0 END
                   WHEN 'dollars_per_unit' THEN CASE cat WHEN 0 THEN 0.5 + k * 0.35
                                                        WHEN 1 THEN 0.05 + k * 0.025
                                                        ELSE 2 + k * 1.5 END
                   ELSE (500 + k * 750)::numeric
                 END;
            IF k % 2 = 0 THEN
                tiers := jsonb_build_object('key', format('tier_%s', k + 1), 'threshold', step,
                                            'value', v, 'measure', measure) || tiers;
            ELSE
                -- no key: the generated {value}_{measure}_greater_than_or_equal_to_{threshold}
                tiers := jsonb_build_object('threshold', step, 'value', v, 'measure', measure) || tiers;
            END IF;
        END LOOP;
        doc := jsonb_build_object(
            'offer_key', format('bench.2026.stepped.%s.%s', calc, lpad(i::text, 2, '0')),
            'strategy_key', 'stepped',
            'calculator_key', calc,
            'periods', periods,
            'incentive', jsonb_build_object('filters', filters,
                                            'threshold_definition', tdef,
                                            'rates', tiers));
        IF i % 5 = 3 THEN
            doc := doc || jsonb_build_object('prices', jsonb_build_array(
                jsonb_build_object('sku_key', filters -> 0 -> 'sku_keys' ->> 0,
                                   'price', round(bench.list_price(seed, bench.pick(cat, start0, 0)) + 0.77, 2)),
                jsonb_build_object('sku_key', filters -> 0 -> 'sku_keys' ->> 1,
                                   'price', round(bench.list_price(seed, bench.pick(cat, start0, 1)) * 0.9, 2))));
        END IF;
        RETURN NEXT doc;
    END LOOP;

    ---------------------------------------------------------------- stacked
    FOR i IN 0 .. 19 LOOP
        sets := '[]';
        set_keys := '{}';
        FOR k IN 0 .. 1 + i % 2 LOOP
            cat := set_cat[k + 1];
            start := floor(bench.rnd(seed, 300, i * 10 + k) * 100)::int;
            n := 3 + (i + k) % 4;
            rates := '[]';
            entries := '[]';         -- conversion.rates
            FOR j IN 0 .. n - 1 LOOP
                sku := bench.sku_key(bench.pick(cat, start, j));
                r := bench.rnd(seed, 301, i * 1000 + k * 100 + j);
                IF cat = 2 THEN
                    entries := entries || jsonb_build_object('sku_key', sku,
                        'rate', (ARRAY[0.4, 0.35, 0.45, 1.0])[1 + (i + j) % 4], 'from', 'unit');
                ELSIF cat = 0 THEN
                    entries := entries || CASE WHEN (i + j) % 3 = 2
                        THEN jsonb_build_object('sku_key', sku,
                                 'rate', (ARRAY[4.5425, 3.6, 5.1])[1 + (i + j) % 3], 'from', 'l')
                        ELSE jsonb_build_object('sku_key', sku,
                                 'rate', (ARRAY[1.2, 0.96, 1.35, 0.3])[1 + (i + j) % 4], 'from', 'gal') END;
                ELSE
                    entries := entries || CASE WHEN (i + j) % 2 = 0
                        THEN jsonb_build_object('sku_key', sku,
                                 'rate', (ARRAY[160, 144, 176.8])[1 + (i + j) % 3], 'from', 'oz')
                        ELSE jsonb_build_object('sku_key', sku,
                                 'rate', (ARRAY[10, 9, 11.5])[1 + (i + j) % 3], 'from', 'lb') END;
                END IF;
                -- pay rates: seed pays nothing (anchor) except in some offers;
                -- the last SKU of a set is left out of rates (pays 0)
                IF j < n - 1 OR n = 2 THEN
                    v := CASE WHEN cat = 2 AND i % 4 <> 3 THEN 0
                              ELSE round((0.1 + 1.4 * r)::numeric, 2) END;
                    rates := rates || jsonb_build_object('sku_key', sku, 'rate', v, 'measure', 'dollars');
                END IF;
            END LOOP;
            set_keys := set_keys || set_names[k + 1];
            sets := sets || jsonb_build_object(
                'key', set_names[k + 1],
                'period_key', CASE WHEN i % 5 = 4 THEN 'season' ELSE 'incentive_period' END,
                'transaction_type', types[CASE WHEN i % 7 = 6 THEN 1 ELSE 2 END],
                'conversion', jsonb_build_object('coverage_unit', 'acre', 'rates', entries),
                'rates', rates);
        END LOOP;
        IF array_length(set_keys, 1) = 2 THEN
            stacks := jsonb_build_array(
                jsonb_build_object('key', 'pair_up', 'sku_set_keys', to_jsonb(set_keys)),
                jsonb_build_object('sku_set_keys', jsonb_build_array(set_keys[2])));
        ELSE
            stacks := jsonb_build_array(
                jsonb_build_object('sku_set_keys', to_jsonb(set_keys[1:2])),
                jsonb_build_object('key', 'full_stack', 'sku_set_keys', to_jsonb(set_keys)));
        END IF;
        doc := jsonb_build_object(
            'offer_key', format('bench.2026.stacked.%s', lpad(i::text, 2, '0')),
            'strategy_key', 'stacked',
            'calculator_key', 'dollars_per_coverage_unit',
            'periods', periods,
            'incentive', jsonb_build_object('sku_sets', sets, 'stacks', stacks));
        IF i % 6 = 5 THEN
            doc := doc || jsonb_build_object('prices', jsonb_build_array(
                jsonb_build_object('sku_key', sets -> 1 -> 'rates' -> 0 ->> 'sku_key', 'price', 61.25)));
        END IF;
        RETURN NEXT doc;
    END LOOP;
END
$fn$;

\echo generating :n_transactions transactions, seed :seed

TRUNCATE incentives.offers, incentives.transactions, incentives.skus,
         incentives.participant_properties;
DELETE FROM incentives.uom_conversions
 WHERE (from_uom_key, to_uom_key) NOT IN
       (('gal', 'qt'), ('gal', 'pt'), ('gal', 'fl_oz'), ('gal', 'l'), ('l', 'ml'),
        ('lb', 'oz'), ('ton', 'lb'), ('kg', 'g'), ('lb', 'kg'));
INSERT INTO incentives.uom_conversions (from_uom_key, to_uom_key, factor)
VALUES ('qt', 'l', 0.946352946);

INSERT INTO incentives.skus (sku_key, uom_key, label)
SELECT bench.sku_key(i),
       CASE WHEN i < 130 THEN 'gal' WHEN i < 230 THEN 'lb' ELSE 'unit' END,
       format('Benchmark product %s', i)
  FROM generate_series(0, 299) i;

DROP TABLE IF EXISTS bench.participants;
CREATE TABLE bench.participants AS
SELECT format('retailer_%s', lpad(p::text, 4, '0')) AS participant_key
  FROM generate_series(1, 1000) p;

-- Offers: every document must pass offer_error() before it is inserted
-- (the trigger checks it again).
CREATE TEMP TABLE new_offers AS
SELECT d AS document, incentives.offer_error(d) AS error
  FROM bench.make_offers(:seed, :n_transactions / 1000000.0) d;
DO $$
DECLARE
    bad text;
BEGIN
    SELECT string_agg(error, E'\n') INTO bad FROM new_offers WHERE error IS NOT NULL;
    IF bad IS NOT NULL THEN
        RAISE EXCEPTION 'generated offers fail validation: %', bad;
    END IF;
END
$$;
INSERT INTO incentives.offers (document) SELECT document FROM new_offers;

-- Stored properties: ~95% of participants have business_plan_achieved,
-- ~90% growth_pct (the rest: no tier).
INSERT INTO incentives.participant_properties (participant_key, property_key, value)
SELECT participant_key, 'business_plan_achieved',
       round((55 + 65 * bench.rnd(:seed, 400, n))::numeric, 1)
  FROM bench.participants, LATERAL (SELECT substr(participant_key, 10)::int8 AS n) x
 WHERE bench.rnd(:seed, 401, n) < 0.95
UNION ALL
SELECT participant_key, 'growth_pct',
       round((-10 + 40 * bench.rnd(:seed, 402, n))::numeric, 2)
  FROM bench.participants, LATERAL (SELECT substr(participant_key, 10)::int8 AS n) x
 WHERE bench.rnd(:seed, 403, n) < 0.90;

-- Transactions.  Per row n: participant (skewed: low numbers buy more),
-- SKU, type, date, unit, quantity in the SKU's unit, then the quantity in
-- the transaction's unit (qt and oz exactly, l to 2 decimals) and the
-- amount at the list price +-10%; ~3% are returns.
INSERT INTO incentives.transactions
    (transaction_id, participant_key, transaction_type, transaction_date,
     sku_key, quantity, uom_key, amount)
SELECT 'T' || n,
       format('retailer_%s', lpad((1 + floor(1000 * bench.rnd(:seed, 10, n) ^ 1.25))::int::text, 4, '0')),
       CASE WHEN bench.rnd(:seed, 11, n) < 0.55 THEN 'retailer_purchases_from_distribution'
            ELSE 'retailer_sales_to_growers' END,
       date '2025-08-01' + floor(457 * bench.rnd(:seed, 12, n))::int,
       bench.sku_key(sku),
       sign * CASE unit
                WHEN 'qt' THEN qs * 4
                WHEN 'l' THEN round(qs * 3.785411784, 2)
                WHEN 'oz' THEN qs * 16
                ELSE qs END,
       unit,
       sign * round(qs * bench.list_price(:seed, sku) * (0.9 + 0.2 * bench.rnd(:seed, 15, n))::numeric, 2)
  FROM (SELECT n, sku,
               CASE WHEN bench.rnd(:seed, 16, n) < 0.03 THEN -1 ELSE 1 END AS sign,
               CASE WHEN sku < 130 THEN round((1 + 250 * r ^ 2)::numeric, 1)
                    WHEN sku < 230 THEN round((1 + 2000 * r ^ 2)::numeric, 0)
                    ELSE round((1 + 80 * r ^ 2)::numeric, 0) END AS qs,
               CASE WHEN sku < 130 THEN CASE WHEN u < 0.70 THEN 'gal' WHEN u < 0.85 THEN 'qt' ELSE 'l' END
                    WHEN sku < 230 THEN CASE WHEN u < 0.80 THEN 'lb' ELSE 'oz' END
                    ELSE 'unit' END AS unit
          FROM (SELECT n,
                       floor(300 * bench.rnd(:seed, 13, n))::int AS sku,
                       bench.rnd(:seed, 14, n) AS r,
                       bench.rnd(:seed, 17, n) AS u
                  FROM generate_series(1, :n_transactions::int8) n) a) b;

RESET client_min_messages;
SELECT (SELECT count(*) FROM incentives.offers) AS offers,
       (SELECT count(*) FROM incentives.skus) AS skus,
       (SELECT count(*) FROM incentives.participant_properties) AS properties,
       (SELECT count(*) FROM incentives.transactions) AS transactions;
