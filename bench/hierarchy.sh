#!/usr/bin/env bash
# bench/hierarchy.sh: a four-level hierarchy of retailers against one-level
# groups (docs/reference.md, Participant hierarchies), on
# bench/generate.sql's data.
#
#   bench/hierarchy.sh       # 1M transactions, 1,000 participants
#   make bench-hierarchy     # builds, installs, runs this
#
# In a throwaway cluster with bench/run.sh's settings (bench/lib.sh): the
# generated data and the 60 generated offers copied with "aggregation":
# "group", then BENCH_RUNS interleaved rounds of the copies' calculation
#   one level   the 1,000 participants in 100 chains of ten (as
#               bench/groups.sh), no group in a group
#   four levels the same chains in 20 regions, the regions in 5 buying
#               groups, the buying groups in one national group, each
#               level typed (incentives.groups: chain, region,
#               buying_group, national); the copies aggregate at the chain
#               (no group_type: the immediate group), so the figures are the
#               one-level case's
#   national    the four levels, and one more offer (a copy of the first
#               aggregated at the national level): every participant is
#               then one calculation unit of every transaction, read in
#               pages from a temporary file
# and the medians: four levels / one level (expected within 1.2), national
# / one level.  Cross-check: the three cases' rows of the chain copies are
# the same (0 differences required: exit status 1 otherwise).
set -euo pipefail

: "${BENCH_WORK_MEM:=4MB}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCH_CLUSTER_OPTS=(-c "-p $("$root/mk/free_port.sh")" -o "temp_buffers=64MB")
bench_cluster "$here/hierarchy.sh" "$@"

bench_database incentives_bench_hierarchy
"${PSQL[@]}" -c "CREATE EXTENSION pg_prewarm"
"${PSQL[@]}" -f bench/bench.sql

# levels N: the memberships of 1 (chains only) or 4 levels
levels() {
    "${PSQL[@]}" -v levels="$1" <<'SQL'
SET client_min_messages = warning;
TRUNCATE incentives.participant_groups, incentives.groups;
INSERT INTO incentives.participant_groups
SELECT participant_key, format('chain_%s', lpad((substr(participant_key, 10)::int % 100)::text, 2, '0')),
       date '2025-01-01', NULL
  FROM bench.participants;
SELECT :levels = 4 AS four \gset
\if :four
INSERT INTO incentives.participant_groups
SELECT format('chain_%s', lpad(c::text, 2, '0')), format('region_%s', lpad((c % 20)::text, 2, '0')),
       date '2025-01-01', NULL
  FROM generate_series(0, 99) AS c;
INSERT INTO incentives.participant_groups
SELECT format('region_%s', lpad(r::text, 2, '0')), format('buying_group_%s', r % 5), date '2025-01-01', NULL
  FROM generate_series(0, 19) AS r;
INSERT INTO incentives.participant_groups
SELECT format('buying_group_%s', b), 'national', date '2025-01-01', NULL
  FROM generate_series(0, 4) AS b;
INSERT INTO incentives.groups (group_key, group_type)
SELECT DISTINCT group_key, regexp_replace(group_key, '_[0-9]+$', '')
  FROM incentives.participant_groups;
\endif
ANALYZE incentives.participant_groups;
SQL
}

status=0
for n in $BENCH_N; do
    log "N=$n: generating (seed $BENCH_SEED), the offers copied aggregated by group"
    "${PSQL[@]}" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
    "${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
INSERT INTO incentives.offers (document)
SELECT document || jsonb_build_object('offer_key', offer_key || '.group', 'aggregation', 'group')
  FROM incentives.offers;
INSERT INTO incentives.offers (document)
SELECT document || jsonb_build_object('offer_key', offer_key || '.national', 'aggregation', 'group',
                                      'group_type', 'national')
  FROM incentives.offers
 WHERE offer_key NOT LIKE '%.group'
 ORDER BY offer_key
 LIMIT 1;
CREATE TABLE IF NOT EXISTS bench.hierarchy_rows (levels int, participant_key text, offer_key text,
                                                 transaction_id text, incentive_rate_key text,
                                                 incentive_amount numeric, group_key text);
TRUNCATE bench.hierarchy_rows;
SQL
    "${PSQL[@]}" -c "VACUUM ANALYZE"
    q "SELECT pg_prewarm('incentives.transactions'), pg_prewarm('incentives.transactions_participant_idx')" >/dev/null
    q "DELETE FROM bench.results WHERE n = $n" >/dev/null
    # case N: 1 one level, 4 four levels, 5 four levels and the national offer
    chains="(SELECT array_agg(offer_key) FROM incentives.offers WHERE offer_key LIKE '%.group')"
    national="(SELECT array_agg(offer_key) FROM incentives.offers WHERE offer_key LIKE '%.group' OR offer_key LIKE '%.national')"
    name() { case $1 in 1) echo "one level" ;; 4) echo "four levels" ;; 5) echo "national" ;; esac; }
    for run in $(seq "$BENCH_RUNS"); do
        log "N=$n: round $run"
        for c in 1 4 5; do
            levels $((c == 1 ? 1 : 4))
            m=$(name $c)
            ms=$(q "SELECT bench.measure($n, '$m', $run, \$q\$SELECT count(*), sum(incentive_amount)
                      FROM incentives.incentive_calculate(offer_keys => $([ $c = 5 ] && echo "$national" || echo "$chains"))\$q\$)")
            log "  $m run $run: $ms ms"
        done
    done

    log "N=$n: cross-check (the chain copies' rows in every case)"
    for c in 1 4 5; do
        levels $((c == 1 ? 1 : 4))
        q "INSERT INTO bench.hierarchy_rows
           SELECT $c, participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
             FROM incentives.incentive_calculate(offer_keys => $([ $c = 5 ] && echo "$national" || echo "$chains"))
            WHERE offer_key LIKE '%.group'" >/dev/null
    done
    diff=0
    for c in 4 5; do
        d=$(q "SELECT count(*) FROM (
                (SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
                   FROM bench.hierarchy_rows WHERE levels = 1
                 EXCEPT ALL
                 SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
                   FROM bench.hierarchy_rows WHERE levels = $c)
                UNION ALL
                (SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
                   FROM bench.hierarchy_rows WHERE levels = $c
                 EXCEPT ALL
                 SELECT participant_key, offer_key, transaction_id, incentive_rate_key, incentive_amount, group_key
                   FROM bench.hierarchy_rows WHERE levels = 1)) d")
        diff=$((diff + d))
    done
    [ "$diff" = 0 ] || status=1

    {
        echo "participant hierarchies, N=$n, $BENCH_RUNS rounds, medians (bench/hierarchy.sh):"
        q "SELECT format('  %-28s %10s ms  %10s rows  total %s', measure,
                         to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM9999990.0'),
                         max(rows_out), max(total))
             FROM bench.results WHERE n = $n GROUP BY measure ORDER BY measure DESC"
        q "SELECT format('  four levels / one level      %s (expected within 1.2)',
                         round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'four levels')::numeric
                               / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'one level')::numeric, 2))"
        q "SELECT format('  national / one level         %s',
                         round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'national')::numeric
                               / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'one level')::numeric, 2))"
        echo "  cross-check: $diff rows of the chain copies differ from one level's"
    } | tee "$BENCH_OUT/hierarchy-$n.txt"
done
exit "$status"
