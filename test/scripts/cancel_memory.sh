#!/usr/bin/env bash
# cancel_memory.sh: cancellation and memory of incentive_calculate
# (docs/reference.md, incentive_calculate: "can be cancelled at any point,
# and keeps its memory bounded as the transactions grow").
#
# Runs against the server the PG* environment variables name, normally a
# throwaway cluster: `pg_virtualenv -t bash test/scripts/cancel_memory.sh`
# (`make check-cancel` does that after `make install`).  Needs a superuser
# (CREATE DATABASE, CREATE EXTENSION, pg_read_file of /proc/<pid>/status)
# on a server running on this machine (Linux /proc).  Works in its own
# database, dropped at the end.
#
# Data: generate_series transactions over 1000 participants, 4 of 5 SKUs
# matched by one standard percent_of_amount offer and one stacked offer (two
# SKU sets, one stack); a quarter of the quantities in qt, converted to the
# SKUs' gal.
#
# 1. Memory: a full calculation over 1M and over 5M transactions, each in a
#    fresh backend with the default work_mem; prints the backend's peak RSS
#    (VmHWM), the shared memory it touched (RssShmem) and its peak private
#    memory (RssAnon, sampled every 50 ms), and fails when the 5M peak less
#    the shared memory, or the 5M RssAnon, exceeds 1.5 x that at 1M + 50 MB:
#    memory must not grow with the transaction count (rows spill to the
#    tuplestore's files, one participant is held at a time).
# 1b. One participant: a calculation over N_ONE_SMALL (300k) and N_ONE_LARGE
#    (3M) transactions of one participant, with work_mem = 4MB and a stepped
#    offer added (load.stepped, on s1-s4, two tiers): the 3M
#    peak (VmHWM) less the shared memory it touched and the files it mapped
#    (the server's libraries, JIT's among them) must stay within 64 MB,
#    and the 3M peak RssAnon within 1.5 x the 300k one + 16 MB (its transactions
#    are read in pages from a temporary file, and walked again where a
#    strategy needs a second look).
# 2. Cancellation: over N_CANCEL (3M) transactions in incentives.transactions,
#    SET statement_timeout = '2s'; SELECT count(*) FROM
#    incentives.incentive_calculate() must fail with SQLSTATE 57014 within
#    1 s of the timeout; also a pg_cancel_backend() 3.5 s into a
#    calculation over the N_LARGE transactions (about twice as long), and a timeout that fires while the transactions are still
#    being sorted (1 s over the unindexed 5M table).  Prints
#    `cancel latency: X ms` for each.
#
# Environment knobs: N_SMALL (1000000), N_LARGE (5000000), N_CANCEL (3000000),
# N_ONE_SMALL (300000), N_ONE_LARGE (3000000), ONE_LIMIT_MB (64),
# TEST_DB (incentives_cancel_memory).
set -euo pipefail

N_SMALL=${N_SMALL:-1000000}
N_LARGE=${N_LARGE:-5000000}
N_CANCEL=${N_CANCEL:-3000000}
N_ONE_SMALL=${N_ONE_SMALL:-300000}
N_ONE_LARGE=${N_ONE_LARGE:-3000000}
ONE_LIMIT_MB=${ONE_LIMIT_MB:-64}
DB=${TEST_DB:-incentives_cancel_memory}
TIMEOUT_MS=2000
MAX_LATENCY_MS=1000
WORK=$(mktemp -d)
. "$(dirname "$0")/lib.sh"

cleanup() {
  drop_db
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== cancel_memory: server $(psql_admin -At -c 'SHOW server_version'), work_mem $(psql_admin -At -c 'SHOW work_mem'), shared_buffers $(psql_admin -At -c 'SHOW shared_buffers')"
create_db
psql_db -v prefix=load -f "$(dirname "$0")/../sql/load_offers.psql"

# ---------------------------------------------------------------------------
# 1. Memory at N_SMALL and N_LARGE transactions
# ---------------------------------------------------------------------------
t0=$(now_ms)
psql_db -c "CREATE TABLE load.t_small AS SELECT * FROM load.gen($N_SMALL)" \
        -c "CREATE TABLE load.t_large AS SELECT * FROM load.gen($N_LARGE)" \
        -c "ANALYZE load.t_small" -c "ANALYZE load.t_large"
echo "generated $N_SMALL + $N_LARGE transactions in $(( $(now_ms) - t0 )) ms"

HWM_SQL="substring(pg_read_file('/proc/' || pg_backend_pid() || '/status') from 'VmHWM:\\s+(\\d+) kB')::bigint"
SHMEM_SQL="substring(pg_read_file('/proc/' || pg_backend_pid() || '/status') from 'RssShmem:\\s+(\\d+) kB')::bigint"
FILE_SQL="substring(pg_read_file('/proc/' || pg_backend_pid() || '/status') from 'RssFile:\\s+(\\d+) kB')::bigint"

# measure REL LABEL: sets PEAK_HWM_KB, SHMEM_KB, PEAK_ANON_KB, CALC_MS,
# CALC_ROWS
measure() {
  local rel=$1 label=$2 app="incentives_mem_$2" out="$WORK/mem_$2.out"
  local pid="" status anon peak_anon=0
  PGAPPNAME=$app psql -X -At -v ON_ERROR_STOP=1 -d "$DB" >"$out" 2>&1 <<SQL &
SELECT 'hwm_before ' || $HWM_SQL;
SELECT 'start ' || (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
SELECT 'rows ' || count(*) FROM incentives.incentive_calculate(transactions => '$rel');
SELECT 'end ' || (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
SELECT 'hwm_after ' || $HWM_SQL;
SELECT 'shmem_after ' || $SHMEM_SQL;
SELECT 'file_after ' || $FILE_SQL;
SQL
  local bg=$!
  # sample the backend's private memory while it calculates
  while kill -0 "$bg" 2>/dev/null; do
    if [ -z "$pid" ]; then
      pid=$(psql_db -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$app'" 2>/dev/null || true)
    fi
    if [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; then
      anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      if [ -n "$anon" ] && [ "$anon" -gt "$peak_anon" ]; then peak_anon=$anon; fi
    fi
    sleep 0.05
  done
  if ! wait "$bg"; then
    cat "$out" >&2
    fail "calculation over $rel failed"
  fi
  PEAK_HWM_KB=$(awk '$1 == "hwm_after" {print $2}' "$out")
  SHMEM_KB=$(awk '$1 == "shmem_after" {print $2}' "$out")
  FILE_KB=$(awk '$1 == "file_after" {print $2}' "$out")
  CALC_ROWS=$(awk '$1 == "rows" {print $2}' "$out")
  CALC_MS=$(( $(awk '$1 == "end" {print $2}' "$out") - $(awk '$1 == "start" {print $2}' "$out") ))
  PEAK_ANON_KB=$peak_anon
  echo "peak memory at $label transactions: VmHWM $((PEAK_HWM_KB / 1024)) MB" \
       "(before the call $(( $(awk '$1 == "hwm_before" {print $2}' "$out") / 1024 )) MB," \
       "shared memory touched $((SHMEM_KB / 1024)) MB, files mapped $((FILE_KB / 1024)) MB)," \
       "peak RssAnon $((PEAK_ANON_KB / 1024)) MB; $CALC_ROWS rows in $CALC_MS ms"
}

# VmHWM counts the shared buffers the backend touched, which grow with the
# data read up to shared_buffers (PostgreSQL 18's scans touch them all), not
# with what the calculation holds: the bound is on the peak less them.
measure load.t_small "$N_SMALL"
hwm_small=$(( PEAK_HWM_KB - SHMEM_KB )) anon_small=$PEAK_ANON_KB
measure load.t_large "$N_LARGE"
hwm_large=$(( PEAK_HWM_KB - SHMEM_KB )) anon_large=$PEAK_ANON_KB

limit=$(( hwm_small * 3 / 2 + 50 * 1024 ))
if [ "$hwm_large" -gt "$limit" ]; then
  fail "peak memory grows with the transactions: VmHWM less shared memory $((hwm_large / 1024)) MB at $N_LARGE > 1.5 x $((hwm_small / 1024)) MB + 50 MB at $N_SMALL"
else
  echo "ok: VmHWM less shared memory at $N_LARGE ($((hwm_large / 1024)) MB) <= 1.5 x that at $N_SMALL + 50 MB ($((limit / 1024)) MB)"
fi
if [ "$anon_small" -gt 0 ] && [ "$anon_large" -gt 0 ]; then
  limit=$(( anon_small * 3 / 2 + 50 * 1024 ))
  if [ "$anon_large" -gt "$limit" ]; then
    fail "private memory grows with the transactions: RssAnon $((anon_large / 1024)) MB at $N_LARGE > 1.5 x $((anon_small / 1024)) MB + 50 MB at $N_SMALL"
  else
    echo "ok: peak RssAnon at $N_LARGE ($((anon_large / 1024)) MB) <= 1.5 x peak RssAnon at $N_SMALL + 50 MB ($((limit / 1024)) MB)"
  fi
else
  echo "note: /proc/<backend>/status not readable from here; RssAnon not sampled"
fi

# ---------------------------------------------------------------------------
# 1b. One participant's N_ONE_SMALL and N_ONE_LARGE transactions, work_mem 4MB
# ---------------------------------------------------------------------------
# a stepped offer too from here on: its earning transactions at the tier
# reached, s1-s4's amounts choosing it
psql_db -c "SET client_min_messages = warning" -c "INSERT INTO incentives.offers (document) VALUES ('{
  \"offer_key\": \"load.stepped\", \"strategy_key\": \"stepped\", \"calculator_key\": \"percent_of_amount\",
  \"periods\": [{\"key\": \"p\", \"start_date\": \"2026-01-01\", \"end_date\": \"2026-12-31\"}],
  \"incentive\": {
    \"filters\": [{\"period_key\": \"p\", \"sku_keys\": [\"s1\", \"s2\", \"s3\", \"s4\"],
                   \"transaction_type\": \"retailer_purchases_from_distribution\"}],
    \"threshold_definition\": {\"type\": \"aggregated_amount\",
      \"filters\": [{\"period_key\": \"p\", \"sku_keys\": [\"s1\", \"s2\", \"s3\", \"s4\"],
                     \"transaction_type\": \"retailer_purchases_from_distribution\"}]},
    \"rates\": [{\"key\": \"t1\", \"threshold\": 1000, \"value\": 1, \"measure\": \"percent\"},
              {\"key\": \"t2\", \"threshold\": 100000, \"value\": 2, \"measure\": \"percent\"}]}}')"
psql_db -c "CREATE TABLE load.one_small AS SELECT * FROM load.gen($N_ONE_SMALL, 1)" \
        -c "CREATE TABLE load.one_large AS SELECT * FROM load.gen($N_ONE_LARGE, 1)" \
        -c "ANALYZE load.one_small" -c "ANALYZE load.one_large"
PGOPTIONS="${PGOPTIONS:-} -c work_mem=4MB" measure load.one_small "one_participant_$N_ONE_SMALL"
anon_small=$PEAK_ANON_KB
PGOPTIONS="${PGOPTIONS:-} -c work_mem=4MB" measure load.one_large "one_participant_$N_ONE_LARGE"
anon_large=$PEAK_ANON_KB
if [ "$anon_small" -gt 0 ] && [ "$anon_large" -gt 0 ]; then
  limit=$(( anon_small * 3 / 2 + 16 * 1024 ))
  if [ "$anon_large" -gt "$limit" ]; then
    fail "one participant's private memory grows with its transactions: RssAnon $((anon_large / 1024)) MB at $N_ONE_LARGE > 1.5 x $((anon_small / 1024)) MB + 16 MB at $N_ONE_SMALL"
  else
    echo "ok: one participant's peak RssAnon at $N_ONE_LARGE ($((anon_large / 1024)) MB) <= 1.5 x that at $N_ONE_SMALL + 16 MB ($((limit / 1024)) MB)"
  fi
fi
one_private=$(( PEAK_HWM_KB - SHMEM_KB - FILE_KB ))
if [ "$one_private" -gt $(( ONE_LIMIT_MB * 1024 )) ]; then
  fail "one participant's $N_ONE_LARGE transactions with work_mem 4MB: VmHWM less shared memory and mapped files $((one_private / 1024)) MB > $ONE_LIMIT_MB MB"
else
  echo "ok: one participant's $N_ONE_LARGE transactions with work_mem 4MB: VmHWM less shared memory and mapped files $((one_private / 1024)) MB <= $ONE_LIMIT_MB MB"
fi
psql_db -c "DROP TABLE load.one_small, load.one_large"

# ---------------------------------------------------------------------------
# 2. Cancellation
# ---------------------------------------------------------------------------
t0=$(now_ms)
psql_db -c "INSERT INTO incentives.transactions SELECT * FROM load.gen($N_CANCEL)" \
        -c "ANALYZE incentives.transactions"
echo "loaded $N_CANCEL transactions into incentives.transactions in $(( $(now_ms) - t0 )) ms"

# timeout_case LABEL TIMEOUT_MS SQL: the statement must fail with 57014 within
# MAX_LATENCY_MS of the timeout (psql's \timing of the failed statement).
timeout_case() {
  local label=$1 timeout=$2 sql=$3 out elapsed latency
  out=$(psql -X -d "$DB" 2>&1 <<SQL
\set VERBOSITY verbose
SET statement_timeout = '${timeout}ms';
\timing on
$sql
\timing off
RESET statement_timeout;
SELECT 'after_cancel ' || count(*) FROM incentives.incentive_calculate(participant_key => 'P0000');
SQL
) || true
  if ! grep -q 'ERROR:  57014' <<<"$out"; then
    echo "$out" >&2
    fail "$label: not cancelled with SQLSTATE 57014 (did the calculation finish within ${timeout} ms?)"
    return
  fi
  elapsed=$(grep -o 'Time: [0-9.]* ms' <<<"$out" | tail -n 1 | awk '{printf "%d", $2}')
  latency=$(( elapsed - timeout ))
  echo "cancel latency: $latency ms ($label: statement_timeout ${timeout} ms, cancelled after $elapsed ms with 57014)"
  if [ "$latency" -gt "$MAX_LATENCY_MS" ]; then
    fail "$label: cancelled $latency ms after the timeout (> $MAX_LATENCY_MS ms)"
  fi
  # the same backend calculates again after the cancellation
  grep -q 'after_cancel ' <<<"$out" || { echo "$out" >&2; fail "$label: the backend could not calculate after the cancellation"; }
}

timeout_case "count(*) over $N_CANCEL transactions" "$TIMEOUT_MS" \
  "SELECT count(*) FROM incentives.incentive_calculate();"
timeout_case "early, over $N_LARGE unindexed transactions (the cursor's sort)" 1000 \
  "SELECT count(*) FROM incentives.incentive_calculate(transactions => 'load.t_large');"

# pg_cancel_backend 3.5 s into a calculation over the N_LARGE transactions
# (over the N_CANCEL ones, the calculation can end before the signal lands).
app=incentives_cancel_backend
out_file="$WORK/cancel_backend.out"
PGAPPNAME=$app psql -X -d "$DB" -v VERBOSITY=verbose \
  -c "SELECT count(*) FROM incentives.incentive_calculate(transactions => 'load.t_large')" >"$out_file" 2>&1 &
bg=$!
pid=""
for _ in $(seq 1 100); do
  pid=$(psql_db -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$app' AND state = 'active'")
  [ -n "$pid" ] && break
  sleep 0.05
done
if [ -z "$pid" ]; then
  fail "pg_cancel_backend: the calculation did not start"
else
  sleep 3.5
  if ! kill -0 "$bg" 2>/dev/null; then
    fail "pg_cancel_backend: the calculation finished within 3.5 s; nothing to cancel"
  else
    t0=$(now_ms)
    psql_db -At -c "SELECT pg_cancel_backend($pid)" >/dev/null
    t1=$(now_ms)
    wait "$bg" || true
    t2=$(now_ms)
    latency=$(( t2 - t1 ))
    if grep -q 'ERROR:  57014' "$out_file"; then
      echo "cancel latency: $latency ms (pg_cancel_backend 3.5 s into a calculation over $N_LARGE transactions, 57014; measured from the signal, $(( t2 - t0 )) ms including the canceller's connection)"
      [ "$latency" -le "$MAX_LATENCY_MS" ] || fail "pg_cancel_backend: cancelled after $latency ms (> $MAX_LATENCY_MS ms)"
    else
      cat "$out_file" >&2
      fail "pg_cancel_backend: not cancelled with SQLSTATE 57014"
    fi
  fi
fi

finish cancel_memory
