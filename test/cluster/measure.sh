#!/usr/bin/env bash
# test/cluster/measure.sh: what sharding costs and buys, measured
# (`make measure-cluster`; not part of `make test`).
#
# As root, like run.sh (whose functions it uses): starts a coordinator, a
# single node and 4 shard clusters on 127.0.0.1 in a mktemp folder, generates
# N transactions (1,000,000; env N) of PARTICIPANTS participants (10,000)
# over the fixtures' offers (run.sh's generator), and loads them
#
#   into `single` directly, and
#   with the documented bulk-loader hash, hashtext(participant_key) &
#   (partitions - 1), into a 2-partition layout (databases p2_0, p2_1 on
#   shard0, shard1) and a 4-partition layout (p4_0 .. p4_3 on shard0 ..
#   shard3); incentives.cluster_check() confirms every row is where PL/Proxy
#   routes its participant.
#
# Then, for each layout -- the single node called directly, and through the
# coordinator with 1 partition (the single node's database), 2 and 4 -- it
# times (rows and totals: best of RUNS, 2; refresh: once):
#
#   rows     SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate()
#            every earning row comes back to the caller (through the
#            coordinator: all rows travel over libpq and are merged there)
#   totals   the same count and sum computed on each shard by a helper
#            function (public.earning_totals) and added up: what a sharded
#            report should do
#   refresh  CALL incentives.refresh_earnings(): each shard materializes
#            its own participants' earnings (MEASURE_REFRESH=0 skips it)
#
# and checks that every layout gives the same count and sum.  Finally the
# per-call routing overhead: pgbench, one connection, CALLS (2,000) calls of
# incentive_calculate(participant_key => a random participant), directly on
# the single node and through the coordinator to the same database
# (1 partition) and to the 4-partition layout; median and 95th percentile
# latency.  This machine has 2 cores: more shards than cores show the
# overhead of sharding, not its gains.
set -euo pipefail
CLUSTER_LIB=1
# shellcheck source=run.sh
. "$(dirname "${BASH_SOURCE[0]}")/run.sh"

N=${N:-1000000}
PARTICIPANTS=${PARTICIPANTS:-10000}
RUNS=${RUNS:-2}
CALLS=${CALLS:-2000}
MEASURE_REFRESH=${MEASURE_REFRESH:-1}

# earning_totals: count and sum of incentive_calculate, computed where the
# data is (a helper of this measurement, not part of the extension).
TOTALS_SHARD_SQL="CREATE FUNCTION public.earning_totals(participant_key text DEFAULT NULL)
RETURNS TABLE (row_count bigint, incentive numeric) LANGUAGE sql STABLE
AS \$\$ SELECT count(*), coalesce(sum(incentive_amount), 0) FROM incentives.incentive_calculate(\$1) \$\$;"
TOTALS_PROXY_SQL="CREATE FUNCTION public.earning_totals(participant_key text DEFAULT NULL)
RETURNS TABLE (row_count bigint, incentive numeric) LANGUAGE plproxy
AS \$\$ CLUSTER 'incentives_cluster'; RUN ON incentives.partitions_for(participant_key); \$\$;"

# timed NAME DB SQL: SECONDS = the best of RUNS; RESULT = what the last
# run printed.
RESULT=""
SECONDS_BEST=""
timed() {
    local name=$1 db=$2 statement=$3 runs=${4:-$RUNS} i t s
    SECONDS_BEST=""
    for ((i = 0; i < runs; i++)); do
        t=$(now)
        RESULT=$(sql "$name" "$db" -A -t -c "SET client_min_messages = warning" -c "$statement")
        s=$(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
        if [ -z "$SECONDS_BEST" ] || awk -v s="$s" -v b="$SECONDS_BEST" 'BEGIN { exit !(s < b) }'; then
            SECONDS_BEST=$s
        fi
    done
}

# configure PARTITION_DB...: the coordinator's cluster = these databases
# (NAME:DB pairs), then cluster_check.
configure() {
    local options="" i=0 pair name db
    for pair in "$@"; do
        name=${pair%%:*}
        db=${pair#*:}
        options+="${options:+, }p$i 'dbname=$db host=127.0.0.1 port=${PORT[$name]}'"
        i=$((i + 1))
    done
    sql coord coordinator -c "DROP SERVER IF EXISTS incentives_cluster CASCADE" 2>/dev/null
    sql coord coordinator -c "CREATE SERVER incentives_cluster FOREIGN DATA WRAPPER plproxy OPTIONS ($options)" \
        -c "CREATE USER MAPPING FOR postgres SERVER incentives_cluster OPTIONS (user 'postgres')"
    sql coord coordinator -A -t -c "SELECT '   ' || string_agg(format('p%s: %s', partition, row_count), ', ' ORDER BY partition)
                                        || ' transactions, placement and reference data consistent'
                                      FROM incentives.cluster_check() WHERE object = 'transactions'"
}

measure() {
    local t0 t p n name db layout
    t0=$(now)
    local load_before
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    cluster_setup
    log "starting coord, single and shard0..shard3 in $WORK (load average $load_before)"
    for name in coord single shard0 shard1 shard2 shard3; do cluster_start "$name"; done

    log "generating $N transactions of $PARTICIPANTS participants on single"
    t=$(now)
    shard_setup single single
    sql single single <<<"$STAGE_SQL"
    stage_fixtures single single
    sql single single -c "SELECT stage.generate($N, $PARTICIPANTS)" >/dev/null
    stage_export single single
    load_single single single
    sql single single -c "$TOTALS_SHARD_SQL"
    echo "   $(val single single -c "SELECT count(*) || ' transactions, ' || count(DISTINCT participant_key) || ' participants' FROM incentives.transactions") in $(elapsed "$t")"

    log "bulk-loading the 2- and 4-partition layouts by hashtext(participant_key) & (partitions - 1)"
    t=$(now)
    for n in 2 4; do
        for ((p = 0; p < n; p++)); do
            name="shard$p"
            db="p${n}_$p"
            shard_setup "$name" "$db"
            sql "$name" "$db" -c "$TOTALS_SHARD_SQL"
            sql single single -c "\\copy (SELECT * FROM stage.transactions
                                           WHERE (hashtext(participant_key) & ($n - 1)) = $p) TO '$WORK/part.csv' WITH (FORMAT csv)"
            sql "$name" "$db" \
                -c "\\copy incentives.offers (document) FROM PROGRAM 'cut -d, -f2- $WORK/stage_offers.csv' WITH (FORMAT csv)" \
                -c "\\copy incentives.skus FROM '$WORK/stage_skus.csv' WITH (FORMAT csv)" \
                -c "\\copy incentives.uom_conversions FROM '$WORK/stage_uom_conversions.csv' WITH (FORMAT csv)" \
                -c "\\copy incentives.participant_properties FROM '$WORK/stage_participant_properties.csv' WITH (FORMAT csv)" \
                -c "\\copy incentives.transactions FROM '$WORK/part.csv' WITH (FORMAT csv)" \
                -c "ANALYZE"
        done
    done
    rm -f "$WORK/part.csv"
    echo "   loaded in $(elapsed "$t")"

    log "coordinator"
    sql coord postgres -c "CREATE DATABASE coordinator"
    sql coord coordinator -c "CREATE EXTENSION plproxy" -c "CREATE EXTENSION incentives_cluster" -c "$TOTALS_PROXY_SQL"

    local -a layouts=("single node, direct" "coordinator + 1 partition" "coordinator + 2 partitions" "coordinator + 4 partitions")
    local -a t_rows=() t_totals=() t_refresh=() results=()
    local rows_q="SELECT count(*) || ' rows, ' || sum(incentive_amount) FROM incentives.incentive_calculate()"
    local totals_q="SELECT sum(row_count) || ' rows, ' || sum(incentive) FROM public.earning_totals()"
    local i
    for i in 0 1 2 3; do
        log "${layouts[$i]}"
        case $i in
            0) name=single; db=single ;;
            1) configure single:single; name=coord; db=coordinator ;;
            2) configure shard0:p2_0 shard1:p2_1; name=coord; db=coordinator ;;
            3) configure shard0:p4_0 shard1:p4_1 shard2:p4_2 shard3:p4_3; name=coord; db=coordinator ;;
        esac
        timed "$name" "$db" "$rows_q"
        t_rows[$i]=$SECONDS_BEST
        results+=("$RESULT")
        echo "   rows:    ${t_rows[$i]} s  ($RESULT)"
        timed "$name" "$db" "$totals_q"
        t_totals[$i]=$SECONDS_BEST
        results+=("$RESULT")
        echo "   totals:  ${t_totals[$i]} s  ($RESULT)"
        if [ "$MEASURE_REFRESH" = 1 ]; then
            timed "$name" "$db" "CALL incentives.refresh_earnings()" 1
            t_refresh[$i]=$SECONDS_BEST
            echo "   refresh: ${t_refresh[$i]} s"
        else
            t_refresh[$i]="-"
        fi
    done
    # the same figures from every layout
    if [ "$(printf '%s\n' "${results[@]}" | sort -u | wc -l)" != 1 ]; then
        echo "the layouts disagree:" >&2
        printf '%s\n' "${results[@]}" >&2
        exit 1
    fi

    log "routing overhead: pgbench, 1 connection, $CALLS calls of incentive_calculate(participant_key => random participant)"
    cat >"$WORK/one.sql" <<EOF
\\set i random(1, $PARTICIPANTS)
SELECT count(*) FROM incentives.incentive_calculate(participant_key => 'gen_' || lpad(:i::text, 5, '0'));
EOF
    chmod 644 "$WORK/one.sql"
    latency() {  # latency NAME DB LABEL: median and p95 in ms
        local name=$1 db=$2 label=$3 logdir="$WORK/pgbench_$1_$2_$RANDOM"
        mkdir -p "$logdir"
        (cd "$logdir" && "$PGBIN/pgbench" -n -h 127.0.0.1 -p "${PORT[$name]}" -U postgres -c 1 -t "$CALLS" \
            -f "$WORK/one.sql" -l "$db" >/dev/null 2>&1)
        cat "$logdir"/pgbench_log.* | awk '{ print $3 / 1000.0 }' | sort -g |
            awk -v label="$label" '{ a[NR] = $1 } END { printf "%s|%.3f|%.3f\n", label, a[int((NR + 1) / 2)], a[int(NR * 0.95)] }'
    }
    local lat_direct lat_one lat_four
    lat_direct=$(latency single single "single node, direct")
    configure single:single >/dev/null
    lat_one=$(latency coord coordinator "coordinator + 1 partition (same database)")
    configure shard0:p4_0 shard1:p4_1 shard2:p4_2 shard3:p4_3 >/dev/null
    lat_four=$(latency coord coordinator "coordinator + 4 partitions")

    log "results ($N transactions, $PARTICIPANTS participants, ${results[0]}; $(nproc) cores; best of $RUNS; load average $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after)"
    echo
    echo "| layout | all rows to the caller | totals computed on the shards | CALL refresh_earnings() (once) |"
    echo "|---|---:|---:|---:|"
    for i in 0 1 2 3; do
        printf '| %s | %s s | %s s | %s |\n' "${layouts[$i]}" "${t_rows[$i]}" "${t_totals[$i]}" \
            "$([ "${t_refresh[$i]}" = - ] && echo - || echo "${t_refresh[$i]} s")"
    done
    echo
    echo "| one participant per call ($CALLS calls) | median | p95 |"
    echo "|---|---:|---:|"
    for l in "$lat_direct" "$lat_one" "$lat_four"; do
        IFS='|' read -r label med p95 <<<"$l"
        printf '| %s | %s ms | %s ms |\n' "$label" "$med" "$p95"
    done
    awk -v a="${lat_direct#*|}" -v b="${lat_one#*|}" 'BEGIN { split(a, x, "|"); split(b, y, "|");
        printf "\nrouting overhead (median, same database): %.3f ms per call\n", y[1] - x[1] }'
    echo
    log "measured in $(elapsed "$t0")"
}

measure "$@"
