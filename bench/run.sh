#!/usr/bin/env bash
# bench/run.sh: the benchmark of incentives.incentive_calculate.
#
#   bench/run.sh                          # 1M transactions (2-3 minutes)
#   BENCH_N="1000000 10000000" bench/run.sh  # and 10M (about 16 minutes)
#   make bench                            # builds, installs, runs this
#
# In a throwaway cluster (pg_virtualenv -t; set BENCH_USE_CURRENT=1 to use
# the cluster the PG* variables point at instead), for each N: generate the
# data (bench/generate.sql), VACUUM ANALYZE, prewarm, then BENCH_RUNS
# interleaved rounds of
#   scan       SELECT count(*), sum(amount) + sum(quantity) FROM incentives.transactions
#   scan, 2 workers  the same with max_parallel_workers_per_gather = 2 (the
#              server's default; for reference, not for the ratios)
#   engine     SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate()
#   reference  the same through bench/reference.sql's set-based SQL
#   calls      one incentive_calculate(participant) call per participant
#              (1,000), each its own statement, timed one by one
#              (bench.time_calls): total, p50 and p99
#   refresh, jobs J  CALL incentives.refresh_earnings(jobs => J), replacing
#              every earning row, for J = 1 .. the machine's cores
#              (BENCH_JOBS), each its own session
# and report medians.  Then the engine once more in a fresh session for its
# peak memory (RssAnon sampled every 20 ms, and VmHWM), and the cross-checks:
# engine and reference, and the engine with and without the arithmetic's
# fast path (0 differences required: exit status 1 otherwise).
#
# Settings (environment):
#   BENCH_N             data set sizes (default 1000000)
#   BENCH_RUNS          interleaved rounds (default 3)
#   BENCH_SEED          generator seed (default 42)
#   BENCH_LOOP_BUDGET   seconds the calls may take per N over all rounds
#                       (default 240; 0 = no limit).  When 1,000 calls x
#                       BENCH_RUNS would not fit, each round calls every
#                       k-th participant and the time is scaled to 1,000
#                       calls, shown as "calls (est.)".
#   BENCH_ROWCHECK_MAX  row-level cross-check up to this N (default 1000000;
#                       the per (offer, participant) check always runs)
#   BENCH_PERF          1: perf record the engine's backend during the memory
#                       run (flat profile), dwarf: with call graphs (inclusive
#                       %); report in bench/out/perf-N.txt
#   BENCH_SHARED_BUFFERS, BENCH_WORK_MEM, BENCH_MAINTENANCE_WORK_MEM
#                       (default 128MB, 4MB, 64MB: as the server ships them,
#                       so temporary files are part of the figures)
# Output: the tables on stdout and in bench/out/.
set -euo pipefail

: "${BENCH_LOOP_BUDGET:=240}"
: "${BENCH_ROWCHECK_MAX:=1000000}"
: "${BENCH_PERF:=0}"
: "${BENCH_WORK_MEM:=4MB}"
: "${BENCH_JOBS:=$(nproc)}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The cluster: bench/lib.sh's settings, and its own port; the bench's
# temp tables in memory.
BENCH_CLUSTER_OPTS=(-c "-p $("$root/mk/free_port.sh")" -o "temp_buffers=64MB")
bench_cluster "$here/run.sh" "$@"

bench_database incentives_bench
"${PSQL[@]}" -c "CREATE EXTENSION pg_prewarm"
"${PSQL[@]}" -f bench/bench.sql
"${PSQL[@]}" -f bench/reference.sql

server=$(q "SELECT current_setting('server_version')")
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || echo unknown)
settings=$(bench_settings)
{
    echo "incentives benchmark  $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "PostgreSQL $server; $(nproc) cores ($cpu); $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM"
    echo "settings: $settings"
    echo "runs: $BENCH_RUNS interleaved, medians; seed $BENCH_SEED; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$BENCH_OUT/header.txt"

SCAN_SQL='SELECT count(*), sum(amount) + sum(quantity) FROM incentives.transactions'
ENGINE_SQL='SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate()'
REFERENCE_SQL='SELECT count(*), sum(incentive_amount) FROM bench.reference_calculate()'

# measure N NAME RUN SQL [SCALE]: time one query in a fresh session, record it
measure() {
    local ms
    ms=$(q "SELECT bench.measure($1, '$2', $3, \$q\$$4\$q\$, ${5:-1})")
    log "  $2 run $3: ${ms} ms${5:+ (x$5)}"
    echo "$ms"
}

# measure_parallel N RUN: the scan with 2 parallel workers (the server's
# default), recorded as "scan, 2 workers"
measure_parallel() {
    local ms
    ms=$("${PSQL[@]}" -At -c "SET max_parallel_workers_per_gather = 2" \
        -c "SELECT bench.measure($1, 'scan, 2 workers', $2, \$q\$$SCAN_SQL\$q\$)")
    log "  scan, 2 workers run $2: ${ms} ms"
}

# measure_refresh N RUN JOBS: CALL refresh_earnings(jobs => JOBS) in a
# fresh session, recorded as "refresh, jobs JOBS" with the backend's CPU
# time (its parallel workers' not included) and the rows it wrote
measure_refresh() {
    local res
    res=$("${PSQL[@]}" -At -c "SELECT bench.cpu_ns() || ' ' || extract(epoch FROM clock_timestamp())" \
          -c "CALL incentives.refresh_earnings(jobs => $3)" \
          -c "SELECT bench.cpu_ns() || ' ' || extract(epoch FROM clock_timestamp())")
    q "INSERT INTO bench.results (n, measure, run, ms, scale, rows_out, total, cpu_ms)
       SELECT $1, 'refresh, jobs $3', $2, round((t1 - t0) * 1000, 1), 1, r.rows, r.total_incentive,
              round((c1 - c0) / 1e6, 1)
         FROM (VALUES (split_part('$(head -n 1 <<<"$res")', ' ', 1)::numeric,
                       split_part('$(head -n 1 <<<"$res")', ' ', 2)::numeric,
                       split_part('$(tail -n 1 <<<"$res")', ' ', 1)::numeric,
                       split_part('$(tail -n 1 <<<"$res")', ' ', 2)::numeric)) AS v(c0, t0, c1, t1),
              LATERAL (SELECT rows, total_incentive FROM incentives.calculation_runs
                        ORDER BY run_id DESC LIMIT 1) AS r" >/dev/null
    log "  refresh, jobs $3 run $2: $(q "SELECT ms FROM bench.results WHERE n = $1 AND run = $2 AND measure = 'refresh, jobs $3'") ms"
}

# time_calls N RUN STEP SCALE: the per-participant calls, each timed
# (bench.time_calls); the total goes to bench.results as "calls"
time_calls() {
    local res ms rows cpu
    res=$(q "SELECT total_ms || '|' || total_rows || '|' || coalesce(cpu_ms::text, 'NULL')
               FROM bench.time_calls($1, $2, $3)")
    IFS='|' read -r ms rows cpu <<<"$res"
    q "INSERT INTO bench.results (n, measure, run, ms, scale, rows_out, cpu_ms)
       VALUES ($1, 'calls', $2, $ms, $4, $rows, $cpu)" >/dev/null
    log "  calls run $2: ${ms} ms${4:+ (x$4)}"
}

# memory N: the engine once in a fresh session; peak RssAnon by sampling,
# VmHWM at the end; with BENCH_PERF=1 also perf record -g of the backend.
memory() {
    local n=$1 pidfile out pid peak=0 cur bg perfpid=""
    pidfile=$(mktemp) out=$(mktemp)
    "${PSQL[@]}" -At >"$out" <<SQL &
\o $pidfile
SELECT pg_backend_pid();
\o
SELECT pg_sleep(0.5);
$ENGINE_SQL;
SELECT substring(pg_read_file('/proc/self/status') from 'VmHWM:\s*(\d+) kB');
SQL
    bg=$!
    for _ in $(seq 100); do [ -s "$pidfile" ] && break; sleep 0.05; done
    pid=$(tr -d '[:space:]' <"$pidfile")
    if [ "$BENCH_PERF" != 0 ] && command -v perf >/dev/null; then
        if [ "$BENCH_PERF" = dwarf ]; then
            perf_opts=(-F 499 --call-graph dwarf,16384)
        else
            perf_opts=(-F 999)
        fi
        perf record -q "${perf_opts[@]}" -p "$pid" -o "$BENCH_OUT/perf-$n.data" >/dev/null 2>&1 &
        perfpid=$!
    fi
    while kill -0 "$bg" 2>/dev/null; do
        cur=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        if [ -n "$cur" ] && [ "$cur" -gt "$peak" ]; then peak=$cur; fi
        sleep 0.02
    done
    wait "$bg"
    if [ -n "$perfpid" ]; then
        kill -INT "$perfpid" 2>/dev/null || true
        wait "$perfpid" || true
        local children=--no-children
        if [ "$BENCH_PERF" = dwarf ]; then children=--children; fi
        {
            echo "# perf, engine backend, N=$n ($BENCH_PERF): % of samples by shared object, then by symbol"
            perf report -i "$BENCH_OUT/perf-$n.data" --no-children --stdio --sort dso -g none 2>/dev/null \
                | grep -E '^ +[0-9]' | head -8
            perf report -i "$BENCH_OUT/perf-$n.data" "$children" --stdio --sort dso,symbol -g none 2>/dev/null \
                | grep -E '^ +[0-9]' | head -80
        } >"$BENCH_OUT/perf-$n.txt" || true
        log "  perf: $BENCH_OUT/perf-$n.txt"
    fi
    MEM_RSSANON_MB=$(awk -v k="$peak" 'BEGIN {printf "%.1f", k / 1024}')
    MEM_HWM_MB=$(awk -v k="$(tail -n 1 "$out")" 'BEGIN {printf "%.1f", k / 1024}')
    rm -f "$pidfile" "$out"
}

status=0
summary=()
for n in $BENCH_N; do
    log "N=$n: generating (seed $BENCH_SEED)"
    t0=$(date +%s.%N)
    "${PSQL[@]}" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
    "${PSQL[@]}" -c "VACUUM ANALYZE"
    # one-participant calls read the covering participant index without
    # visiting the heap only where VACUUM marked the pages all-visible
    # (an autovacuum ANALYZE that started during the load holds the horizon
    # back for a while: try again until the pages are all-visible)
    for _ in $(seq 30); do
        [ "$(q "SELECT relallvisible < relpages FROM pg_class WHERE oid = 'incentives.transactions'::regclass")" = t ] || break
        sleep 1
        "${PSQL[@]}" -c "VACUUM incentives.transactions"
    done
    log "N=$n: $(q "SELECT relallvisible || ' of ' || relpages || ' pages all-visible' FROM pg_class WHERE oid = 'incentives.transactions'::regclass")"
    q "SELECT pg_prewarm('incentives.transactions'), pg_prewarm('incentives.transactions_pkey'),
              pg_prewarm('incentives.transactions_participant_idx')" >/dev/null
    t1=$(date +%s.%N)
    size=$(q "SELECT pg_size_pretty(pg_table_size('incentives.transactions'))
                     || ' + indexes ' || pg_size_pretty(pg_indexes_size('incentives.transactions'))")
    log "N=$n: loaded in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.0f", b - a}') s ($size)"
    q "DELETE FROM bench.results WHERE n = $n" >/dev/null

    # the calls: how many participants fit the budget?
    nparticipants=$(q "SELECT count(*) FROM bench.participants")
    probe_ms=$(q "SELECT bench.measure(-1, 'probe', 0, bench.loop_sql(10))")
    q "DELETE FROM bench.results WHERE n = -1" >/dev/null
    q "DELETE FROM bench.calls WHERE n = $n" >/dev/null
    projected=$(awk -v ms="$probe_ms" -v p="$nparticipants" 'BEGIN {printf "%.1f", ms / 10 * p / 1000}')
    step=1
    if [ "$BENCH_LOOP_BUDGET" != 0 ]; then
        step=$(awk -v proj="$projected" -v r="$BENCH_RUNS" -v b="$BENCH_LOOP_BUDGET" \
            'BEGIN {s = proj * r / b; s = (s <= 1) ? 1 : int(s) + (s > int(s)); if (s > 50) s = 50; print s}')
    fi
    loop_scale=$(awk -v p="$nparticipants" -v s="$step" 'BEGIN {printf "%.6f", p / int(p / s)}')
    log "N=$n: calls projected ${projected} s per 1,000; calling every ${step}. participant"

    for run in $(seq "$BENCH_RUNS"); do
        log "N=$n: round $run"
        measure "$n" scan "$run" "$SCAN_SQL" >/dev/null
        measure_parallel "$n" "$run"
        measure "$n" engine "$run" "$ENGINE_SQL" >/dev/null
        measure "$n" reference "$run" "$REFERENCE_SQL" >/dev/null
        time_calls "$n" "$run" "$step" "$loop_scale"
        for jobs in $(seq "$BENCH_JOBS"); do
            measure_refresh "$n" "$run" "$jobs"
        done
    done

    log "N=$n: engine memory"
    memory "$n"

    rows=false
    if [ "$n" -le "$BENCH_ROWCHECK_MAX" ]; then rows=true; fi
    log "N=$n: cross-check (rows: $rows)"
    cc=$(q "SELECT concat_ws('|', pairs, pair_mismatches, engine_rows, reference_rows, engine_total,
                              reference_total, coalesce(rows_only_engine::text, 'not run'),
                              coalesce(rows_only_reference::text, 'not run'),
                              coalesce(fast_exact_differences::text, 'not run'))
              FROM bench.crosscheck_all($rows)")
    IFS='|' read -r cc_pairs cc_mism cc_erows cc_rrows cc_etot cc_rtot cc_oe cc_or cc_fx <<<"$cc"
    if [ "$cc_mism" != 0 ] || { [ "$rows" = true ] && { [ "$cc_oe" != 0 ] || [ "$cc_or" != 0 ] || [ "$cc_fx" != 0 ]; }; }; then
        status=1
    fi
    calls=$(q "SELECT concat_ws('|', count(*),
                              to_char(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), 'FM999990.00'),
                              to_char(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms), 'FM999990.00'),
                              to_char(max(ms), 'FM999990.00'))
                 FROM bench.calls WHERE n = $n")
    IFS='|' read -r calls_n calls_p50 calls_p99 calls_max <<<"$calls"

    {
        echo
        echo "N = $n transactions ($size); calls: 1,000 incentive_calculate(participant) calls, one statement each$([ "$step" != 1 ] && echo ", every ${step}. participant timed, scaled to 1,000")"
        "${PSQL[@]}" -c "SELECT measure, runs, median_s, min_s, max_s, cpu_s AS \"cpu_s (median)\",
                                txn_per_s AS \"txn/s\", rows_out, rows_out_per_s AS \"rows_out/s\"
                           FROM bench.report($n)"
        echo "per call: p50 ${calls_p50} ms, p99 ${calls_p99} ms, max ${calls_max} ms ($calls_n calls timed one by one over $BENCH_RUNS rounds)"
        echo "engine peak memory: RssAnon ${MEM_RSSANON_MB} MB (sampled every 20 ms), VmHWM ${MEM_HWM_MB} MB (includes shared buffers touched)"
        echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the timings)"
        echo "cross-check: $cc_pairs (offer, participant) pairs, $cc_mism mismatches; rows engine $cc_erows, reference $cc_rrows; totals engine $cc_etot, reference $cc_rtot; rows only in engine $cc_oe, only in reference $cc_or"
        echo "fast path and exact arithmetic (incentives.exact_only): $cc_fx rows differ"
        q "SELECT format('refresh, jobs 1 / engine: %s', to_char(bench.median_s($n, 'refresh, jobs 1') / bench.median_s($n, 'engine'), 'FM999990.00'))"
        for jobs in $(seq 2 "$BENCH_JOBS"); do
            q "SELECT format('refresh jobs => %s / jobs => 1: %s (%s s against %s s)', $jobs,
                             to_char(bench.median_s($n, 'refresh, jobs $jobs') / bench.median_s($n, 'refresh, jobs 1'), 'FM999990.00'),
                             to_char(bench.median_s($n, 'refresh, jobs $jobs'), 'FM99990.00'),
                             to_char(bench.median_s($n, 'refresh, jobs 1'), 'FM99990.00'))"
        done
        q "SELECT format('N=%s engine/scan=%s (cpu %s) reference/engine=%s calls=%s s p50=%s ms p99=%s ms engine rows/s=%s',
                         $n,
                         to_char(bench.median_s($n, 'engine') / bench.median_s($n, 'scan'), 'FM999990.00'),
                         coalesce(to_char(bench.median_s($n, 'engine', cpu => true) / nullif(bench.median_s($n, 'scan', cpu => true), 0), 'FM999990.00'), '-'),
                         to_char(bench.median_s($n, 'reference') / bench.median_s($n, 'engine'), 'FM999990.00'),
                         to_char(bench.median_s($n, 'calls'), 'FM999990.000'),
                         '$calls_p50', '$calls_p99',
                         to_char(max(rows_out) / bench.median_s($n, 'engine'), 'FM999999999'))
             FROM bench.results WHERE n = $n AND measure = 'engine'"
    } | tee "$BENCH_OUT/results-$n.txt"
    summary+=("$(tail -n 1 "$BENCH_OUT/results-$n.txt")")
done

echo
printf '%s\n' "${summary[@]}" | tee "$BENCH_OUT/summary.txt"
set -- $BENCH_N
if [ $# -gt 1 ]; then
    q "SELECT format('engine time N=%s / N=%s: %s, by CPU time %s (target <= %s)', b.n, a.n,
                     to_char(bench.median_s(b.n, 'engine') / bench.median_s(a.n, 'engine'), 'FM99990.00'),
                     coalesce(to_char(bench.median_s(b.n, 'engine', cpu => true) / nullif(bench.median_s(a.n, 'engine', cpu => true), 0), 'FM99990.00'), '-'),
                     round(b.n::numeric / a.n * 1.05, 1))
         FROM (SELECT $1::bigint AS n) a, (SELECT ${!#}::bigint AS n) b" | tee -a "$BENCH_OUT/summary.txt"
fi
if [ "$status" != 0 ]; then
    echo "cross-check FAILED: the engine and the reference disagree" >&2
fi
exit "$status"
