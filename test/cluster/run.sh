#!/usr/bin/env bash
# test/cluster/run.sh: the sharded deployment of docs/scaling.md, for real, on one
# machine (`make check-cluster`; part of `make test`).
#
# Starts (with initdb/pg_ctl; as the postgres user when run as root), in a mktemp
# folder, on 127.0.0.1 with free ports and trust authentication:
#
#   coord    the coordinator: plproxy + incentives_cluster, database coordinator
#   shard0.. SHARDS (2, or 4 with SHARDS=4) shards: incentives, databases shard0, ...
#   single   the single-node reference: incentives, database single
#
# then
#   1. stages every fixture of test/fixtures (offers.json, transactions.csv
#      with its optional columns, skus.csv, uom_conversions.csv,
#      participant_properties.csv, enrollments.csv, participant_groups.csv,
#      groups.csv, products.csv, sku_products.csv, exchange_rates.csv; keys
#      prefixed with the fixture name, so the cases do not collide) and a
#      generated data set of GEN_TRANSACTIONS (100,000) transactions over the
#      fixtures' offers, SKUs and units (a currency case among them: growers
#      and currencies on some, returns naming their sale, nothing, or
#      another participant's sale, and exchange rates of their currencies);
#   2. loads it into `single` directly (INSERT, \copy) and into the shards
#      THROUGH the coordinator's functions (put_offer, put_sku,
#      put_uom_conversion, put_participant_property, put_participant_group,
#      put_group, put_product, put_sku_product, put_exchange_rate,
#      put_transaction, load_transactions, put_enrollment) as the
#      non-superuser incentives_app; then generated participants join groups
#      whose members live on other shards, and one leaves
#      (put_participant_group, delete_participant_group: their transactions
#      move to their group's partition);
#   3. checks placement (incentives.cluster_check(): reference data identical
#      everywhere, every transaction and enrollment on partition
#      hashtext(placement key) & (partitions - 1): its participant's own key,
#      or its group's calculation unit's first key) and compares the sharded results with the single
#      node's row for row, every column as text (count, md5 of the ordered
#      rows, EXCEPT ALL both ways): all participants, call-level properties,
#      one participant at a time, offer_keys, a view as `transactions`,
#      incentive_diagnostics and, when the extension has them, tier_progress,
#      stack_progress, requirement_progress, incentive_explain,
#      calculate(jsonb) (with request enrollments too) and the
#      incentives.earnings written by CALL refresh_earnings() -- printing
#      `sharded == single: N rows`;
#   4. error paths: an invalid offer stores nothing; a diverged shard is
#      reported by cluster_check and healed by the next put; a transaction
#      cannot move to another participant; one transaction_id put under
#      participants of two shards is accepted by both (ids are unique per
#      shard) and earns under both; the product catalog put through the
#      coordinator is on every partition, a cycle, an overlap and the
#      delete of a product in use are refused, and a catalog changed on
#      one partition is reported by cluster_check and healed by a put; a
#      group's type put through the coordinator is on every partition,
#      a type changed on one partition is reported by cluster_check and
#      healed by a put, and delete_group removes it everywhere; an
#      exchange rate put through the coordinator is on every partition, a
#      rate changed on one partition is reported by cluster_check and healed
#      by a put, delete_exchange_rate removes it everywhere;
#   5. stops one shard and requires a calculation for all participants to
#      fail with an error naming that shard (no partial result), and the
#      same of a reference-data change;
#   6. stops everything and removes the folder (EXIT trap; KEEP=1 keeps it).
#
# measure.sh and replicas.sh source this file for its functions
# (CLUSTER_LIB=1).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
PGBIN=$("$PG_CONFIG" --bindir)

# --------------------------------------------------------------- clusters
WORK=""
declare -A PORT=()      # name -> port
declare -a STARTED=()   # data directories to stop on exit

log() { printf '== %s\n' "$*"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# as_postgres CMD...: CMD as the clusters' owner: postgres when we are
# root (the server refuses to run as root), else ourselves.
as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        (cd "$WORK" && runuser -u postgres -- "$@")
    else
        (cd "$WORK" && "$@")
    fi
}

cleanup() {
    local status=$? d t
    t=$(now)
    for d in "${STARTED[@]}"; do
        if [ -f "$d/postmaster.pid" ]; then
            as_postgres "$PGBIN/pg_ctl" -D "$d" -m fast -w stop >/dev/null 2>&1 || true
        fi
    done
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ "${KEEP:-0}" = 1 ]; then
            echo "kept $WORK" >&2
        else
            rm -rf "$WORK"
        fi
        log "clusters stopped and removed in $(elapsed "$t")"
    fi
    exit "$status"
}

cluster_setup() {
    WORK=$(mktemp -d /tmp/incentives-cluster.XXXXXX)
    if [ "$(id -u)" = 0 ]; then chown postgres: "$WORK"; fi
    chmod 755 "$WORK"
    trap cleanup EXIT
    trap 'exit 130' INT TERM
}

port_in_use() {
    local p=$1 q
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 0
    for q in "${PORT[@]}"; do [ "$q" = "$p" ] && return 0; done
    return 1
}

free_port() {
    local p i
    for i in $(seq 1 500); do
        p=$(( 20000 + RANDOM % 40000 ))
        port_in_use "$p" || { echo "$p"; return 0; }
    done
    echo "no free port" >&2
    return 1
}

# cluster_start NAME: initdb + start on a free port; PORT[NAME] is set.
# CLUSTER_CONF: more lines of postgresql.conf.
cluster_start() {
    local name=$1 dir="$WORK/$1" port attempt
    as_postgres "$PGBIN/initdb" -D "$dir" -A trust -U postgres -E UTF8 --no-locale >"$WORK/$name.initdb.log" 2>&1 \
        || { cat "$WORK/$name.initdb.log" >&2; return 1; }
    cat >>"$dir/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$WORK'
max_connections = 40
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = '256MB'
work_mem = '64MB'
maintenance_work_mem = '256MB'
max_wal_size = '4GB'
checkpoint_timeout = '30min'
log_min_messages = warning
log_min_error_statement = panic
${CLUSTER_CONF:-}
EOF
    # the extension as `make install-test` left it (mk/test.mk)
    if [ -n "${TEST_DESTDIR:-}" ]; then
        mk/destdir_settings.sh "$PG_CONFIG" "$TEST_DESTDIR" | sed "s/=\(.*\)/ = '\1'/" >>"$dir/postgresql.conf"
    fi
    for attempt in 1 2 3 4 5; do
        port=$(free_port)
        sed -i "/^port = /d" "$dir/postgresql.conf"
        echo "port = $port" >>"$dir/postgresql.conf"
        if as_postgres "$PGBIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 start >/dev/null; then
            PORT[$name]=$port
            STARTED+=("$dir")
            return 0
        fi
        echo "$name: could not start on port $port, retrying" >&2
    done
    cat "$dir/server.log" >&2
    return 1
}

cluster_stop() {
    as_postgres "$PGBIN/pg_ctl" -D "$WORK/$1" -m fast -w stop >/dev/null
}

# sql NAME DB [psql args]: psql as postgres on cluster NAME.
sql() {
    local name=$1 db=$2
    shift 2
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PORT[$name]}" -U postgres -d "$db" "$@"
}
# sql_as ROLE NAME DB [psql args]
sql_as() {
    local role=$1 name=$2 db=$3
    shift 3
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PORT[$name]}" -U "$role" -d "$db" "$@"
}
val() { sql "$@" -A -t; }

# ------------------------------------------------------------ deployment

# shard_setup NAME DB: the incentives extension and the application role.
shard_setup() {
    local name=$1 db=$2
    sql "$name" postgres -c "CREATE DATABASE $db"
    sql "$name" "$db" <<'EOF'
CREATE EXTENSION incentives;
DO $$ BEGIN CREATE ROLE incentives_app LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA incentives TO incentives_app;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_app;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA incentives_internal TO incentives_app;
EOF
}

# coordinator_setup PARTITION_NAMES...: plproxy + incentives_cluster, the
# SQL/MED cluster with one partition per named shard (database = its name).
coordinator_setup() {
    local options="" i=0 name
    for name in "$@"; do
        options+="${options:+, }p$i 'dbname=$name host=127.0.0.1 port=${PORT[$name]}'"
        i=$((i + 1))
    done
    sql coord postgres -c "CREATE DATABASE coordinator"
    sql coord coordinator <<EOF
CREATE EXTENSION plproxy;
CREATE EXTENSION incentives_cluster;
CREATE SERVER incentives_cluster FOREIGN DATA WRAPPER plproxy
  OPTIONS (connection_lifetime '1800', $options);
CREATE ROLE incentives_app LOGIN;
GRANT USAGE ON SCHEMA incentives, incentives_cluster TO incentives_app;
GRANT USAGE ON FOREIGN SERVER incentives_cluster TO incentives_app;
CREATE USER MAPPING FOR incentives_app SERVER incentives_cluster OPTIONS (user 'incentives_app');
CREATE USER MAPPING FOR postgres SERVER incentives_cluster OPTIONS (user 'postgres');
-- where the members of groups live (docs/scaling.md, Participant groups):
-- read by every routed call, written by put_participant_group
GRANT SELECT, INSERT, DELETE ON incentives_cluster.placements TO incentives_app;
EOF
}

# The 22 columns of an earning row as text.
EARNING_TEXT="participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key,
  incentive_rate_measure, incentive_rate_value::text AS incentive_rate_value,
  offer_sku_pay_rate::text AS offer_sku_pay_rate, transaction_id,
  provided_quantity::text AS provided_quantity, provided_uom_key,
  provided_amount::text AS provided_amount, incentivized_quantity::text AS incentivized_quantity,
  incentivized_amount::text AS incentivized_amount, incentive_amount::text AS incentive_amount,
  incentive_contribution_percent::text AS incentive_contribution_percent,
  incentive_effective_rate::text AS incentive_effective_rate, group_key, product_key,
  grower_key, currency, exchange_rate::text AS exchange_rate"

# The comparison helpers, on the coordinator.
COMPARE_SQL=$(cat <<'EOF'
CREATE SCHEMA cmp;
GRANT USAGE, CREATE ON SCHEMA cmp TO incentives_app;
-- cmp.compare: two tables of text columns, compared as multisets of rows
-- (EXCEPT ALL both ways) and as the md5 of their rows' text in byte order.
CREATE FUNCTION cmp.compare(label text, sharded regclass, single regclass) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    n_sh bigint; n_si bigint; md_sh text; md_si text; missing bigint; extra bigint; sample text;
BEGIN
    EXECUTE format('SELECT count(*), md5(coalesce(string_agg(t::text, E''\n'' ORDER BY t::text COLLATE "C"), '''')) FROM %s t', sharded)
       INTO n_sh, md_sh;
    EXECUTE format('SELECT count(*), md5(coalesce(string_agg(t::text, E''\n'' ORDER BY t::text COLLATE "C"), '''')) FROM %s t', single)
       INTO n_si, md_si;
    EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL TABLE %s) x', single, sharded) INTO missing;
    EXECUTE format('SELECT count(*) FROM (TABLE %s EXCEPT ALL TABLE %s) x', sharded, single) INTO extra;
    IF n_sh <> n_si OR md_sh <> md_si OR missing <> 0 OR extra <> 0 THEN
        EXECUTE format('SELECT string_agg(x::text, E''\n'') FROM (SELECT ''missing'', * FROM (TABLE %1$s EXCEPT ALL TABLE %2$s) a
                          UNION ALL SELECT ''unexpected'', * FROM (TABLE %2$s EXCEPT ALL TABLE %1$s) b LIMIT 10) x', single, sharded)
           INTO sample;
        RAISE EXCEPTION 'sharded != single (%): % vs % rows, md5 % vs %, % missing, % unexpected, e.g.%',
              label, n_sh, n_si, md_sh, md_si, missing, extra, E'\n' || sample;
    END IF;
    IF n_sh = 0 THEN
        RAISE EXCEPTION 'no rows (%): the comparison would prove nothing', label;
    END IF;
    RETURN format('sharded == single%s: %s rows', CASE WHEN label = '' THEN '' ELSE ' (' || label || ')' END, n_sh)
        || format('   [md5 %s, 0 missing, 0 unexpected]', md_sh);
END
$$;
EOF
)

# The staging schema (in database DB of cluster NAME): the test data before
# it is loaded, plus the generator.
STAGE_SQL=$(cat <<'EOF'
CREATE SCHEMA stage;
CREATE TABLE stage.offers (fixture text, document jsonb);
CREATE TABLE stage.transactions (
    transaction_id text, participant_key text, transaction_type text, transaction_date date,
    sku_key text, quantity numeric, uom_key text, amount numeric,
    grower_key text, currency text, original_transaction_id text);
CREATE TABLE stage.skus (sku_key text, uom_key text, label text);
CREATE TABLE stage.uom_conversions (from_uom_key text, to_uom_key text, factor numeric);
CREATE TABLE stage.participant_properties (participant_key text, property_key text, value numeric);
CREATE TABLE stage.enrollments (participant_key text, offer_key text, start_date date, end_date date);
CREATE TABLE stage.participant_groups (participant_key text, group_key text, start_date date, end_date date);
CREATE TABLE stage.groups (group_key text, group_type text, label text);
CREATE TABLE stage.products (product_key text, parent_key text, label text);
CREATE TABLE stage.sku_products (sku_key text, product_key text, start_date date, end_date date);
CREATE TABLE stage.exchange_rates (from_currency text, to_currency text, rate_date date, rate numeric);

-- stage.rnd: a uniform float in [0, 1) from (stream, i), the same on every run.
CREATE FUNCTION stage.rnd(stream int, i bigint) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT (hashint8extended(i, stream) & 4503599627370495)::float8 / 4503599627370496.0 $$;

-- stage.generate: n transactions of `participants` participants (gen_00001,
-- ...), each a variation of one fixture transaction (its SKU, unit and type,
-- so every unit converts as the fixtures need): another date in 2025-09-01 ..
-- 2026-10-29, 0.2x-3x the quantity at the same unit price, 3% returns; and a
-- business_plan_achieved property for 90% of the participants.  A currency
-- case: a fifth of them have a grower (farm_1 .. farm_40), a fifth a
-- currency (CAD, USD or EUR, with monthly rates of CAD and EUR to USD and
-- of USD and EUR to CAD, the fixtures' offer currencies); of the returns, half name an earlier sale of the same
-- participant and SKU, a tenth a transaction that does not exist and a
-- tenth a sale of another participant.
CREATE FUNCTION stage.generate(n bigint, participants int, prefix text DEFAULT 'G')
RETURNS void LANGUAGE sql
AS $$
    WITH tpl AS (
        SELECT row_number() OVER (ORDER BY transaction_id COLLATE "C") - 1 AS i, t.*
          FROM stage.transactions t
         WHERE quantity <> 0 AND participant_key NOT LIKE 'gen\_%'),
    c AS (SELECT count(*) AS c FROM tpl),
    g AS (
        SELECT k,
               floor((SELECT c FROM c) * stage.rnd(1, k))::bigint AS i,
               1 + floor(participants * stage.rnd(2, k))::int AS p,
               floor(424 * stage.rnd(3, k))::int AS d,
               round((0.2 + 2.8 * stage.rnd(4, k))::numeric, 2) AS f,
               CASE WHEN stage.rnd(5, k) < 0.03 THEN -1 ELSE 1 END AS sign
          FROM generate_series(1, n) k)
    INSERT INTO stage.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                    sku_key, quantity, uom_key, amount, grower_key, currency)
    SELECT format('%s%s', prefix, lpad(g.k::text, 8, '0')),
           format('gen_%s', lpad(g.p::text, 5, '0')),
           tpl.transaction_type,
           date '2025-09-01' + g.d,
           tpl.sku_key,
           g.sign * greatest(round(abs(tpl.quantity) * g.f, 1), 0.1),
           tpl.uom_key,
           g.sign * round(abs(tpl.amount / tpl.quantity) * greatest(round(abs(tpl.quantity) * g.f, 1), 0.1), 2),
           CASE WHEN stage.rnd(8, g.k) < 0.2 THEN 'farm_' || (1 + floor(40 * stage.rnd(9, g.k))::int) END,
           CASE WHEN stage.rnd(10, g.k) < 0.2 THEN (ARRAY['CAD', 'USD', 'EUR'])[1 + floor(3 * stage.rnd(11, g.k))::int] END
      FROM g JOIN tpl USING (i);

    -- returns naming their sale (the earliest earlier sale of the same
    -- participant and SKU), nothing, or another participant's sale
    WITH r AS (
        SELECT t.transaction_id, t.participant_key, t.sku_key, t.transaction_date,
               stage.rnd(12, hashtext(t.transaction_id)::bigint) AS u
          FROM stage.transactions AS t
         WHERE t.transaction_id LIKE prefix || '%' AND t.quantity < 0),
    own AS (
        SELECT DISTINCT ON (r.transaction_id) r.transaction_id, s.transaction_id AS original
          FROM r JOIN stage.transactions AS s
            ON s.participant_key = r.participant_key AND s.sku_key = r.sku_key
           AND s.transaction_date <= r.transaction_date AND s.quantity > 0
         WHERE r.u < 0.5
         ORDER BY r.transaction_id, s.transaction_date, s.transaction_id),
    other AS (
        SELECT DISTINCT ON (r.transaction_id) r.transaction_id, s.transaction_id AS original
          FROM r JOIN stage.transactions AS s
            ON s.participant_key <> r.participant_key AND s.sku_key = r.sku_key
           AND s.transaction_date <= r.transaction_date AND s.quantity > 0
           AND s.participant_key LIKE 'gen\_%'
         WHERE r.u >= 0.6 AND r.u < 0.7
         ORDER BY r.transaction_id, s.transaction_id)
    UPDATE stage.transactions AS t
       SET original_transaction_id = m.original
      FROM (SELECT * FROM own
            UNION ALL SELECT * FROM other
            UNION ALL SELECT r.transaction_id, 'no_such_sale' FROM r WHERE r.u >= 0.5 AND r.u < 0.6) AS m
     WHERE t.transaction_id = m.transaction_id;

    INSERT INTO stage.exchange_rates
    SELECT c.from_currency, c.to_currency, (date '2024-01-01' + make_interval(months => m))::date,
           round((c.base * (1 + 0.05 * sin(m)))::numeric, 6)
      FROM (VALUES ('CAD', 'USD', 0.73), ('EUR', 'USD', 1.08), ('USD', 'CAD', 1.37),
                   ('EUR', 'CAD', 1.48)) AS c(from_currency, to_currency, base),
           generate_series(0, 35) AS m;

    INSERT INTO stage.participant_properties
    SELECT format('gen_%s', lpad(p::text, 5, '0')), 'business_plan_achieved',
           round((60 + 60 * stage.rnd(6, p))::numeric, 1)
      FROM generate_series(1, participants) p
     WHERE stage.rnd(7, p) < 0.9;
$$;
EOF
)

# stage_fixtures NAME DB: every fixture into stage.*, keys prefixed.
stage_fixtures() {
    local name=$1 db=$2 dir fx script="$WORK/stage_fixtures.sql"
    {
        echo "CREATE TEMP TABLE raw_tx (LIKE stage.transactions);"
        echo "CREATE TEMP TABLE raw_props (LIKE stage.participant_properties);"
        echo "CREATE TEMP TABLE raw_enrollments (LIKE stage.enrollments);"
        echo "CREATE TEMP TABLE raw_groups (LIKE stage.participant_groups);"
        echo "CREATE TEMP TABLE raw_group_types (LIKE stage.groups);"
        for dir in "$REPO"/test/fixtures/*/; do
            fx=$(basename "$dir")
            echo "\\set fx '$fx'"
            echo "\\set offers \`cat '$dir/offers.json'\`"
            echo "INSERT INTO stage.offers SELECT :'fx', jsonb_array_elements(:'offers'::jsonb);"
            # the columns the file has (grower_key, currency and
            # original_transaction_id are optional), from its header
            echo "\\copy raw_tx ($(head -n 1 "$dir/transactions.csv" | tr -d '\r')) FROM '$dir/transactions.csv' WITH (FORMAT csv, HEADER true)"
            echo "INSERT INTO stage.transactions SELECT :'fx' || '/' || transaction_id, :'fx' || '/' || participant_key,
                    transaction_type, transaction_date, sku_key, quantity, uom_key, amount,
                    grower_key, currency, :'fx' || '/' || original_transaction_id FROM raw_tx;"
            echo "TRUNCATE raw_tx;"
            if [ -f "$dir/skus.csv" ]; then
                echo "\\copy stage.skus (sku_key, uom_key) FROM '$dir/skus.csv' WITH (FORMAT csv, HEADER true)"
            fi
            if [ -f "$dir/uom_conversions.csv" ]; then
                echo "\\copy stage.uom_conversions FROM '$dir/uom_conversions.csv' WITH (FORMAT csv, HEADER true)"
            fi
            if [ -f "$dir/participant_properties.csv" ]; then
                echo "\\copy raw_props FROM '$dir/participant_properties.csv' WITH (FORMAT csv, HEADER true)"
                echo "INSERT INTO stage.participant_properties SELECT :'fx' || '/' || participant_key, property_key, value FROM raw_props;"
                echo "TRUNCATE raw_props;"
            fi
            if [ -f "$dir/enrollments.csv" ]; then
                echo "\\copy raw_enrollments FROM '$dir/enrollments.csv' WITH (FORMAT csv, HEADER true)"
                echo "INSERT INTO stage.enrollments SELECT :'fx' || '/' || participant_key, offer_key, start_date, end_date FROM raw_enrollments;"
                echo "TRUNCATE raw_enrollments;"
            fi
            if [ -f "$dir/products.csv" ]; then
                echo "\\copy stage.products FROM '$dir/products.csv' WITH (FORMAT csv, HEADER true)"
                echo "\\copy stage.sku_products FROM '$dir/sku_products.csv' WITH (FORMAT csv, HEADER true)"
            fi
            if [ -f "$dir/exchange_rates.csv" ]; then
                echo "\\copy stage.exchange_rates FROM '$dir/exchange_rates.csv' WITH (FORMAT csv, HEADER true)"
            fi
            if [ -f "$dir/participant_groups.csv" ]; then
                echo "\\copy raw_groups FROM '$dir/participant_groups.csv' WITH (FORMAT csv, HEADER true)"
                echo "INSERT INTO stage.participant_groups SELECT :'fx' || '/' || participant_key, :'fx' || '/' || group_key, start_date, end_date FROM raw_groups;"
                echo "TRUNCATE raw_groups;"
            fi
            if [ -f "$dir/groups.csv" ]; then
                echo "\\copy raw_group_types FROM '$dir/groups.csv' WITH (FORMAT csv, HEADER true)"
                echo "INSERT INTO stage.groups SELECT :'fx' || '/' || group_key, group_type, label FROM raw_group_types;"
                echo "TRUNCATE raw_group_types;"
            fi
        done
    } >"$script"
    sql "$name" "$db" -f "$script"
}

# stage_export NAME DB: stage.* to CSV files in $WORK/stage_*.csv
stage_export() {
    local name=$1 db=$2 t
    for t in offers transactions skus uom_conversions participant_properties enrollments participant_groups \
             groups products sku_products exchange_rates; do
        sql "$name" "$db" -c "\\copy stage.$t TO '$WORK/stage_$t.csv' WITH (FORMAT csv)"
    done
}
stage_import() {
    local name=$1 db=$2 t
    for t in offers transactions skus uom_conversions participant_properties enrollments participant_groups \
             groups products sku_products exchange_rates; do
        sql "$name" "$db" -c "\\copy stage.$t FROM '$WORK/stage_$t.csv' WITH (FORMAT csv)"
    done
}

# load_single NAME DB: stage.* into the incentives tables, directly.
load_single() {
    sql "$1" "$2" <<'EOF'
INSERT INTO incentives.offers (document) SELECT document FROM stage.offers;
INSERT INTO incentives.skus SELECT DISTINCT ON (sku_key) * FROM stage.skus ORDER BY sku_key;
INSERT INTO incentives.uom_conversions SELECT * FROM stage.uom_conversions ON CONFLICT DO NOTHING;
INSERT INTO incentives.participant_properties SELECT * FROM stage.participant_properties;
INSERT INTO incentives.transactions
       (transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key,
        amount, grower_key, currency, original_transaction_id)
SELECT transaction_id, participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key,
       amount, grower_key, currency, original_transaction_id
  FROM stage.transactions;
INSERT INTO incentives.enrollments SELECT * FROM stage.enrollments;
INSERT INTO incentives.participant_groups SELECT * FROM stage.participant_groups;
INSERT INTO incentives.groups SELECT * FROM stage.groups;
INSERT INTO incentives.products SELECT * FROM stage.products;
INSERT INTO incentives.sku_products SELECT * FROM stage.sku_products;
INSERT INTO incentives.exchange_rates SELECT DISTINCT ON (from_currency, to_currency, rate_date) *
  FROM stage.exchange_rates ORDER BY from_currency, to_currency, rate_date;
ANALYZE;
EOF
}

# ------------------------------------------------------------------ main
main() {
    local shards=${SHARDS:-2} gen=${GEN_TRANSACTIONS:-100000} participants=${GEN_PARTICIPANTS:-2000}
    local t0 t i names=() out status
    case "$shards" in 1|2|4|8) ;; *) echo "SHARDS must be a power of 2 (1, 2, 4, 8)" >&2; exit 2 ;; esac
    t0=$(now)
    cluster_setup

    log "starting coord, single and $shards shards in $WORK"
    cluster_start coord
    cluster_start single
    for ((i = 0; i < shards; i++)); do
        cluster_start "shard$i"
        names+=("shard$i")
    done
    for name in coord single "${names[@]}"; do printf '   %-7s 127.0.0.1:%s\n' "$name" "${PORT[$name]}"; done

    log "extensions: incentives on single and the shards; plproxy + incentives_cluster on coord"
    shard_setup single single
    for name in "${names[@]}"; do shard_setup "$name" "$name"; done
    coordinator_setup "${names[@]}"
    sql coord coordinator -c "SELECT incentives.cluster_partitions() AS partitions"
    # the analyst surface (tier_progress, refresh_earnings, ...) is tested
    # when the shards' extension has it
    SURFACE=$(val single single -c "SELECT (to_regproc('incentives.tier_progress') IS NOT NULL
                                           AND to_regproc('incentives.refresh_earnings') IS NOT NULL)::int")
    LIFECYCLE=$(val single single -c "SELECT (to_regproc('incentives.settle') IS NOT NULL)::int")
    FORECAST=$(val single single -c "SELECT (to_regproc('incentives.forecast') IS NOT NULL)::int")

    log "staging the fixtures and $gen generated transactions"
    t=$(now)
    sql single single <<<"$STAGE_SQL"
    stage_fixtures single single
    sql single single -c "SELECT stage.generate($gen, $participants)"
    sql single single -c "SELECT (SELECT count(*) FROM stage.offers) AS offers,
                                 (SELECT count(*) FROM stage.skus) AS skus,
                                 (SELECT count(*) FROM stage.uom_conversions) AS uom_conversions,
                                 (SELECT count(*) FROM stage.participant_properties) AS participant_properties,
                                 (SELECT count(*) FROM stage.enrollments) AS enrollments,
                                 (SELECT count(*) FROM stage.transactions) AS transactions,
                                 (SELECT count(DISTINCT participant_key) FROM stage.transactions) AS participants"
    stage_export single single
    echo "   staged in $(elapsed "$t")"

    log "single node: loading directly"
    t=$(now)
    load_single single single
    echo "   loaded in $(elapsed "$t")"

    log "shards: loading through the coordinator's functions (as incentives_app)"
    t=$(now)
    sql coord coordinator <<<"$STAGE_SQL"
    sql coord coordinator -c "GRANT USAGE ON SCHEMA stage TO incentives_app; GRANT SELECT ON ALL TABLES IN SCHEMA stage TO incentives_app;"
    stage_import coord coordinator
    sql_as incentives_app coord coordinator <<'EOF'
\pset footer off
SELECT count(*) AS offers, count(*) FILTER (WHERE incentives.put_offer(document)) AS new
  FROM stage.offers;
SELECT count(*) AS skus, count(*) FILTER (WHERE incentives.put_sku(sku_key, uom_key, label)) AS new
  FROM (SELECT DISTINCT ON (sku_key) * FROM stage.skus ORDER BY sku_key) s;
SELECT count(*) AS uom_conversions,
       count(*) FILTER (WHERE incentives.put_uom_conversion(from_uom_key, to_uom_key, factor)) AS new
  FROM stage.uom_conversions;
SELECT count(*) AS participant_properties,
       count(*) FILTER (WHERE incentives.put_participant_property(participant_key, property_key, value)) AS new
  FROM stage.participant_properties;
-- the products catalog on every partition, each node after its parent
WITH RECURSIVE depth(product_key, parent_key, label, level) AS (
    SELECT product_key, parent_key, label, 0 FROM stage.products WHERE parent_key IS NULL
    UNION ALL
    SELECT p.product_key, p.parent_key, p.label, d.level + 1
      FROM stage.products AS p JOIN depth AS d ON p.parent_key = d.product_key)
SELECT count(*) AS products,
       count(*) FILTER (WHERE incentives.put_product(product_key, parent_key, label)) AS new
  FROM (SELECT * FROM depth ORDER BY level, product_key) AS d;
SELECT count(*) AS sku_products,
       count(*) FILTER (WHERE incentives.put_sku_product(sku_key, product_key, start_date, end_date)) AS new
  FROM stage.sku_products;
-- the fixtures' memberships before their transactions: placed by group
-- from the start
SELECT count(*) AS participant_groups,
       count(*) FILTER (WHERE incentives.put_participant_group(participant_key, group_key, start_date, end_date)) AS new
  FROM stage.participant_groups;
-- the types of the fixtures' groups (an offer with "group_type" reads them)
SELECT count(*) AS groups,
       count(*) FILTER (WHERE incentives.put_group(group_key, group_type, label)) AS new
  FROM stage.groups;
-- the exchange rates on every partition
SELECT count(*) AS exchange_rates,
       count(*) FILTER (WHERE incentives.put_exchange_rate(from_currency, to_currency, rate_date, rate)) AS new
  FROM (SELECT DISTINCT ON (from_currency, to_currency, rate_date) *
          FROM stage.exchange_rates ORDER BY from_currency, to_currency, rate_date) AS r;
-- fixture transactions one at a time (put_transaction takes the eight
-- required columns; those with a grower, a currency or an original in a
-- batch of their own), generated ones in batches of 5,000
SELECT count(*) AS put_transaction,
       count(*) FILTER (WHERE incentives.put_transaction(transaction_id, participant_key, transaction_type,
                                   transaction_date, sku_key, quantity, uom_key, amount)) AS new
  FROM stage.transactions WHERE participant_key NOT LIKE 'gen\_%'
   AND grower_key IS NULL AND currency IS NULL AND original_transaction_id IS NULL;
SELECT incentives.load_transactions(jsonb_agg(to_jsonb(t) ORDER BY transaction_id)) AS put_with_optional_columns
  FROM stage.transactions t WHERE participant_key NOT LIKE 'gen\_%'
   AND (grower_key IS NOT NULL OR currency IS NOT NULL OR original_transaction_id IS NOT NULL);
SELECT count(*) AS batches, sum(incentives.load_transactions(batch)) AS load_transactions
  FROM (SELECT jsonb_agg(to_jsonb(t) ORDER BY transaction_id) AS batch
          FROM (SELECT t.*, (row_number() OVER (ORDER BY transaction_id) - 1) / 5000 AS b
                  FROM stage.transactions t WHERE participant_key LIKE 'gen\_%') t
         GROUP BY b) x;
SELECT count(*) AS enrollments,
       count(*) FILTER (WHERE incentives.put_enrollment(participant_key, offer_key, start_date, end_date)) AS new
  FROM stage.enrollments;
EOF
    echo "   loaded in $(elapsed "$t")"

    # Members that join groups whose other members live on other shards,
    # after their transactions are there: gen_00001 .. _00010 form
    # gen_chain_a; gen_00011 is in gen_chain_a until March and then in
    # gen_chain_b with gen_00012 .. _00015 (one unit through it); then
    # gen_00015 leaves.  Each change moves whoever's placement changed.
    log "participant groups: members join groups on other shards (their transactions move)"
    local joins="SELECT format('gen_%s', lpad(i::text, 5, '0')) AS participant_key, 'gen_chain_a' AS group_key,
                        date '2025-01-01' AS start_date, NULL::date AS end_date FROM generate_series(1, 10) AS i
                 UNION ALL SELECT 'gen_00011', 'gen_chain_a', date '2025-01-01', date '2026-03-31'
                 UNION ALL SELECT 'gen_00011', 'gen_chain_b', date '2026-04-01', NULL
                 UNION ALL SELECT format('gen_%s', lpad(i::text, 5, '0')), 'gen_chain_b', date '2025-06-01', NULL
                             FROM generate_series(12, 15) AS i"
    sql single single -c "INSERT INTO incentives.participant_groups $joins" \
        -c "DELETE FROM incentives.participant_groups WHERE participant_key = 'gen_00015'"
    sql_as incentives_app coord coordinator <<EOF
\pset footer off
SELECT count(*) AS memberships,
       count(*) FILTER (WHERE incentives.put_participant_group(j.participant_key, j.group_key, j.start_date, j.end_date)) AS new
  FROM ($joins) AS j;
SELECT incentives.delete_participant_group('gen_00015', '2025-06-01') AS left_its_group;
SELECT count(DISTINCT incentives.partition_of(p.participant_key)) AS partitions_of_gen_chain_a_and_b
  FROM incentives_cluster.placements AS p WHERE p.participant_key LIKE 'gen\_%';
EOF

    # A group above gen_chain_a and gen_chain_b (one unit through
    # gen_00011) that no offer aggregates at is placed apart from them; a
    # type and an offer at its level (put_group, put_offer) place the
    # chains with it (docs/scaling.md, Participant groups).
    log "placement follows the levels offers aggregate at: a national group joins the chains only with an offer at its level"
    local units national
    units="SELECT count(DISTINCT p.placement_key) FROM incentives_cluster.placements AS p
            WHERE p.participant_key IN ('gen_00001', 'gen_nation')"
    sql_as incentives_app coord coordinator -A -t >/dev/null <<'SQL'
SELECT incentives.put_participant_group('gen_chain_a', 'gen_nation', '2025-01-01');
SELECT incentives.put_participant_group('gen_chain_b', 'gen_nation', '2025-01-01');
SQL
    [ "$(val coord coordinator -c "$units")" = 2 ] \
        || { echo "gen_chain_a shares a placement unit with gen_nation, which no offer aggregates at" >&2; exit 1; }
    national=$(val single single -c "SELECT document || '{\"offer_key\": \"cl.national\", \"group_type\": \"cl_national\"}'
                                       FROM incentives.offers WHERE document ->> 'aggregation' = 'group'
                                      ORDER BY offer_key LIMIT 1")
    sql_as incentives_app coord coordinator -A -t -v national="$national" >/dev/null <<'SQL'
SELECT incentives.put_group('gen_nation', 'cl_national');
SELECT incentives.put_offer(:'national'::jsonb);
SQL
    [ "$(val coord coordinator -c "$units")" = 1 ] \
        || { echo "an offer at gen_nation's level did not place gen_chain_a with it" >&2; exit 1; }
    [ "$(val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check() WHERE object LIKE 'misplaced%' AND row_count > 0")" = 0 ] \
        || { echo "cluster_check: misplaced rows after put_offer" >&2; exit 1; }
    sql_as incentives_app coord coordinator -A -t >/dev/null <<'SQL'
SELECT incentives.delete_offer('cl.national');
SELECT incentives.delete_group('gen_nation');
SELECT incentives.delete_participant_group('gen_chain_a', '2025-01-01');
SELECT incentives.delete_participant_group('gen_chain_b', '2025-01-01');
SQL
    [ "$(val coord coordinator -c "$units")" = 1 ] \
        || { echo "gen_nation still placed once its memberships are gone" >&2; exit 1; }
    echo "   gen_nation above the chains: placed apart; with a type and an offer at its level: together; its memberships deleted: gone"

    log "placement: incentives.cluster_check()"
    sql coord coordinator <<EOF
\pset footer off
SELECT partition, row_count AS transactions
  FROM incentives.cluster_check() WHERE object = 'transactions' ORDER BY partition;
DO \$\$
DECLARE sharded bigint; single bigint := $(val single single -c "SELECT count(*) FROM incentives.transactions");
BEGIN
    SELECT sum(row_count) INTO sharded FROM incentives.cluster_check() WHERE object = 'transactions';
    IF sharded IS DISTINCT FROM single THEN
        RAISE EXCEPTION 'the shards hold % transactions, the single node %', sharded, single;
    END IF;
    RAISE NOTICE 'every transaction on the partition of its participant; % on the shards = % on the single node', sharded, single;
END
\$\$;
DO \$\$
DECLARE sharded bigint; single bigint := $(val single single -c "SELECT count(*) FROM incentives.enrollments");
BEGIN
    SELECT sum(row_count) INTO sharded FROM incentives.cluster_check() WHERE object = 'enrollments';
    IF sharded IS DISTINCT FROM single OR single = 0 THEN
        RAISE EXCEPTION 'the shards hold % enrollments, the single node %', sharded, single;
    END IF;
    RAISE NOTICE 'every enrollment on the partition of its participant; % on the shards = % on the single node', sharded, single;
END
\$\$;
EOF

    log "comparing results, every column as text"
    t=$(now)
    for name in single "${names[@]}"; do
        sql "$name" "$name" -c "CREATE VIEW public.purchases AS
            SELECT * FROM incentives.transactions WHERE transaction_type = 'retailer_purchases_from_distribution';
          GRANT SELECT ON public.purchases TO incentives_app;"
    done
    sql coord coordinator <<<"$COMPARE_SQL"

    # capture LABEL QUERY: QUERY (text columns) on the single node (as
    # postgres) and through the coordinator (as incentives_app), side by
    # side in cmp.single_LABEL and cmp.sharded_LABEL.
    capture() {
        local label=$1 query=$2
        sql single single -c "\\copy ($query) TO '$WORK/single_$label.csv' WITH (FORMAT csv)"
        sql_as incentives_app coord coordinator -c "CREATE TABLE cmp.sharded_$label AS $query"
        sql coord coordinator -c "CREATE TABLE cmp.single_$label (LIKE cmp.sharded_$label)" \
            -c "\\copy cmp.single_$label FROM '$WORK/single_$label.csv' WITH (FORMAT csv)"
    }
    # every fixture participant and every tenth generated one
    local sample="SELECT DISTINCT participant_key AS p FROM stage.transactions
                   WHERE participant_key NOT LIKE 'gen\\_%' OR right(participant_key, 1) = '0'"
    capture all "SELECT $EARNING_TEXT FROM incentives.incentive_calculate()"
    capture properties "SELECT $EARNING_TEXT FROM incentives.incentive_calculate(properties => '{\"business_plan_achieved\": 90}')"
    capture offer_keys "SELECT $EARNING_TEXT FROM incentives.incentive_calculate(
                          offer_keys => ARRAY['offer_a', 'basf.2026.retailer.triple_stack', 'bayer.2026.retailer.fixed_bonus'])"
    capture view "SELECT $EARNING_TEXT FROM incentives.incentive_calculate(transactions => 'public.purchases')"
    capture each "SELECT $EARNING_TEXT FROM ($sample) s, LATERAL incentives.incentive_calculate(participant_key => s.p)"
    capture diagnostics "SELECT participant_key, offer_key, strategy_key, diagnostics::text, group_key FROM incentives.incentive_diagnostics()"
    if [ "$SURFACE" = 1 ]; then
        capture tier_progress "SELECT t::text FROM incentives.tier_progress() t"
        capture tier_progress_each "SELECT t::text FROM ($sample) s,
                                      LATERAL incentives.tier_progress(participant_key => s.p, properties => '{\"growth\": 1}') t"
        capture stack_progress "SELECT t::text FROM incentives.stack_progress() t"
        capture requirement_progress "SELECT t::text FROM incentives.requirement_progress() t"
        capture explain "SELECT x.p, x.offer_key, incentives.incentive_explain(x.p, x.offer_key)::text
                           FROM (SELECT DISTINCT t.participant_key AS p, o.document ->> 'offer_key' AS offer_key
                                   FROM stage.transactions t JOIN stage.offers o ON o.fixture = split_part(t.participant_key, '/', 1)
                                 UNION
                                 SELECT 'gen_00010', o.document ->> 'offer_key' FROM stage.offers o) x"
        capture calculate "SELECT incentives.calculate(jsonb_build_object(
                               'participant_key', 'gen_00010', 'include_stored', true,
                               'transactions', (SELECT jsonb_agg(to_jsonb(t) - 'participant_key' || jsonb_build_object('transaction_id', 'WHATIF-' || t.transaction_id))
                                                  FROM stage.transactions t WHERE t.participant_key = 'gen_00020'))) ->> 'potential_earnings'
                           UNION ALL
                           SELECT incentives.calculate(jsonb_build_object(
                               'transactions', (SELECT jsonb_agg(to_jsonb(t)) FROM stage.transactions t
                                                 WHERE t.participant_key LIKE 'stacked_pair_up/%'))) ->> 'potential_earnings'
                           UNION ALL
                           SELECT incentives.calculate(jsonb_build_object(
                               'participant_key', 'rules_enrollment/retailer_002', 'include_stored', true,
                               'enrollments', jsonb_build_array(jsonb_build_object(
                                   'offer_key', 'mfr.2026.enrolled_stepped', 'start_date', '2025-10-01'))))::text"
        # refresh_earnings: CALL on the single node and on the coordinator,
        # then the shards' incentives.earnings side by side with the single
        # node's
        local earnings_cols="participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key,
            incentive_rate_measure, incentive_rate_value::text, offer_sku_pay_rate::text, transaction_id,
            provided_quantity::text, provided_uom_key, provided_amount::text, incentivized_quantity::text,
            incentivized_amount::text, incentive_amount::text, incentive_contribution_percent::text,
            incentive_effective_rate::text, group_key, product_key, grower_key, currency,
            exchange_rate::text, transaction_date::text"
        sql single single -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()"
        sql single single -c "\\copy (SELECT $earnings_cols FROM incentives.earnings) TO '$WORK/single_earnings.csv' WITH (FORMAT csv)"
        sql_as incentives_app coord coordinator -c "CALL incentives.refresh_earnings()" 2>&1 | grep -v 'of .* participants' | sed 's/^/   /'
        sql_as incentives_app coord coordinator -c "CALL incentives.refresh_earnings(participant_key => 'gen_00010')" 2>&1 | sed 's/^/   /'
        sql coord coordinator -c "CREATE TABLE cmp.sharded_earnings AS SELECT * FROM cmp.single_all LIMIT 0;
                                  ALTER TABLE cmp.sharded_earnings ADD COLUMN transaction_date text;
                                  CREATE TABLE cmp.single_earnings (LIKE cmp.sharded_earnings);" \
            -c "\\copy cmp.single_earnings FROM '$WORK/single_earnings.csv' WITH (FORMAT csv)"
        for name in "${names[@]}"; do
            sql "$name" "$name" -c "\\copy (SELECT $earnings_cols FROM incentives.earnings) TO '$WORK/${name}_earnings.csv' WITH (FORMAT csv)"
            sql coord coordinator -c "\\copy cmp.sharded_earnings FROM '$WORK/${name}_earnings.csv' WITH (FORMAT csv)"
        done
    fi

    val coord coordinator -v surface="$SURFACE" <<EOF
SELECT cmp.compare('', 'cmp.sharded_all', 'cmp.single_all');
SELECT cmp.compare('properties => {"business_plan_achieved": 90}', 'cmp.sharded_properties', 'cmp.single_properties');
SELECT cmp.compare('offer_keys => 3 offers', 'cmp.sharded_offer_keys', 'cmp.single_offer_keys');
SELECT cmp.compare('transactions => ''public.purchases''', 'cmp.sharded_view', 'cmp.single_view');
SELECT cmp.compare('one participant at a time, ' || count(*) || ' participants', 'cmp.sharded_each', 'cmp.single_each')
  FROM ($sample) s;
SELECT cmp.compare('incentive_diagnostics', 'cmp.sharded_diagnostics', 'cmp.single_diagnostics');
\\if :surface
SELECT cmp.compare('tier_progress', 'cmp.sharded_tier_progress', 'cmp.single_tier_progress');
SELECT cmp.compare('tier_progress, one participant at a time', 'cmp.sharded_tier_progress_each', 'cmp.single_tier_progress_each');
SELECT cmp.compare('stack_progress', 'cmp.sharded_stack_progress', 'cmp.single_stack_progress');
SELECT cmp.compare('requirement_progress', 'cmp.sharded_requirement_progress', 'cmp.single_requirement_progress');
SELECT cmp.compare('incentive_explain', 'cmp.sharded_explain', 'cmp.single_explain');
SELECT cmp.compare('calculate(jsonb)', 'cmp.sharded_calculate', 'cmp.single_calculate');
SELECT cmp.compare('refresh_earnings: incentives.earnings', 'cmp.sharded_earnings', 'cmp.single_earnings');
\\endif
SELECT format('   %s participants, %s offers, %s calculators, %s rows with incentive_amount <> 0',
              count(DISTINCT participant_key), count(DISTINCT offer_key),
              count(DISTINCT offer_calculator), count(*) FILTER (WHERE incentive_amount::numeric <> 0))
  FROM cmp.sharded_all;
EOF
    echo "   compared in $(elapsed "$t")"

    log "error paths through the coordinator"
    expect_error() {  # expect_error PATTERN SQL: the statement must fail with a message matching PATTERN
        local pattern=$1 statement=$2 out
        if out=$(sql_as incentives_app coord coordinator -c "$statement" 2>&1); then
            echo "expected an error from: $statement" >&2
            echo "$out" >&2
            exit 1
        fi
        if ! grep -qE -- "$pattern" <<<"$out"; then
            echo "the error of [$statement] does not match /$pattern/:" >&2
            echo "$out" >&2
            exit 1
        fi
        echo "   $(grep -m1 ERROR <<<"$out")"
    }
    expect_error 'unknown offer|no_such_offer' \
        "SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['no_such_offer'])"
    expect_error 'invalid offer "broken"' \
        "SELECT incentives.put_offer('{\"offer_key\": \"broken\", \"strategy_key\": \"standard\", \"calculator_key\": \"percent_of_amount\", \"periods\": []}')"
    expect_error 'belongs to participant' \
        "SELECT incentives.put_transaction('G00000001', 'someone_else', 'retailer_sales_to_growers', '2026-01-01', 'x', 1, 'gal', 1)"
    expect_error 'enrollment of participant "rules_enrollment/retailer_001" in offer "mfr.2026.enrolled_standard" from 2025-12-01 .* overlaps' \
        "SELECT incentives.put_enrollment('rules_enrollment/retailer_001', 'mfr.2026.enrolled_standard', '2025-12-01')"
    # the keys of code/11_offer_keys.sql: refused before any shard stores
    # anything, with the shard's SQLSTATE; an enrollment names an offer
    local keydoc='{"offer_key": "%s", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "retailer_sales_to_growers", "rates": [{"sku_key": "no_such_sku", "rate": 1, "measure": "percent"}]}]}'
    expect_error 'offer key "MFR.2026.ENROLLED_STANDARD" differs only in letter case from the existing offer "mfr.2026.enrolled_standard"' \
        "SELECT incentives.put_offer('$(printf "$keydoc" MFR.2026.ENROLLED_STANDARD)')"
    expect_error 'offer key "cluster_key " has trailing white space' \
        "SELECT incentives.put_offer('$(printf "$keydoc" 'cluster_key ')')"
    expect_error 'enrollment of participant "rules_enrollment/retailer_001" names no offer "MFR.2026.enrolled_standard"' \
        "SELECT incentives.put_enrollment('rules_enrollment/retailer_001', 'MFR.2026.enrolled_standard', '2027-01-01')"
    local stored
    stored=$(val shard0 shard0 -c "SELECT count(*) FROM incentives.offers WHERE lower(offer_key) IN ('mfr.2026.enrolled_standard', 'cluster_key ')")
    [ "$stored" = 1 ] || { echo "a refused offer was stored on shard0 ($stored offers)" >&2; exit 1; }
    # the warnings over the shards, once the shards have them: program_skus
    # counts every shard's transactions, transaction_warnings lists every
    # shard's, as the single node does
    if [ "$(val shard0 shard0 -c "SELECT to_regprocedure('incentives.transaction_warnings(regclass)') IS NOT NULL
                                     AND to_regclass('incentives.program_skus') IS NOT NULL
                                     AND to_regprocedure('incentives.offer_warnings(regclass)') IS NOT NULL")" = t ]; then
        local a b
        a=$(val coord coordinator -c "SELECT count(*) || ' ' || coalesce(sum(transactions), 0) FROM incentives.program_skus")
        b=$(val single single -c "SELECT count(*) || ' ' || coalesce(sum(transactions), 0) FROM incentives.program_skus")
        [ "$a" = "$b" ] || { echo "program_skus: sharded $a, single $b (rows, transactions)" >&2; exit 1; }
        a=$(val coord coordinator -c "SELECT count(*) FROM incentives.transaction_warnings")
        b=$(val single single -c "SELECT count(*) FROM incentives.transaction_warnings")
        [ "$a" = "$b" ] || { echo "transaction_warnings: sharded $a rows, single $b" >&2; exit 1; }
        val coord coordinator -c "SELECT count(*) FROM incentives.offer_warnings" >/dev/null
        echo "   program_skus, transaction_warnings: sharded == single; offer_warnings answers"
    else
        echo "   offer_warnings, program_skus, transaction_warnings: the shards have none yet (skipped)"
    fi
    # a partial change (as if a put had failed half way): cluster_check names
    # it, the next put heals it
    sql shard0 shard0 -c "INSERT INTO incentives.skus VALUES ('half_applied_sku', 'gal', NULL)"
    expect_error 'skus differ between partitions' "SELECT * FROM incentives.cluster_check()"
    out=$(sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.put_sku('half_applied_sku', 'gal')" 2>&1)
    grep -q 'partitions disagreed' <<<"$out" || { echo "expected a warning: $out" >&2; exit 1; }
    echo "   $(grep -m1 WARNING <<<"$out")"
    sql coord coordinator -A -t -c "SELECT '   cluster_check() after the put: ' || count(*) || ' rows, consistent' FROM incentives.cluster_check()"
    val coord coordinator -c "SELECT incentives.delete_sku('half_applied_sku')" >/dev/null
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null

    # the product catalog (docs/reference.md, Products): reference data on
    # every partition through the coordinator; refused alike everywhere
    if [ "$(val coord coordinator -c "SELECT to_regprocedure('incentives.put_sku_product(text,text,date,date)') IS NOT NULL")" = t ]; then
        log "product catalog through the coordinator: put_product, put_sku_product on every partition"
        local products_on
        sql_as incentives_app coord coordinator -A -t <<'SQL' >/dev/null
SELECT incentives.put_product('cl_brand', NULL, 'Brand');
SELECT incentives.put_product('cl_line', 'cl_brand', 'Line');
SELECT incentives.put_sku_product('cl_sku', 'cl_line', '2026-01-01', '2026-06-30');
SELECT incentives.put_sku_product('cl_sku', 'cl_line', '2026-07-01');
SQL
        products_on=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
            val "shard$p" "shard$p" -c "SELECT count(*) FROM incentives.products WHERE product_key LIKE 'cl\_%'"
            val "shard$p" "shard$p" -c "SELECT count(*) FROM incentives.sku_products WHERE sku_key = 'cl_sku'"
        done | sort -u | tr '\n' ' ')
        [ "$products_on" = "2 " ] || { echo "products and windows per partition: $products_on (want 2 of each everywhere)" >&2; exit 1; }
        val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
        echo "   2 products and 2 windows on every partition; cluster_check() consistent"
        expect_error 'would form a cycle \(cl_brand -> cl_line -> cl_brand\)' "SELECT incentives.put_product('cl_brand', 'cl_line')"
        expect_error 'overlaps its window from 2026-07-01' "SELECT incentives.put_sku_product('cl_sku', 'cl_line', '2026-08-01')"
        expect_error 'cannot be deleted: SKU "cl_sku" is in it' "SELECT incentives.delete_product('cl_line')"
        # a catalog changed on one partition only: cluster_check names it
        sql shard0 shard0 -c "UPDATE incentives.products SET label = 'Brand (one shard)' WHERE product_key = 'cl_brand'"
        expect_error 'products differ between partitions' "SELECT * FROM incentives.cluster_check()"
        sql_as incentives_app coord coordinator -A -t <<'SQL' >/dev/null
SELECT incentives.put_product('cl_brand', NULL, 'Brand');
SELECT incentives.delete_sku_product('cl_sku', 'cl_line', '2026-01-01');
SELECT incentives.delete_sku_product('cl_sku', 'cl_line', '2026-07-01');
SELECT incentives.delete_product('cl_line');
SELECT incentives.delete_product('cl_brand');
SQL
        val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
        echo "   the catalog healed by the next put and deleted through the coordinator; cluster_check() consistent"
    fi

    # the types of groups (docs/reference.md, Participant hierarchies):
    # reference data on every partition through the coordinator; the
    # fixtures' types, put by it, made an offer with "group_type" aggregate
    # at the region there as on the single node (compared above)
    log "types of groups through the coordinator: put_group, delete_group on every partition"
    local regions groups_on
    regions=$(val coord coordinator -c "SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.region_volume'])
                                         WHERE group_key = 'hierarchy_region_chain/region_west'")
    [ "$regions" = "$(val single single -c "SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['mfr.2026.region_volume'])
                                             WHERE group_key = 'hierarchy_region_chain/region_west'")" ] && [ "$regions" -gt 0 ] \
        || { echo "mfr.2026.region_volume: $regions rows of region_west on the cluster (want the single node's, more than 0)" >&2; exit 1; }
    echo "   mfr.2026.region_volume aggregates at region_west on the cluster: $regions rows, as on the single node"
    sql_as incentives_app coord coordinator -A -t <<'SQL' >/dev/null
SELECT incentives.put_group('cl_region', 'region');
SELECT incentives.put_group('cl_region', 'region', 'Region');
SQL
    groups_on=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
        val "shard$p" "shard$p" -c "SELECT group_type || ' ' || label FROM incentives.groups WHERE group_key = 'cl_region'"
    done | sort | uniq -c | awk '{$1 = $1; print}')
    [ "$groups_on" = "${SHARDS:-2} region Region" ] || { echo "cl_region per partition: $groups_on (want region Region on each of ${SHARDS:-2})" >&2; exit 1; }
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    echo "   cl_region (region, Region) on every partition; cluster_check() consistent"
    expect_error 'group key "CL_REGION" differs only in letter case from the existing group "cl_region"' \
        "SELECT incentives.put_group('CL_REGION', 'region')"
    # a type changed on one partition only: cluster_check names it
    sql shard0 shard0 -c "UPDATE incentives.groups SET group_type = 'chain' WHERE group_key = 'cl_region'"
    expect_error 'groups differ between partitions' "SELECT * FROM incentives.cluster_check()"
    sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.put_group('cl_region', 'region', 'Region')" >/dev/null
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    [ "$(sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.delete_group('cl_region')")" = t ] \
        || { echo "delete_group('cl_region') found no row" >&2; exit 1; }
    groups_on=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
        val "shard$p" "shard$p" -c "SELECT count(*) FROM incentives.groups WHERE group_key = 'cl_region'"
    done | sort -u | tr '\n' ' ')
    [ "$groups_on" = "0 " ] || { echo "cl_region after delete_group, rows per partition: $groups_on (want 0 everywhere)" >&2; exit 1; }
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    echo "   the type healed by the next put and deleted on every partition by delete_group; cluster_check() consistent"

    # the currency case: the transactions' optional columns travelled to
    # the shards (put_transactions, load_transactions, and the moves of
    # members of groups), and the exchange rates are reference data on
    # every partition through the coordinator
    log "currencies: optional columns on the shards; put_exchange_rate, delete_exchange_rate on every partition"
    local optional_q="SELECT count(grower_key), count(currency), count(original_transaction_id),
                             md5(string_agg(concat_ws(' ', transaction_id, grower_key, currency, original_transaction_id),
                                            E'\\n' ORDER BY transaction_id COLLATE \"C\"))
                        FROM incentives.transactions
                       WHERE grower_key IS NOT NULL OR currency IS NOT NULL OR original_transaction_id IS NOT NULL"
    local single_optional sharded_optional
    single_optional=$(val single single -c "$optional_q")
    sharded_optional=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
        val "shard$p" "shard$p" -c "\\copy (SELECT transaction_id, grower_key, currency, original_transaction_id
                                              FROM incentives.transactions
                                             WHERE grower_key IS NOT NULL OR currency IS NOT NULL
                                                OR original_transaction_id IS NOT NULL) TO STDOUT WITH (FORMAT csv)"
    done)
    sharded_optional=$(val single single <<SQL
CREATE TEMP TABLE sharded_optional (transaction_id text, grower_key text, currency text, original_transaction_id text);
COPY sharded_optional FROM STDIN WITH (FORMAT csv);
$sharded_optional
\\.
SELECT count(grower_key), count(currency), count(original_transaction_id),
       md5(string_agg(concat_ws(' ', transaction_id, grower_key, currency, original_transaction_id),
                      E'\\n' ORDER BY transaction_id COLLATE "C"))
  FROM sharded_optional;
SQL
)
    [ "$single_optional" = "$sharded_optional" ] && [ "${single_optional%%|*}" -gt 0 ] \
        || { echo "optional columns: single $single_optional, shards $sharded_optional" >&2; exit 1; }
    echo "   grower_key, currency, original_transaction_id on the shards as on the single node: $single_optional"
    sql_as incentives_app coord coordinator -A -t <<'SQL' >/dev/null
SELECT incentives.put_exchange_rate('GBP', 'USD', '2026-01-01', 1.25);
SELECT incentives.put_exchange_rate('GBP', 'USD', '2026-01-01', 1.27);
SQL
    local rates_on
    rates_on=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
        val "shard$p" "shard$p" -c "SELECT rate FROM incentives.exchange_rates WHERE from_currency = 'GBP'"
    done | sort | uniq -c | awk '{$1 = $1; print}')
    [ "$rates_on" = "${SHARDS:-2} 1.27" ] || { echo "GBP rate per partition: $rates_on (want 1.27 on each of ${SHARDS:-2})" >&2; exit 1; }
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    echo "   GBP -> USD 1.27 on every partition; cluster_check() consistent"
    expect_error 'exchange_rates_pair_check' "SELECT incentives.put_exchange_rate('GBP', 'GBP', '2026-01-01', 1)"
    # a rate changed on one partition only: cluster_check names it
    sql shard0 shard0 -c "UPDATE incentives.exchange_rates SET rate = 1.30 WHERE from_currency = 'GBP'"
    expect_error 'exchange_rates differ between partitions' "SELECT * FROM incentives.cluster_check()"
    sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.put_exchange_rate('GBP', 'USD', '2026-01-01', 1.27)" >/dev/null
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    [ "$(sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.delete_exchange_rate('GBP', 'USD', '2026-01-01')")" = t ] \
        || { echo "delete_exchange_rate('GBP', 'USD', '2026-01-01') found no row" >&2; exit 1; }
    rates_on=$(for ((p = 0; p < ${SHARDS:-2}; p++)); do
        val "shard$p" "shard$p" -c "SELECT count(*) FROM incentives.exchange_rates WHERE from_currency = 'GBP'"
    done | sort -u | tr '\n' ' ')
    [ "$rates_on" = "0 " ] || { echo "GBP rates after delete_exchange_rate, rows per partition: $rates_on (want 0 everywhere)" >&2; exit 1; }
    val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
    echo "   the rate healed by the next put and deleted on every partition by delete_exchange_rate; cluster_check() consistent"

    log "one transaction_id under participants of two shards: each shard's key allows it (docs/scaling.md)"
    local p0 p1 dup earned
    read -r p0 p1 <<<"$(sql_as incentives_app coord coordinator -A -t -F ' ' -c "
        SELECT a.p, b.p
          FROM (SELECT min(participant_key) AS p FROM stage.transactions
                 WHERE incentives.partition_of(participant_key) = 0) a,
               (SELECT min(participant_key) AS p FROM stage.transactions
                 WHERE incentives.partition_of(participant_key) = 1) b")"
    dup=$(sql_as incentives_app coord coordinator -A -t -c "
        SELECT 'dup.' || transaction_id FROM incentives.incentive_calculate(participant_key => '$p0')
         ORDER BY transaction_id LIMIT 1")
    sql_as incentives_app coord coordinator -A -t -c "
        SELECT incentives.put_transaction('$dup', v.p, t.transaction_type, t.transaction_date,
                                          t.sku_key, t.quantity, t.uom_key, t.amount)
          FROM stage.transactions t, (VALUES ('$p0'), ('$p1')) AS v(p)
         WHERE t.transaction_id = substr('$dup', 5)" >/dev/null
    earned=$(sql_as incentives_app coord coordinator -A -t -c "
        SELECT count(DISTINCT participant_key) FROM incentives.incentive_calculate()
         WHERE transaction_id = '$dup'")
    if [ "$earned" != 2 ]; then
        echo "expected $dup to earn under $p0 and $p1 (one per shard), got $earned participants" >&2
        exit 1
    fi
    echo "   $dup under $p0 (partition 0) and $p1 (partition 1): both shards accept it and it earns under both; ids must be unique at the source"
    # on one shard its primary key still holds: another participant there is refused
    expect_error 'belongs to participant' \
        "SELECT incentives.put_transaction('$dup', p, 'retailer_sales_to_growers', '2026-01-01', 'x', 1, 'gal', 1)
           FROM (SELECT min(participant_key) AS p FROM stage.transactions
                  WHERE incentives.partition_of(participant_key) = 0 AND participant_key <> '$p0') x"
    sql_as incentives_app coord coordinator -A -t -c "
        SELECT incentives.delete_transaction('$p0', '$dup'), incentives.delete_transaction('$p1', '$dup')" >/dev/null

    if [ "$LIFECYCLE" = 1 ]; then
        log "lifecycle through the coordinator: offer history, through_date, settle (docs/lifecycle.md)"
        # an offer put, changed and deleted through the coordinator: every
        # shard keeps the same history (cluster_check compares it)
        local doc='{"offer_key": "cluster_history", "strategy_key": "standard", "calculator_key": "percent_of_amount", "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}], "incentives": [{"period_key": "p", "transaction_type": "retailer_sales_to_growers", "rates": [{"sku_key": "no_such_sku", "rate": 1, "measure": "percent"}]}]}'
        val coord coordinator -c "SELECT incentives.put_offer('$doc')" >/dev/null
        val coord coordinator -c "SELECT incentives.put_offer('$doc')" >/dev/null   # the same: no version
        val coord coordinator -c "SELECT incentives.put_offer(jsonb_set('$doc', '{label}', '\"v2\"'))" >/dev/null
        val coord coordinator -c "SELECT incentives.delete_offer('cluster_history')" >/dev/null
        val coord coordinator -c "SELECT count(*) FROM incentives.cluster_check()" >/dev/null
        for name in "${names[@]}"; do
            h=$(val "$name" "$name" -c "SELECT string_agg(version || ':' || (valid_to IS NULL), ' ' ORDER BY version)
                                          FROM incentives.offer_versions WHERE offer_key = 'cluster_history'")
            [ "$h" = "1:false 2:false" ] || { echo "$name: offer history of cluster_history is '$h', expected '1:false 2:false'" >&2; exit 1; }
        done
        echo "   offer history: put, put again (no version), change, delete through the coordinator: versions 1, 2 closed on every shard; cluster_check consistent"
        # through_date: the coordinator's calculation equals the single node's
        q_through="SELECT count(*) || ' ' || sum(incentive_amount) FROM incentives.incentive_calculate(through_date => '2026-03-31')"
        a=$(val single single -c "$q_through")
        b=$(val coord coordinator -c "$q_through")
        [ "$a" = "$b" ] || { echo "through_date: single node '$a', coordinator '$b'" >&2; exit 1; }
        echo "   incentive_calculate(through_date => '2026-03-31'): $a on the single node and through the coordinator"
        # settle: every shard settles its own participants; the lines add up
        # to the single node's statement
        sql single single -c "SET client_min_messages = warning" -c "CALL incentives.settle('2026-03-31')"
        sql_as incentives_app coord coordinator -c "SET client_min_messages = warning" -c "CALL incentives.settle('2026-03-31')"
        a=$(val single single -c "SELECT count(*) || ' ' || sum(amount_due) FROM incentives.statement_lines")
        local lines=0 due=0 l d
        for name in "${names[@]}"; do
            read -r l d <<<"$(val "$name" "$name" -c "SELECT count(*) || ' ' || COALESCE(sum(amount_due), 0) FROM incentives.statement_lines")"
            lines=$((lines + l))
            due=$(awk -v a="$due" -v b="$d" 'BEGIN {printf "%.2f", a + b}')
        done
        [ "$a" = "$lines $due" ] || { echo "settle: single node '$a', shards together '$lines $due'" >&2; exit 1; }
        echo "   settle('2026-03-31'): $lines lines, $due due on the single node and across the shards"
        # ledger guards (docs/lifecycle.md, Removing a settled offer): an
        # offer settled on some shard is deleted by none; no statement
        # dated after today
        local settled status out
        settled=$(val shard0 shard0 -c "SELECT offer_key FROM incentives.statement_lines GROUP BY 1
                                         HAVING sum(amount_due) <> 0 ORDER BY 1 LIMIT 1")
        [ -n "$settled" ] || { echo "settle: no settled offer on shard0: the test proves nothing" >&2; exit 1; }
        status=0
        out=$(sql coord coordinator -A -t -v VERBOSITY=verbose -c "SELECT incentives.delete_offer('$settled')" 2>&1) || status=$?
        case $out in *55000*"offer \"$settled\" cannot be removed"*) ;; *) echo "delete_offer('$settled') of a settled offer: '$out'" >&2; exit 1 ;; esac
        for name in "${names[@]}"; do
            [ "$(val "$name" "$name" -c "SELECT count(*) FROM incentives.offers WHERE offer_key = '$settled'")" = 1 ] ||
                { echo "$name: delete_offer('$settled') was refused but the shard removed it" >&2; exit 1; }
        done
        status=0
        out=$(sql_as incentives_app coord coordinator -A -t -c "CALL incentives.settle(current_date + 1)" 2>&1) || status=$?
        case $out in *"is after today"*) ;; *) echo "settle(current_date + 1) through the coordinator: '$out'" >&2; exit 1 ;; esac
        echo "   delete_offer('$settled') of an offer settled on the shards: refused (55000), kept on every shard; settle after today refused"
        # removed on purpose, on the single node and through the coordinator
        # (the forecasts below compare the two without it)
        val single single -c "SET client_min_messages = warning" -c "SELECT incentives.remove_settled_offer('$settled', 'check-cluster')" >/dev/null
        [ "$(val coord coordinator -c "SET client_min_messages = warning" -c "SELECT incentives.remove_settled_offer('$settled', 'check-cluster')")" = "${#names[@]}" ] ||
            { echo "remove_settled_offer('$settled') through the coordinator did not run on every shard" >&2; exit 1; }
        for name in "${names[@]}"; do
            out=$(val "$name" "$name" -c "SELECT (SELECT count(*) FROM incentives.offers WHERE offer_key = '$settled') || ' '
                                             || (SELECT count(*) FROM incentives.offer_removals WHERE offer_key = '$settled' AND reason = 'check-cluster')")
            [ "$out" = "0 1" ] || { echo "$name: remove_settled_offer('$settled') did not remove and log it ($out)" >&2; exit 1; }
        done
        echo "   remove_settled_offer('$settled') through the coordinator: removed and logged on every shard"
        # closing a season (docs/lifecycle.md, Why a line moved, holdbacks,
        # minimums and closing a season): final_offer_keys are checked on
        # every shard before any settles; then each shard closes the offer
        # with final lines, as the single node does; reopen_offer reopens it
        # on every shard
        local closing before_count
        closing=$(val single single -c "SELECT o.offer_key FROM incentives.offers AS o
                                          CROSS JOIN LATERAL incentives_internal.offer_references(o.document) AS r
                                         WHERE r.kind = 'period' GROUP BY o.offer_key
                                        HAVING max(r.end_date) <= DATE '2026-11-30'
                                         ORDER BY o.offer_key LIMIT 1")
        [ -n "$closing" ] || { echo "closing: no offer whose season ends by 2026-11-30: the test proves nothing" >&2; exit 1; }
        before_count=$(val shard0 shard0 -c "SELECT count(*) FROM incentives.statements")
        status=0
        out=$(sql_as incentives_app coord coordinator -A -t -c "CALL incentives.settle('2026-11-30', final_offer_keys => ARRAY['$closing', 'no.such.offer'])" 2>&1) || status=$?
        case $out in *"final_offer_keys names offer \"no.such.offer\", which does not exist"*) ;; *) echo "settle with an unknown final key through the coordinator: '$out'" >&2; exit 1 ;; esac
        [ "$(val shard0 shard0 -c "SELECT count(*) FROM incentives.statements")" = "$before_count" ] ||
            { echo "settle with an unknown final key: a shard wrote a statement" >&2; exit 1; }
        sql single single -c "SET client_min_messages = warning" -c "CALL incentives.settle('2026-11-30', final_offer_keys => ARRAY['$closing'])"
        sql_as incentives_app coord coordinator -c "SET client_min_messages = warning" -c "CALL incentives.settle('2026-11-30', final_offer_keys => ARRAY['$closing'])"
        a=$(val single single -c "SELECT count(*) || ' ' || COALESCE(sum(amount_due), 0) FROM incentives.statement_lines
                                   WHERE offer_key = '$closing' AND statement_id = (SELECT max(statement_id) FROM incentives.statements)")
        [ "${a%% *}" -gt 0 ] || { echo "closing '$closing': no line on the single node: the test proves nothing" >&2; exit 1; }
        local l d f final_all=true
        lines=0; due=0
        for name in "${names[@]}"; do
            [ "$(val "$name" "$name" -c "SELECT count(*) FROM incentives.closed_offers WHERE offer_key = '$closing'")" = 1 ] ||
                { echo "$name: settle(final_offer_keys => '$closing') through the coordinator did not close it there" >&2; exit 1; }
            read -r l d f <<<"$(val "$name" "$name" -c "SELECT count(*) || ' ' || COALESCE(sum(amount_due), 0) || ' ' || COALESCE(bool_and(final), true)
                                                        FROM incentives.statement_lines
                                                       WHERE offer_key = '$closing'
                                                         AND statement_id = (SELECT max(statement_id) FROM incentives.statements)")"
            lines=$((lines + l)); due=$(val single single -c "SELECT $due + $d"); [ "$f" = true ] || final_all=false
        done
        [ "$final_all" = true ] || { echo "closing: a shard's lines of '$closing' are not final" >&2; exit 1; }
        [ "$a" = "$lines $due" ] ||
            { echo "closing '$closing': single node '$a', shards together '$lines $due'" >&2; exit 1; }
        val single single -c "SET client_min_messages = warning" -c "SELECT incentives.reopen_offer('$closing', 'check-cluster')" >/dev/null
        [ "$(val coord coordinator -c "SET client_min_messages = warning" -c "SELECT incentives.reopen_offer('$closing', 'check-cluster')")" = "${#names[@]}" ] ||
            { echo "reopen_offer('$closing') through the coordinator did not run on every shard" >&2; exit 1; }
        for name in "${names[@]}"; do
            [ "$(val "$name" "$name" -c "SELECT count(*) FROM incentives.closed_offers WHERE offer_key = '$closing'")" = 0 ] ||
                { echo "$name: reopen_offer('$closing') did not reopen it there" >&2; exit 1; }
        done
        status=0
        out=$(sql coord coordinator -A -t -c "SELECT incentives.reopen_offer('$closing', 'again')" 2>&1) || status=$?
        case $out in *"offer \"$closing\" is not closed on ${#names[@]} partitions"*) ;; *) echo "reopen_offer of an open offer through the coordinator: '$out'" >&2; exit 1 ;; esac
        echo "   settle(final_offer_keys => '$closing') through the coordinator: an unknown key refused before any shard settled; closed on every shard with final lines ($lines lines, $due due, as on the single node); reopened on every shard"
    fi

    if [ "$FORECAST" = 1 ]; then
        log "forecast and accrual through the coordinator (docs/lifecycle.md, Accruals)"
        # the forecast: the coordinator's rows equal the single node's, row for row
        local as_of fsql
        for as_of in 2026-02-15 2026-05-31; do
            # a member that moved between groups has a row per group
            fsql="SELECT participant_key, offer_key, group_key, span_start, span_end, elapsed_days, span_days,
                         basis_to_date, projected_basis, rate_key_to_date, projected_rate_key,
                         earned_to_date, projected_earnings, accrual_to_date
                    FROM incentives.forecast('$as_of') ORDER BY 1, 2, 3 NULLS FIRST"
            val single single -c "$fsql" > "$WORK/forecast_single.txt"
            sql_as incentives_app coord coordinator -A -t -c "$fsql" > "$WORK/forecast_coord.txt"
            if ! cmp -s "$WORK/forecast_single.txt" "$WORK/forecast_coord.txt"; then
                echo "forecast('$as_of'): the coordinator differs from the single node:" >&2
                diff "$WORK/forecast_single.txt" "$WORK/forecast_coord.txt" | head -20 >&2
                exit 1
            fi
            [ -s "$WORK/forecast_single.txt" ] || { echo "forecast('$as_of'): no rows: the test proves nothing" >&2; exit 1; }
            echo "   forecast('$as_of'): $(wc -l < "$WORK/forecast_single.txt") rows, identical on the single node and through the coordinator"
        done
        # one participant, on its partition
        local one
        one=$(val single single -c "SELECT min(participant_key) FROM incentives.forecast('2026-05-31')")
        fsql="SELECT count(*) || ' ' || sum(accrual_to_date) FROM incentives.forecast('2026-05-31', '$one')"
        a=$(val single single -c "$fsql")
        b=$(sql_as incentives_app coord coordinator -A -t -c "$fsql")
        [ "$a" = "$b" ] || { echo "forecast('2026-05-31', '$one'): single node '$a', coordinator '$b'" >&2; exit 1; }
        # accrue twice: every shard books its own participants; the lines
        # of each accrual add up to the single node's
        local d
        for d in 2026-04-30 2026-05-31; do
            sql single single -c "SET client_min_messages = warning" -c "CALL incentives.accrue('$d')"
            sql_as incentives_app coord coordinator -c "SET client_min_messages = warning" -c "CALL incentives.accrue('$d')"
            a=$(val single single -c "SELECT count(*) || ' ' || sum(l.accrued_to_date) || ' ' || sum(l.delta)
                                        FROM incentives.accrual_lines l JOIN incentives.accruals x USING (accrual_id)
                                       WHERE x.as_of_date = '$d'")
            local n=0 acc=0 delta=0 c e f
            for name in "${names[@]}"; do
                read -r c e f <<<"$(val "$name" "$name" -c "SELECT count(*) || ' ' || COALESCE(sum(l.accrued_to_date), 0) || ' ' || COALESCE(sum(l.delta), 0)
                                                              FROM incentives.accrual_lines l JOIN incentives.accruals x USING (accrual_id)
                                                             WHERE x.as_of_date = '$d'")"
                n=$((n + c))
                acc=$(awk -v a="$acc" -v b="$e" 'BEGIN {printf "%.2f", a + b}')
                delta=$(awk -v a="$delta" -v b="$f" 'BEGIN {printf "%.2f", a + b}')
            done
            [ "$a" = "$n $acc $delta" ] || { echo "accrue('$d'): single node '$a', shards together '$n $acc $delta'" >&2; exit 1; }
            echo "   accrue('$d'): $n lines, $acc accrued, $delta booked on the single node and across the shards"
        done
    fi

    local victim="shard$((shards - 1))"
    log "stopping $victim (127.0.0.1:${PORT[$victim]}): a calculation for all participants must fail, naming it"
    cluster_stop "$victim"
    status=0
    out=$(sql_as incentives_app coord coordinator -A -t -c "SELECT count(*) FROM incentives.incentive_calculate()" 2>&1) || status=$?
    if [ "$status" = 0 ]; then
        echo "a calculation with $victim down returned: $out" >&2
        exit 1
    fi
    if ! grep -q "$victim" <<<"$out" || ! grep -q "${PORT[$victim]}" <<<"$out"; then
        echo "the error does not name $victim (port ${PORT[$victim]}): $out" >&2
        exit 1
    fi
    echo "$out" | sed 's/^/   /'
    out=$(sql_as incentives_app coord coordinator -A -t -c "SELECT incentives.put_sku('while_down', 'gal')" 2>&1) && {
        echo "a reference-data change with $victim down succeeded: $out" >&2
        exit 1
    }
    grep -q "$victim" <<<"$out" || { echo "the error does not name $victim: $out" >&2; exit 1; }
    echo "   put_sku with $victim down: $(grep -m1 ERROR <<<"$out" | cut -c1-160)"
    # a participant of a live partition still computes
    out=$(sql_as incentives_app coord coordinator -A -t -c "
        SELECT format('participant %s on partition %s (up): %s rows', p, incentives.partition_of(p),
                      (SELECT count(*) FROM incentives.incentive_calculate(participant_key => p)))
          FROM (SELECT DISTINCT participant_key AS p FROM stage.transactions
                 WHERE incentives.partition_of(participant_key) <> $((shards - 1))
                 ORDER BY 1 LIMIT 1) x")
    echo "   $out"

    log "check-cluster passed in $(elapsed "$t0") ($shards shards)"
}

if [ "${CLUSTER_LIB:-0}" != 1 ]; then
    main "$@"
fi
