#!/usr/bin/env bash
# bench/groups.sh: participant groups against participants (docs/reference.md,
# Participant groups), on bench/generate.sql's data.
#
#   bench/groups.sh          # 1M transactions, 1,000 participants
#   make bench               # runs it after bench/run.sh
#
# In a throwaway cluster with bench/run.sh's settings (bench/lib.sh): the
# generated data, then the 1,000 participants made members of 100 groups of
# ten (retailer_0001 .. _1000 in chain_00 .. chain_99, all season), and the
# 60 generated offers copied with "aggregation": "group" beside the
# originals.  BENCH_RUNS interleaved rounds of
#   participant  SELECT count(*), sum(incentive_amount) FROM
#                incentive_calculate(offer_keys => the 60 originals)
#   group        the same with the 60 copies aggregated by group
#   lone call    incentive_calculate(P, offer_keys => the originals) for 100
#                participants, each timed
#   member call  incentive_calculate(P, offer_keys => the copies) for the
#                same 100: each reads and calculates its group of ten
# and the medians: group / participant (expected within 1.5x), member call
# / lone call (within 15x for a group of ten).  Cross-check: the group
# case's rows, summed per participant, equal the sum of every member's own
# call (0 differences required: exit status 1 otherwise).
set -euo pipefail

: "${BENCH_WORK_MEM:=4MB}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCH_CLUSTER_OPTS=(-c "-p $("$root/mk/free_port.sh")" -o "temp_buffers=64MB")
bench_cluster "$here/groups.sh" "$@"

bench_database incentives_bench_groups
"${PSQL[@]}" -c "CREATE EXTENSION pg_prewarm"
"${PSQL[@]}" -f bench/bench.sql

"${PSQL[@]}" <<'SQL'
CREATE TABLE IF NOT EXISTS bench.group_calls (n bigint, measure text, run int, ms numeric);
-- bench.time_group_calls: incentive_calculate of 100 participants (every
-- 10th, so one per group) with the offers given, each call timed
CREATE OR REPLACE FUNCTION bench.time_group_calls(p_n bigint, p_measure text, p_run int, p_offers text[])
RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
    p record;
    t0 timestamptz;
    c bigint;
    s numeric;
    total numeric := 0;
    ms numeric;
BEGIN
    FOR p IN SELECT participant_key FROM bench.participants
              WHERE substr(participant_key, 10)::int % 10 = 1 ORDER BY participant_key
    LOOP
        t0 := clock_timestamp();
        SELECT count(*), sum(incentive_amount) INTO c, s
          FROM incentives.incentive_calculate(p.participant_key, offer_keys => p_offers);
        ms := round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 3);
        INSERT INTO bench.group_calls VALUES (p_n, p_measure, p_run, ms);
        total := total + ms;
    END LOOP;
    RETURN total;
END
$$;
SQL

status=0
for n in $BENCH_N; do
    log "N=$n: generating (seed $BENCH_SEED), 100 groups of ten, the offers aggregated by group"
    "${PSQL[@]}" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
    "${PSQL[@]}" <<'SQL'
SET client_min_messages = warning;
TRUNCATE incentives.participant_groups;
INSERT INTO incentives.participant_groups
SELECT participant_key, format('chain_%s', lpad((substr(participant_key, 10)::int % 100)::text, 2, '0')),
       date '2025-01-01', NULL
  FROM bench.participants;
INSERT INTO incentives.offers (document)
SELECT document || jsonb_build_object('offer_key', offer_key || '.group', 'aggregation', 'group')
  FROM incentives.offers;
SQL
    "${PSQL[@]}" -c "VACUUM ANALYZE"
    for _ in $(seq 30); do
        [ "$(q "SELECT relallvisible < relpages FROM pg_class WHERE oid = 'incentives.transactions'::regclass")" = t ] || break
        sleep 1
        "${PSQL[@]}" -c "VACUUM incentives.transactions"
    done
    q "SELECT pg_prewarm('incentives.transactions'), pg_prewarm('incentives.transactions_participant_idx')" >/dev/null
    q "DELETE FROM bench.results WHERE n = $n; DELETE FROM bench.group_calls WHERE n = $n" >/dev/null
    by_participant="(SELECT array_agg(offer_key) FROM incentives.programs WHERE aggregation = 'participant')"
    by_group="(SELECT array_agg(offer_key) FROM incentives.programs WHERE aggregation = 'group')"
    for run in $(seq "$BENCH_RUNS"); do
        log "N=$n: round $run"
        for m in participant group; do
            offers=$([ $m = participant ] && echo "$by_participant" || echo "$by_group")
            ms=$(q "SELECT bench.measure($n, '$m', $run, \$q\$SELECT count(*), sum(incentive_amount)
                      FROM incentives.incentive_calculate(offer_keys => $offers)\$q\$)")
            log "  $m run $run: $ms ms"
        done
        ms=$(q "SELECT bench.time_group_calls($n, 'lone call', $run, $by_participant)")
        log "  100 lone calls run $run: $ms ms"
        ms=$(q "SELECT bench.time_group_calls($n, 'member call', $run, $by_group)")
        log "  100 member calls run $run: $ms ms"
    done

    log "N=$n: cross-check (every member's own call against the whole calculation)"
    diff=$(q "SELECT count(*) FROM (
                (SELECT participant_key, sum(incentive_amount) AS s, count(*) AS c
                   FROM incentives.incentive_calculate(offer_keys => $by_group) GROUP BY 1
                 EXCEPT
                 SELECT p.participant_key, sum(e.incentive_amount), count(*)
                   FROM bench.participants p,
                        LATERAL incentives.incentive_calculate(p.participant_key, offer_keys => $by_group) e
                  GROUP BY 1)
                UNION ALL
                (SELECT p.participant_key, sum(e.incentive_amount), count(*)
                   FROM bench.participants p,
                        LATERAL incentives.incentive_calculate(p.participant_key, offer_keys => $by_group) e
                  GROUP BY 1
                 EXCEPT
                 SELECT participant_key, sum(incentive_amount) AS s, count(*) AS c
                   FROM incentives.incentive_calculate(offer_keys => $by_group) GROUP BY 1)) d")
    [ "$diff" = 0 ] || status=1

    {
        echo "participant groups, N=$n, $BENCH_RUNS rounds, medians (bench/groups.sh):"
        q "SELECT format('  %-28s %10s ms  %10s rows  total %s', measure,
                         to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM9999990.0'),
                         max(rows_out), max(total))
             FROM bench.results WHERE n = $n GROUP BY measure ORDER BY measure DESC"
        q "SELECT format('  group / participant          %s (expected within 1.5)',
                         round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'group')::numeric
                               / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.results WHERE n = $n AND measure = 'participant')::numeric, 2))"
        q "SELECT format('  %-28s p50 %8s ms  p99 %8s ms  (%s calls)', measure,
                         to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM99990.000'),
                         to_char(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 'FM99990.000'), count(*))
             FROM bench.group_calls WHERE n = $n GROUP BY measure ORDER BY measure"
        q "SELECT format('  member call / lone call      %s (expected within 15 for a group of ten)',
                         round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.group_calls WHERE n = $n AND measure = 'member call')::numeric
                               / (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) FROM bench.group_calls WHERE n = $n AND measure = 'lone call')::numeric, 2))"
        echo "  cross-check: $diff participants whose own call differs from the whole calculation"
    } | tee "$BENCH_OUT/groups-$n.txt"
done
exit "$status"
