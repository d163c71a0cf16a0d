#!/usr/bin/env bash
# bench/lifecycle.sh: what the earnings lifecycle costs (docs/lifecycle.md).
#
#   bench/lifecycle.sh                              # 1M transactions (~5 minutes)
#   BENCH_N="1000000 10000000" bench/lifecycle.sh   # and 10M
#   make bench-lifecycle                            # builds, installs, runs this
#
# In a throwaway cluster (pg_virtualenv -t, the settings of bench/run.sh;
# BENCH_USE_CURRENT=1 uses the cluster the PG* variables name), for each N:
# bench/generate.sql's data set, then BENCH_RUNS interleaved rounds of
#
#   scan           SELECT count(*), sum(amount) + sum(quantity) FROM incentives.transactions
#                  (the floor, as in bench/run.sh)
#   calculate      SELECT count(*), sum(incentive_amount) FROM incentive_calculate()
#   ctas           CREATE TABLE ... AS SELECT * FROM incentive_calculate() (what
#                  writing the rows through SQL costs; the table is dropped)
#   ctas_indexed   the same, then the two indexes a refresh builds (the primary
#                  key and the offer index): what PostgreSQL itself takes to
#                  write and index these rows, the floor under a refresh
#   refresh        CALL refresh_earnings() replacing the previous earnings
#                  (the first refresh, into an empty table, is reported apart)
#   refresh_jobs_J CALL refresh_earnings(jobs => J) for J = 2 .. the cores of
#                  the machine (BENCH_JOBS: the largest J)
#   refresh_in_place  the same refresh with incentives.full_refresh = in_place,
#                  nothing moved since the last (docs/operations.md)
#   in_place_moved, swap_moved  a refresh in place after every transaction's
#                  amount went up a cent, and a swap after it went back
#   load           INSERT INTO incentives.transactions SELECT * FROM a copy
#   load_untracked the same with the change-tracking triggers disabled
#   changed_only   CALL refresh_earnings(changed_only => true) after one
#                  transaction of each of 1% of the participants changed
#   full_after     CALL refresh_earnings() after the same kind of change
#   live_everyone  CALL refresh_earnings(changed_only => true) after a SKU's
#                  label changed: every row rewritten in place
#
# then settlement (settle N): CALL incentives.settle(date) for everyone over
# the N transactions, keeping the rows each line sums
# (incentives.statement_kept_rows), against the same settle without them:
# 0.4.0's, which keeps none (CREATE EXTENSION incentives VERSION '0.4.0' in
# a second database with the same data and the same C library; the same
# calculation, the same lines).  Both sides in databases of their own with
# bench/generate.sql's data, BENCH_RUNS interleaved samples each (the order
# alternating), each writing a full statement (the second and later settle
# every line again, amount_due 0, on both sides); the lines of the two
# sides must be equal (exit status 1 otherwise).  Then, after 1% more
# transactions and 1% of the participants' amounts changed, a second
# statement, and SELECT * FROM incentives.statement_line_changes for the
# line of the participant and offer with the most kept rows (EXPLAIN
# ANALYZE's execution time, median of 5);
#
# then the live job (pg_cron): the cost of an idle changed_only call (1,000
# in one session), the writers' insert rate (pgbench, BENCH_LIVE_CLIENTS
# clients, with bench/load/insert.sql) without and with the recipe's job,
# in alternating windows of BENCH_LIVE_SECONDS in all for each, and insert
# -> visible in incentives.earnings (p50, p99) over BENCH_LIVE_INSERTS
# inserts, one a second, with the job at its shortest interval;
#
# and reports medians (wall time, and the backend's CPU time): refresh /
# calculate (target <= 2.5), settle kept / without (target <= 1.5), the
# line's changes (target <= 50 ms), jobs => J /
# jobs => 1 (target for 2 jobs <= 0.65), the tracking
# overhead of a bulk load ((load - load_untracked) / load_untracked,
# target <= 30%), and the changed-only speed-up (full_after / changed_only);
# with several N, the growth of the calculation and of each refresh from the
# smallest N to the largest (target <= 1.05 x the growth of N).
# After the rounds the materialized earnings must equal a fresh calculation
# row for row (exit status 1 otherwise).
#
# Settings (environment): BENCH_N (1000000), BENCH_RUNS (3), BENCH_SEED (42),
# BENCH_CHANGED_PCT (1), BENCH_LOADS (1; 0 leaves the bulk loads out),
# BENCH_PARTS ("rounds live settle": the parts to run; "settle" alone
# measures settlement only), BENCH_SETTLE_DATE (2026-10-31),
# BENCH_LIVE_CLIENTS (4), BENCH_LIVE_SECONDS (60), BENCH_LIVE_INSERTS (100),
# BENCH_JOBS (the cores: nproc),
# BENCH_SHARED_BUFFERS (128MB), BENCH_WORK_MEM (4MB),
# BENCH_MAINTENANCE_WORK_MEM (64MB): PostgreSQL's defaults,
# BENCH_OUT (bench/out).  Output: the table on stdout and in
# bench/out/lifecycle-N.txt.
set -euo pipefail

: "${BENCH_CHANGED_PCT:=1}"
: "${BENCH_LOADS:=1}"
: "${BENCH_PARTS:=rounds live settle}"
: "${BENCH_SETTLE_DATE:=2026-10-31}"
: "${BENCH_JOBS:=$(nproc)}"
: "${BENCH_WORK_MEM:=4MB}"
: "${BENCH_LIVE_CLIENTS:=4}"
: "${BENCH_LIVE_SECONDS:=60}"
: "${BENCH_LIVE_INSERTS:=100}"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BENCH_CLUSTER_OPTS=(-c "-p $("$root/mk/free_port.sh")"
                    -o shared_preload_libraries=pg_cron -o cron.database_name=incentives_lifecycle_bench
                    -o cron.use_background_workers=on)
bench_cluster "$here/lifecycle.sh" "$@"
bench_database incentives_lifecycle_bench
echo "settings: $(bench_settings)" | tee "$BENCH_OUT/lifecycle-settings.txt"

# ms SQL...: the wall time of the statements, in a fresh session, and the
# CPU time of its backend over them (Linux /proc/self/schedstat; parallel
# workers not included), both in ms: "wall cpu".  CPU time moves less with
# the other work on the machine than wall time.
CPU_NS="SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)"
ms() {
    local t0 t1 out
    t0=$(date +%s%N)
    out=$("${PSQL[@]}" -At -c "$CPU_NS" "$@" -c "$CPU_NS")
    t1=$(date +%s%N)
    echo "$(((t1 - t0) / 1000000)) $((($(tail -n 1 <<<"$out") - $(head -n 1 <<<"$out")) / 1000000))"
}

"${PSQL[@]}" <<'SQL'
CREATE SCHEMA IF NOT EXISTS lifecycle_bench;
CREATE TABLE lifecycle_bench.timings (n bigint, measure text, run int, ms bigint, cpu_ms bigint);
-- change: one transaction of each of pct% of the participants gets a new
-- amount (round r: a different amount), so changed_only has work to do
CREATE FUNCTION lifecycle_bench.change(pct numeric, r int) RETURNS bigint
LANGUAGE sql AS $$
    WITH picked AS (
        SELECT DISTINCT ON (t.participant_key) t.transaction_id
          FROM incentives.transactions t
         WHERE abs(hashtext(t.participant_key) % 1000) < pct * 10
         ORDER BY t.participant_key, t.transaction_id),
    u AS (UPDATE incentives.transactions t SET amount = t.amount + r
            FROM picked WHERE t.transaction_id = picked.transaction_id RETURNING 1)
    SELECT count(*) FROM u
$$;
SQL

# record N MEASURE RUN "WALL CPU"
record() {
    local wall=${4% *} cpu=${4#* }
    q "INSERT INTO lifecycle_bench.timings VALUES ($1, '$2', $3, $wall, $cpu)" >/dev/null
    log "  $2 run $3: $wall ms (backend CPU $cpu ms)"
}
# median N MEASURE [cpu_ms]
median() {
    q "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ${3:-ms}) FROM lifecycle_bench.timings WHERE n = $1 AND measure = '$2'"
}

# live N: the live job of docs/analyst-guide.md (Live earnings) on pg_cron:
# what an idle run costs, the writers' insert rate without the job and with
# the recipe's job, and how long a new transaction takes to show in
# incentives.earnings with the job at pg_cron's shortest interval ('1
# seconds' with pg_cron 1.5 and later, every minute with 1.4).  Prints its
# lines into $BENCH_OUT/lifecycle-live-N.txt.
live() {
    local n=$1 version schedule interval limit writers_schedule writers_limit window command job
    local calls=1000 i deadline poller left writers_from job_runs pairs order w tps tps_without tps_with
    q "CREATE EXTENSION IF NOT EXISTS pg_cron" >/dev/null
    version=$(q "SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'")
    # the writers run beside the job of docs/analyst-guide.md (every 5
    # seconds, 5 participants a run at most; every minute and 60 with 1.4);
    # the inserts are timed with the job at pg_cron's shortest interval,
    # as many participants a run at most as the interval has seconds
    if [ "$(q "SELECT (regexp_match('$version', '^(\d+)\.(\d+)'))::int[] >= '{1,5}'")" = t ]; then
        schedule='1 seconds' interval=1 limit=1 writers_schedule='5 seconds' writers_limit=5 window=10
    else
        schedule='* * * * *' interval=60 limit=60 writers_schedule='* * * * *' writers_limit=60 window=60
    fi
    "${PSQL[@]}" -c "CALL incentives.refresh_earnings(changed_only => true)" -c "VACUUM ANALYZE"

    log "N=$n: live: $calls idle changed_only calls"
    for i in $(seq "$calls"); do echo "CALL incentives.refresh_earnings(changed_only => true);"; done >"$BENCH_OUT/idle.sql"
    record "$n" live_idle_x1000 1 "$(ms -f "$BENCH_OUT/idle.sql")"

    # The writers' rate with and without the job, in windows of $window
    # seconds (two of the job's runs; one with pg_cron 1.4), by pairs in the
    # order without-with, with-without, ... until each has
    # BENCH_LIVE_SECONDS: one window's rate moves by a fifth with the
    # disk's flushes and checkpoints, and the order cancels a drift.
    command="SET incentives.changed_only_limit = $writers_limit; CALL incentives.refresh_earnings(changed_only => true)"
    pairs=$(( (BENCH_LIVE_SECONDS + window - 1) / window ))
    [ "$pairs" -ge 2 ] || pairs=2
    log "N=$n: live: writers ($BENCH_LIVE_CLIENTS clients), $pairs windows of $window s without and $pairs beside the job (pg_cron $version, every '$writers_schedule', changed_only_limit $writers_limit)"
    "${PSQL[@]}" -c "CALL incentives.refresh_earnings(changed_only => true)" -c "VACUUM ANALYZE incentives.transactions"
    writers_from=$(q "SELECT clock_timestamp()")
    : >"$BENCH_OUT/live-writers-$n.txt"
    for i in $(seq "$pairs"); do
        if [ $((i % 2)) = 1 ]; then order="without with"; else order="with without"; fi
        for w in $order; do
            if [ "$w" = with ]; then
                # scheduled, and the window starts with its first run (pg_cron
                # takes up to an interval to start it): the job's whole load
                job=$(q "SELECT cron.schedule('incentives-live', '$writers_schedule', \$\$$command\$\$)")
                deadline=$((SECONDS + 2 * window + 30))
                while [ "$(q "SELECT count(*) FROM cron.job_run_details WHERE jobid = $job")" = 0 ] \
                      && [ "$SECONDS" -lt "$deadline" ]; do
                    sleep 0.1
                done
            fi
            tps=$(pgbench -n -c "$BENCH_LIVE_CLIENTS" -j 2 -T "$window" -D participants="$participants" \
                      -f bench/load/insert.sql | awk '/^tps/ { print $3; exit }')
            if [ "$w" = with ]; then
                # unscheduled, and its run finished before the next window
                q "SELECT cron.unschedule($job)" >/dev/null
                while [ "$(q "SELECT count(*) FROM pg_stat_activity
                               WHERE pid <> pg_backend_pid() AND state = 'active' AND query = \$\$$command\$\$")" != 0 ]; do
                    sleep 0.1
                done
            fi
            echo "$w $tps" >>"$BENCH_OUT/live-writers-$n.txt"
        done
    done
    tps_without=$(awk '$1 == "without" { s += $2; c++ } END { print s / c }' "$BENCH_OUT/live-writers-$n.txt")
    tps_with=$(awk '$1 == "with" { s += $2; c++ } END { print s / c }' "$BENCH_OUT/live-writers-$n.txt")
    # what the writers left for the job, then caught up at once (the job
    # would take it $writers_limit participants a run)
    left=$(q "SELECT count(DISTINCT participant_key) FROM incentives.earnings_changes")
    job_runs=$(q "SELECT format('%s runs of the job during the writers, %s participants each at most, %s s each at most',
                                count(*), max(participants), round(extract(epoch FROM max(finished_at - started_at)), 1))
                    FROM incentives.calculation_runs
                   WHERE changed_only AND started_at >= '$writers_from'")
    deadline=$((SECONDS + 1200))
    while [ "$(q "SELECT count(*) FROM incentives.earnings_changes")" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do
        "${PSQL[@]}" -c "CALL incentives.refresh_earnings(changed_only => true)" >/dev/null
        sleep 1
    done
    command="SET incentives.changed_only_limit = $limit; CALL incentives.refresh_earnings(changed_only => true)"
    job=$(q "SELECT cron.schedule('incentives-live', '$schedule', \$\$$command\$\$)")

    log "N=$n: live: $BENCH_LIVE_INSERTS inserts, one a second, each timed until it is in incentives.earnings"
    "${PSQL[@]}" -c "DROP TABLE IF EXISTS lifecycle_bench.live" \
        -c "CREATE TABLE lifecycle_bench.live (transaction_id text PRIMARY KEY, participant_key text,
                                               inserted_at timestamptz, seen_at timestamptz)"
    (
        while :; do
            q "UPDATE lifecycle_bench.live AS l SET seen_at = clock_timestamp()
                WHERE l.seen_at IS NULL
                  AND EXISTS (SELECT FROM incentives.earnings AS e
                               WHERE e.participant_key = l.participant_key AND e.transaction_id = l.transaction_id)" >/dev/null
            sleep 0.2
        done
    ) &
    poller=$!
    for i in $(seq "$BENCH_LIVE_INSERTS"); do
        # a copy of one of the participant's transactions that earn
        q "WITH p AS (SELECT 'retailer_' || lpad((($i * 37) % $participants + 1)::text, 4, '0') AS k),
           template AS (
               SELECT t.* FROM incentives.transactions AS t
                WHERE t.transaction_id = (SELECT e.transaction_id FROM incentives.earnings AS e, p
                                           WHERE e.participant_key = p.k LIMIT 1)),
           ins AS (
               INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                                    sku_key, quantity, uom_key, amount)
               SELECT 'live-$n-$i', participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount
                 FROM template
               RETURNING transaction_id, participant_key)
           INSERT INTO lifecycle_bench.live SELECT transaction_id, participant_key, clock_timestamp() FROM ins" >/dev/null
        sleep 1
    done
    deadline=$((SECONDS + 2 * interval + 120))
    while [ "$(q "SELECT count(*) FROM lifecycle_bench.live WHERE seen_at IS NULL")" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do
        sleep 1
    done
    kill "$poller" 2>/dev/null; wait "$poller" 2>/dev/null || true
    q "SELECT cron.unschedule($job)" >/dev/null
    {
        echo "live job: pg_cron $version; writers beside it every '$writers_schedule' (changed_only_limit $writers_limit), inserts timed with it every '$schedule' (changed_only_limit $limit)"
        awk -v t="$(median "$n" live_idle_x1000)" -v c="$calls" 'BEGIN {
            printf "idle changed_only refresh: %.2f ms a call (%d calls in one psql session, over a socket)\n", t / c, c
        }'
        awk -v a="$tps_without" -v b="$tps_with" -v c="$BENCH_LIVE_CLIENTS" -v p="$pairs" -v w="$window" 'BEGIN {
            printf "writers (pgbench, %d clients, bench/load/insert.sql, mean of %d windows of %d s each): %.0f inserts/s without the job, %.0f with it: %.0f%% (target >= 90%%)\n", c, p, w, a, b, b * 100 / a
        }'
        echo "the windows in order: $(tr '\n' ' ' <"$BENCH_OUT/live-writers-$n.txt")"
        echo "the job beside the writers: $job_runs; $left of $participants participants still logged when the writers stopped"
        q "SELECT format('insert -> visible in incentives.earnings, %s inserts: p50 %s s, p99 %s s, max %s s; %s never seen',
                         count(*),
                         round(extract(epoch FROM percentile_disc(0.5) WITHIN GROUP (ORDER BY seen_at - inserted_at)), 1),
                         round(extract(epoch FROM percentile_disc(0.99) WITHIN GROUP (ORDER BY seen_at - inserted_at)), 1),
                         round(extract(epoch FROM max(seen_at - inserted_at)), 1),
                         count(*) FILTER (WHERE seen_at IS NULL))
             FROM lifecycle_bench.live"
        q "SELECT format('live runs logged: %s (%s with every participant)', count(*), count(*) FILTER (WHERE participants >= $participants))
             FROM incentives.calculation_runs WHERE changed_only AND started_at > now() - interval '1 hour'"
    } >"$BENCH_OUT/lifecycle-live-$n.txt"
}

# part NAME: BENCH_PARTS names it
part() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }

# settle N: settle with the kept rows against 0.4.0's settle (none kept),
# and one line's changes after a second statement on changed data.
# Prints its lines into $BENCH_OUT/lifecycle-settle-N.txt; returns 1 when
# the two sides' lines differ.
settle_bench() {
    local n=$1 kept=incentives_settle_bench without=incentives_settle_bench_040 db run side order
    local lines_sql x y s2 pk ok kept_rows changes changes_ms i lines kept_mb p o c query
    for db in "$kept" "$without"; do
        PGDATABASE=postgres "${PSQL[@]}" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    done
    "${PSQL[@]}" -d "$kept" -c "CREATE EXTENSION incentives"
    "${PSQL[@]}" -d "$without" -c "CREATE EXTENSION incentives VERSION '0.4.0'"
    log "N=$n: settle: $kept (the current version) and $without (0.4.0): generating (seed $BENCH_SEED) in each"
    for db in "$kept" "$without"; do
        "${PSQL[@]}" -d "$db" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
        "${PSQL[@]}" -d "$db" -c "VACUUM ANALYZE"
    done
    x=$("${PSQL[@]}" -At -d "$kept" -c "SELECT count(*), sum(amount), sum(quantity) FROM incentives.transactions")
    y=$("${PSQL[@]}" -At -d "$without" -c "SELECT count(*), sum(amount), sum(quantity) FROM incentives.transactions")
    [ "$x" = "$y" ] || { log "settle: the two databases' transactions differ ($x against $y)"; return 1; }
    q "DELETE FROM lifecycle_bench.timings WHERE n = $n AND measure IN ('settle_kept', 'settle_without', 'line_changes')" >/dev/null

    # BENCH_RUNS samples a side, interleaved, the order alternating; each
    # writes a full statement (every line, the later ones with amount_due 0)
    for run in $(seq "$BENCH_RUNS"); do
        if [ $((run % 2)) = 1 ]; then order="kept without"; else order="without kept"; fi
        for side in $order; do
            if [ "$side" = kept ]; then db=$kept; else db=$without; fi
            "${PSQL[@]}" -d "$db" -c "CHECKPOINT"
            record "$n" "settle_$side" "$run" "$(ms -d "$db" -c "CALL incentives.settle('$BENCH_SETTLE_DATE')")"
        done
    done
    # the same lines on both sides, statement by statement
    lines_sql="SELECT s.statement_id, count(*), md5(string_agg(concat_ws(' ', l.participant_key, l.offer_key, l.earned_to_date,
                                                                     l.settled_before, l.amount_due),
                                                           ',' ORDER BY l.participant_key COLLATE \"C\", l.offer_key COLLATE \"C\"))
                 FROM incentives.statements AS s JOIN incentives.statement_lines AS l USING (statement_id)
                GROUP BY s.statement_id ORDER BY s.statement_id"
    x=$("${PSQL[@]}" -At -d "$kept" -c "$lines_sql")
    y=$("${PSQL[@]}" -At -d "$without" -c "$lines_sql")
    if [ "$x" = "$y" ]; then ok=yes; else ok=no; fi
    lines=$("${PSQL[@]}" -At -d "$kept" -c "SELECT count(*) FROM incentives.statement_lines WHERE statement_id = 1")
    kept_rows=$("${PSQL[@]}" -At -d "$kept" -c "SELECT sum(cardinality(transaction_ids)) FROM incentives.statement_kept_rows WHERE statement_id = 1")
    kept_mb=$("${PSQL[@]}" -At -d "$kept" -c "SELECT round(pg_total_relation_size('incentives.statement_kept_rows') / 1048576.0 / $BENCH_RUNS)")

    # a second statement after changed data: 1% more transactions (copies
    # of every 100th, dated within the statement), and one transaction of
    # each of 1% of the participants with a new amount
    log "N=$n: settle: changed data, a second statement, the changes of one line"
    "${PSQL[@]}" -d "$kept" <<SQL
INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                     sku_key, quantity, uom_key, amount)
SELECT 'late-' || t.transaction_id, t.participant_key, t.transaction_type, t.transaction_date,
       t.sku_key, t.quantity, t.uom_key, t.amount
  FROM incentives.transactions AS t
 WHERE abs(hashtext(t.transaction_id) % 100) = 0 AND t.transaction_date <= '$BENCH_SETTLE_DATE';
WITH picked AS (
    SELECT DISTINCT ON (t.participant_key) t.transaction_id
      FROM incentives.transactions AS t
     WHERE abs(hashtext(t.participant_key) % 100) = 0
     ORDER BY t.participant_key, t.transaction_id)
UPDATE incentives.transactions AS t SET amount = t.amount + 7
  FROM picked WHERE t.transaction_id = picked.transaction_id;
VACUUM ANALYZE incentives.transactions;
CALL incentives.settle('$BENCH_SETTLE_DATE');
ANALYZE;
CREATE SCHEMA IF NOT EXISTS lifecycle_bench;
CREATE OR REPLACE FUNCTION lifecycle_bench.explain_ms(query text, OUT ms numeric, OUT row_count bigint)
LANGUAGE plpgsql AS \$\$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) ' || query INTO plan;
    ms := (plan -> 0 ->> 'Execution Time')::numeric;
    row_count := (plan -> 0 -> 'Plan' ->> 'Actual Rows')::bigint;
END
\$\$;
SQL
    s2=$("${PSQL[@]}" -At -d "$kept" -c "SELECT max(statement_id) FROM incentives.statements")
    pk=$("${PSQL[@]}" -At -F ' ' -d "$kept" -c "SELECT participant_key, offer_key, count(*)
                                                  FROM incentives.statement_line_rows WHERE statement_id = $s2
                                                 GROUP BY participant_key, offer_key
                                                 ORDER BY count(*) DESC, participant_key, offer_key LIMIT 1")
    read -r p o c <<<"$pk"
    query="SELECT * FROM incentives.statement_line_changes WHERE statement_id = $s2 AND participant_key = '$p' AND offer_key = '$o'"
    : >"$BENCH_OUT/settle-changes-$n.txt"
    for i in 1 2 3 4 5; do
        "${PSQL[@]}" -At -F ' ' -d "$kept" -c "SELECT round(ms), row_count, ms FROM lifecycle_bench.explain_ms(\$q\$$query\$q\$)" \
            >>"$BENCH_OUT/settle-changes-$n.txt"
    done
    changes=$(awk 'NR == 1 { print $2 }' "$BENCH_OUT/settle-changes-$n.txt")
    changes_ms=$(awk '{ print $3 }' "$BENCH_OUT/settle-changes-$n.txt" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    {
        local k w km wm
        k=$(median "$n" settle_kept) w=$(median "$n" settle_without)
        km=$(q "SELECT min(ms) FROM lifecycle_bench.timings WHERE n = $n AND measure = 'settle_kept'")
        wm=$(q "SELECT min(ms) FROM lifecycle_bench.timings WHERE n = $n AND measure = 'settle_without'")
        echo "settle (everyone, $lines lines, $kept_rows earning rows kept, ~$kept_mb MB of statement_kept_rows a statement): $(
            awk -v k="$k" -v w="$w" -v km="$km" -v wm="$wm" -v kc="$(median "$n" settle_kept cpu_ms)" -v wc="$(median "$n" settle_without cpu_ms)" 'BEGIN {
                printf "kept / without (0.4.0): %.2f by medians (%.2f s against %.2f s), %.2f by minimums, %.2f by the backend'"'"'s CPU time (target <= 1.5)", k / w, k / 1000, w / 1000, km / wm, kc / wc }')"
        echo "settle: the lines of the two sides equal, statement by statement: $ok"
        echo "statement_line_changes of one line (statement $s2, $p, $o: $c rows kept, $changes changes), after 1% more transactions and 1% of the participants' amounts changed: $changes_ms ms (EXPLAIN ANALYZE execution time, median of 5; target <= 50 ms)"
        echo "the query: $query"
    } >"$BENCH_OUT/lifecycle-settle-$n.txt"
    for db in "$kept" "$without"; do
        PGDATABASE=postgres "${PSQL[@]}" -c "DROP DATABASE $db"
    done
    [ "$ok" = yes ]
}

status=0
for n in $BENCH_N; do
    q "DELETE FROM lifecycle_bench.timings WHERE n = $n" >/dev/null
    if part settle; then
        settle_bench "$n" || status=1
    fi
    if ! part rounds; then
        {
            echo "incentives lifecycle benchmark  $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $(q 'SHOW server_version'); $(nproc) cores; lc_collate $(q 'SHOW lc_collate')"
            echo "N = $n transactions; parts: $BENCH_PARTS; medians of $BENCH_RUNS samples (ms)"
            "${PSQL[@]}" -c "SELECT measure, count(*) AS runs,
                                    percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
                                    min(ms) AS min_ms, max(ms) AS max_ms,
                                    percentile_disc(0.5) WITHIN GROUP (ORDER BY cpu_ms) AS \"backend cpu_ms (median)\"
                               FROM lifecycle_bench.timings WHERE n = $n
                              GROUP BY measure ORDER BY min(run), measure"
            if part settle; then cat "$BENCH_OUT/lifecycle-settle-$n.txt"; fi
            echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the timings)"
        } | tee "$BENCH_OUT/lifecycle-$n.txt"
        continue
    fi

    log "N=$n: generating (seed $BENCH_SEED)"
    "${PSQL[@]}" -v n_transactions="$n" -v seed="$BENCH_SEED" -f bench/generate.sql >/dev/null
    "${PSQL[@]}" -c "DROP TABLE IF EXISTS lifecycle_bench.staged" \
        -c "CREATE TABLE lifecycle_bench.staged AS SELECT * FROM incentives.transactions" \
        -c "VACUUM ANALYZE"
    participants=$(q "SELECT count(DISTINCT participant_key) FROM incentives.transactions")

    log "N=$n: first refresh (empty earnings)"
    record "$n" refresh_first 1 "$(ms -c 'CALL incentives.refresh_earnings()')"
    rows=$(q "SELECT count(*) FROM incentives.earnings")

    for run in $(seq "$BENCH_RUNS"); do
        log "N=$n: round $run"
        record "$n" scan "$run" "$(ms -c 'SELECT count(*), sum(amount) + sum(quantity) FROM incentives.transactions')"
        record "$n" calculate "$run" "$(ms -c 'SELECT count(*), sum(incentive_amount) FROM incentives.incentive_calculate()')"
        record "$n" ctas "$run" "$(ms -c 'CREATE TABLE lifecycle_bench.ctas AS SELECT * FROM incentives.incentive_calculate()')"
        "${PSQL[@]}" -c "DROP TABLE lifecycle_bench.ctas"
        record "$n" ctas_indexed "$run" "$(ms -c 'CREATE TABLE lifecycle_bench.ctas AS SELECT * FROM incentives.incentive_calculate()' \
            -c 'ALTER TABLE lifecycle_bench.ctas ADD PRIMARY KEY (participant_key, offer_key, incentive_rate_key, transaction_id)' \
            -c 'CREATE INDEX ON lifecycle_bench.ctas (offer_key)')"
        "${PSQL[@]}" -c "DROP TABLE lifecycle_bench.ctas"
        record "$n" refresh "$run" "$(ms -c 'CALL incentives.refresh_earnings()')"
        for jobs in $(seq 2 "$BENCH_JOBS"); do
            record "$n" "refresh_jobs_$jobs" "$run" "$(ms -c "CALL incentives.refresh_earnings(jobs => $jobs)")"
        done
        record "$n" refresh_in_place "$run" "$(ms -c 'SET incentives.full_refresh = in_place' \
            -c 'CALL incentives.refresh_earnings()')"
        "${PSQL[@]}" -c "UPDATE incentives.transactions SET amount = amount + 0.01" \
            -c "VACUUM ANALYZE incentives.transactions"
        record "$n" in_place_moved "$run" "$(ms -c 'SET incentives.full_refresh = in_place' \
            -c 'CALL incentives.refresh_earnings()')"
        "${PSQL[@]}" -c "UPDATE incentives.transactions SET amount = amount - 0.01" \
            -c "VACUUM ANALYZE incentives.transactions"
        record "$n" swap_moved "$run" "$(ms -c 'CALL incentives.refresh_earnings()')"

        if [ "$BENCH_LOADS" != 0 ]; then
            # bulk load, tracked and untracked (the table emptied first each time)
            "${PSQL[@]}" -c "TRUNCATE incentives.transactions" -c "VACUUM incentives.transactions" -c "CHECKPOINT"
            record "$n" load "$run" "$(ms -c 'INSERT INTO incentives.transactions SELECT * FROM lifecycle_bench.staged')"
            "${PSQL[@]}" -c "TRUNCATE incentives.transactions" -c "VACUUM incentives.transactions" -c "CHECKPOINT"
            record "$n" load_untracked "$run" "$(ms \
                -c 'ALTER TABLE incentives.transactions DISABLE TRIGGER transactions_changes_insert' \
                -c 'INSERT INTO incentives.transactions SELECT * FROM lifecycle_bench.staged' \
                -c 'ALTER TABLE incentives.transactions ENABLE TRIGGER transactions_changes_insert')"
            "${PSQL[@]}" -c "VACUUM ANALYZE incentives.transactions"
            # the reloads logged everyone: a full refresh consumes that
            "${PSQL[@]}" -c "CALL incentives.refresh_earnings()"
        fi

        changed=$(q "SELECT lifecycle_bench.change($BENCH_CHANGED_PCT, $run * 2 - 1)")
        record "$n" changed_only "$run" "$(ms -c 'CALL incentives.refresh_earnings(changed_only => true)')"
        recalculated=$(q "SELECT participants FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1")
        log "  changed_only: $changed transactions changed, $recalculated participants recalculated"
        q "SELECT lifecycle_bench.change($BENCH_CHANGED_PCT, $run * 2)" >/dev/null
        record "$n" full_after "$run" "$(ms -c 'CALL incentives.refresh_earnings()')"
        # everyone changed (a SKU's label): the live run rewrites every row in place
        q "UPDATE incentives.skus SET label = COALESCE(label, '') || '.'
            WHERE sku_key = (SELECT min(sku_key) FROM incentives.skus)" >/dev/null
        record "$n" live_everyone "$run" "$(ms -c 'CALL incentives.refresh_earnings(changed_only => true)')"
    done

    if part live; then
        live "$n"
    else
        : >"$BENCH_OUT/lifecycle-live-$n.txt"
    fi

    log "N=$n: earnings against a fresh calculation"
    q "SELECT lifecycle_bench.change($BENCH_CHANGED_PCT, 100)" >/dev/null
    "${PSQL[@]}" -c "CALL incentives.refresh_earnings(changed_only => true)"
    diff=$(q "SELECT count(*) FROM (
                (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
                        incentivized_amount, incentivized_quantity FROM incentives.earnings
                 EXCEPT ALL
                 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
                        incentivized_amount, incentivized_quantity FROM incentives.incentive_calculate())
                UNION ALL
                (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
                        incentivized_amount, incentivized_quantity FROM incentives.incentive_calculate()
                 EXCEPT ALL
                 SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
                        incentivized_amount, incentivized_quantity FROM incentives.earnings)) d")
    [ "$diff" = 0 ] || status=1

    calc_min=$(q "SELECT min(ms) FROM lifecycle_bench.timings WHERE n = $n AND measure = 'calculate'")
    refresh_min=$(q "SELECT min(ms) FROM lifecycle_bench.timings WHERE n = $n AND measure = 'refresh'")
    calc=$(median "$n" calculate)
    scan=$(median "$n" scan)
    ctas=$(median "$n" ctas)
    indexed=$(median "$n" ctas_indexed)
    refresh=$(median "$n" refresh)
    load=$(median "$n" load)
    untracked=$(median "$n" load_untracked)
    changed=$(median "$n" changed_only)
    full=$(median "$n" full_after)
    {
        echo "incentives lifecycle benchmark  $(date -u +%Y-%m-%dT%H:%MZ); PostgreSQL $(q 'SHOW server_version'); $(nproc) cores; lc_collate $(q 'SHOW lc_collate')"
        echo "N = $n transactions, $participants participants, $rows earning rows; medians of $BENCH_RUNS rounds (ms)"
        "${PSQL[@]}" -c "SELECT measure, count(*) AS runs,
                                percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) AS median_ms,
                                min(ms) AS min_ms, max(ms) AS max_ms,
                                percentile_disc(0.5) WITHIN GROUP (ORDER BY cpu_ms) AS \"backend cpu_ms (median)\"
                           FROM lifecycle_bench.timings WHERE n = $n
                          GROUP BY measure ORDER BY min(run), measure"
        awk -v cc="$(median "$n" calculate cpu_ms)" -v rc="$(median "$n" refresh cpu_ms)" -v c="$calc" -v s="$scan" -v ct="$ctas" -v ci="$indexed" -v r="$refresh" -v cm="$calc_min" -v rm="$refresh_min" -v l="$load" -v u="$untracked" -v ch="$changed" -v f="$full" -v p="$BENCH_CHANGED_PCT" 'BEGIN {
            printf "calculate / scan: %.2f; CREATE TABLE AS / calculate: %.2f (medians)\n", c / s, ct / c
            printf "refresh / calculate: %.2f by medians, %.2f by minimums, %.2f by the backend'"'"'s CPU time (target <= 2.5)\n", r / c, rm / cm, rc / cc
            printf "CREATE TABLE AS with the two indexes / calculate: %.2f; refresh / that: %.2f (medians)\n", ci / c, r / ci
            if (u > 0)
                printf "change tracking: bulk load %.1f s tracked, %.1f s untracked: %+.1f%% (target <= 30%%)\n", l / 1000, u / 1000, (l - u) * 100 / u
            printf "changed_only after %s%% of the participants changed: %.2f s vs full refresh %.2f s: %.1fx faster\n", p, ch / 1000, f / 1000, f / ch
        }'
        for jobs in $(seq 2 "$BENCH_JOBS"); do
            awk -v j="$jobs" -v r="$refresh" -v rj="$(median "$n" "refresh_jobs_$jobs")" 'BEGIN {
                printf "refresh jobs => %d / jobs => 1: %.2f by medians (%.2f s against %.2f s; target for 2 jobs <= 0.65)\n", j, rj / r, rj / 1000, r / 1000
            }'
        done
        awk -v i="$(median "$n" refresh_in_place)" -v im="$(median "$n" in_place_moved)" \
            -v sm="$(median "$n" swap_moved)" -v r="$refresh" 'BEGIN {
            printf "refresh in place / swap: %.2f with nothing moved (%.2f s against %.2f s), %.2f after every amount moved (%.2f s against %.2f s)\n", i / r, i / 1000, r / 1000, im / sm, im / 1000, sm / 1000
        }'
        awk -v e="$(median "$n" live_everyone)" -v r="$refresh" 'BEGIN {
            printf "changed_only after everyone changed (recalculated in place, nothing moved): %.2f s; a full refresh %.2f s\n", e / 1000, r / 1000
        }'
        cat "$BENCH_OUT/lifecycle-live-$n.txt"
        if part settle; then cat "$BENCH_OUT/lifecycle-settle-$n.txt"; fi
        echo "earnings equal a fresh calculation after changed_only: $([ "$diff" = 0 ] && echo yes || echo "NO ($diff rows differ)")"
        echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the timings)"
    } | tee "$BENCH_OUT/lifecycle-$n.txt"
done

# the growth from the smallest N to the largest, by medians
read -r -a sizes <<<"$BENCH_N"
if [ "${#sizes[@]}" -gt 1 ] && part rounds; then
    small=${sizes[0]} large=${sizes[${#sizes[@]} - 1]}
    for measure in calculate refresh $(for jobs in $(seq 2 "$BENCH_JOBS"); do echo "refresh_jobs_$jobs"; done); do
        awk -v m="$measure" -v s="$small" -v l="$large" -v a="$(median "$small" "$measure")" -v b="$(median "$large" "$measure")" 'BEGIN {
            printf "%s, %d / %d transactions: %.1f (%.2f s against %.2f s; target <= 1.05 x the growth of N, %.1f)\n", m, l, s, b / a, b / 1000, a / 1000, 1.05 * l / s
        }'
    done | tee "$BENCH_OUT/lifecycle-growth.txt"
fi
exit "$status"
