#!/usr/bin/env bash
# bench/products.sh: an offer book written on products against the same
# book written on SKU lists (docs/reference.md, Products), on
# bench/generate.sql's data.
#
#   bench/products.sh        # 1M transactions
#   make bench               # runs it after bench/run.sh and bench/groups.sh
#
# In a throwaway cluster with bench/run.sh's settings (bench/lib.sh): the
# generated data, then a catalog and a twin of every generated offer
# written on it, which reads the same SKUs: every SKU list of a filter
# (stepped earning and threshold filters, requirements) becomes a product
# holding exactly those SKUs, through a line per SKU (the list's SKUs at
# distance 2), and every SKU rate of a standard entry the rate of the SKU's
# line (distance 1); stacked offers stay as they are in both books.
# BENCH_RUNS interleaved rounds of
#   skus      SELECT count(*), sum(incentive_amount) FROM
#             incentive_calculate(offer_keys => the 60 originals)
#   products  the same with the 60 twins
# and the medians: products / skus (expected within 1.1).  Cross-check:
# the twins' rows equal the originals' row for row, but for their offer
# key and product_key (0 differences required: exit status 1 otherwise).
set -euo pipefail

: "${BENCH_WORK_MEM:=4MB}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCH_CLUSTER_OPTS=(-c "-p $("$root/mk/free_port.sh")" -o "temp_buffers=64MB")
bench_cluster "$here/products.sh" "$@"

bench_database incentives_bench_products
"${PSQL[@]}" -c "CREATE EXTENSION pg_prewarm"
"${PSQL[@]}" -f bench/bench.sql

"${PSQL[@]}" <<'SQL'
-- bench.list_product: the product of a filter's SKU list
CREATE OR REPLACE FUNCTION bench.list_product(skus jsonb)
RETURNS text LANGUAGE sql IMMUTABLE
AS $$ SELECT 'list_' || md5(skus::text) $$;
-- bench.on_products: a filter with its sku_keys as one product
CREATE OR REPLACE FUNCTION bench.on_products(filters jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE
AS $$
    SELECT jsonb_agg((f - 'sku_keys') || jsonb_build_object('product_keys',
                     jsonb_build_array(bench.list_product(f -> 'sku_keys'))) ORDER BY i)
      FROM jsonb_array_elements(filters) WITH ORDINALITY AS a(f, i)
$$;
-- bench.twin: the document written on products
CREATE OR REPLACE FUNCTION bench.twin(d jsonb)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    t jsonb := d || jsonb_build_object('offer_key', (d ->> 'offer_key') || '.products');
BEGIN
    IF d ->> 'strategy_key' = 'standard' THEN
        t := jsonb_set(t, '{incentives}', (
            SELECT jsonb_agg(jsonb_set(e, '{rates}', (
                       SELECT jsonb_agg((r - 'sku_key') || jsonb_build_object('product_key', 'line_' || (r ->> 'sku_key'))
                                        ORDER BY j)
                         FROM jsonb_array_elements(e -> 'rates') WITH ORDINALITY AS b(r, j))) ORDER BY i)
              FROM jsonb_array_elements(d -> 'incentives') WITH ORDINALITY AS a(e, i)));
    ELSIF d ->> 'strategy_key' = 'stepped' THEN
        t := jsonb_set(t, '{incentive,filters}', bench.on_products(d #> '{incentive,filters}'));
        IF d #> '{incentive,threshold_definition,filters}' IS NOT NULL THEN
            t := jsonb_set(t, '{incentive,threshold_definition,filters}',
                           bench.on_products(d #> '{incentive,threshold_definition,filters}'));
        END IF;
    END IF;
    IF d ? 'requirements' THEN
        t := jsonb_set(t, '{requirements}', (
            SELECT jsonb_agg(CASE WHEN q ? 'filters'
                                  THEN jsonb_set(q, '{filters}', bench.on_products(q -> 'filters'))
                                  ELSE q END ORDER BY i)
              FROM jsonb_array_elements(d -> 'requirements') WITH ORDINALITY AS a(q, i)));
    END IF;
    RETURN t;
END
$$;
SQL

status=0
for n in $BENCH_N; do
    log "N=$n: generating (seed $BENCH_SEED), the catalog and the twins written on it"
    "${PSQL[@]}" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
    "${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
TRUNCATE incentives.sku_products, incentives.products;
-- every filter's SKU list
CREATE TEMP TABLE lists AS
SELECT DISTINCT f -> 'sku_keys' AS skus
  FROM incentives.offers AS o,
       LATERAL (SELECT o.document #> '{incentive,filters}' UNION ALL
                SELECT o.document #> '{incentive,threshold_definition,filters}' UNION ALL
                SELECT q -> 'filters' FROM jsonb_array_elements(COALESCE(o.document -> 'requirements', '[]')) AS q)
               AS x(filters),
       LATERAL jsonb_array_elements(COALESCE(x.filters, '[]')) AS f
 WHERE f ? 'sku_keys';
INSERT INTO incentives.products (product_key, parent_key, label) VALUES ('bench_lists', NULL, 'Every list');
INSERT INTO incentives.products (product_key, parent_key, label) VALUES ('bench_lines', NULL, 'Every line');
INSERT INTO incentives.products (product_key, parent_key)
SELECT 'line_' || s.sku_key, 'bench_lines' FROM incentives.skus AS s;
INSERT INTO incentives.sku_products (sku_key, product_key)
SELECT s.sku_key, 'line_' || s.sku_key FROM incentives.skus AS s;
-- a list holds its SKUs' lines (they are at distance 2 from it); a line
-- has one parent, so a SKU of several lists is a window of each list's
-- own line under it
INSERT INTO incentives.products (product_key, parent_key)
SELECT bench.list_product(l.skus), 'bench_lists' FROM lists AS l;
INSERT INTO incentives.products (product_key, parent_key)
SELECT bench.list_product(l.skus) || '_' || k.sku, bench.list_product(l.skus)
  FROM lists AS l, LATERAL jsonb_array_elements_text(l.skus) AS k(sku);
INSERT INTO incentives.sku_products (sku_key, product_key)
SELECT k.sku, bench.list_product(l.skus) || '_' || k.sku
  FROM lists AS l, LATERAL jsonb_array_elements_text(l.skus) AS k(sku);
INSERT INTO incentives.offers (document)
SELECT bench.twin(document) FROM incentives.offers;
SQL
    "${PSQL[@]}" -c "VACUUM ANALYZE"
    for _ in $(seq 30); do
        [ "$(q "SELECT relallvisible < relpages FROM pg_class WHERE oid = 'incentives.transactions'::regclass")" = t ] || break
        sleep 1
        "${PSQL[@]}" -c "VACUUM incentives.transactions"
    done
    q "SELECT pg_prewarm('incentives.transactions'), pg_prewarm('incentives.transactions_participant_idx')" >/dev/null
    q "DELETE FROM bench.results WHERE n = $n" >/dev/null
    skus="(SELECT array_agg(offer_key) FROM incentives.offers WHERE offer_key NOT LIKE '%.products')"
    products="(SELECT array_agg(offer_key) FROM incentives.offers WHERE offer_key LIKE '%.products')"
    log "N=$n: $(q "SELECT count(*) FROM incentives.products") products, $(q "SELECT count(*) FROM incentives.sku_products") SKU windows"
    for run in $(seq "$BENCH_RUNS"); do
        log "N=$n: round $run"
        for m in skus products; do
            offers=$([ $m = skus ] && echo "$skus" || echo "$products")
            ms=$(q "SELECT bench.measure($n, '$m', $run, \$q\$SELECT count(*), sum(incentive_amount)
                      FROM incentives.incentive_calculate(offer_keys => $offers)\$q\$)")
            log "  $m run $run: $ms ms"
        done
    done

    log "N=$n: cross-check (the twins' rows against the originals')"
    cols="participant_key, sku_key, incentive_rate_key, incentive_rate_value, offer_sku_pay_rate,
          transaction_id, incentivized_quantity, incentivized_amount, incentive_amount,
          incentive_contribution_percent, incentive_effective_rate"
    diff=$(q "SELECT count(*) FROM (
                (SELECT offer_key, $cols FROM incentives.incentive_calculate(offer_keys => $skus)
                 EXCEPT ALL
                 SELECT replace(offer_key, '.products', ''), $cols
                   FROM incentives.incentive_calculate(offer_keys => $products))
                UNION ALL
                (SELECT replace(offer_key, '.products', ''), $cols
                   FROM incentives.incentive_calculate(offer_keys => $products)
                 EXCEPT ALL
                 SELECT offer_key, $cols FROM incentives.incentive_calculate(offer_keys => $skus))) d")
    [ "$diff" = 0 ] || status=1

    {
        echo "offers on products, N=$n, $BENCH_RUNS rounds, medians (bench/products.sh):"
        q "SELECT format('  %-28s %10s ms  %10s rows  total %s', measure,
                         to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM9999990.0'),
                         max(rows_out), max(total))
             FROM bench.results WHERE n = $n GROUP BY measure ORDER BY measure DESC"
        q "SELECT format('  products / skus              %s (expected within 1.1)',
                         round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'products')::numeric
                               / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'skus')::numeric, 2))"
        echo "  cross-check: $diff rows of the twins differ from the originals'"
    } | tee "$BENCH_OUT/products-$n.txt"
done
exit "$status"
