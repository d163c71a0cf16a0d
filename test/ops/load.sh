#!/bin/bash
# test/ops/load.sh: the extension under a mixed load (make check-load,
# short; make bench-load, 1M transactions), on a throwaway cluster (PGHOST
# etc. set by pg_virtualenv), from the repository root.
#
#   LOAD_N        transactions generated (bench/generate.sql)   20000
#   LOAD_SECONDS  duration                                       5
#   LOAD_CLIENTS  pgbench clients running the mix                4
#
# For LOAD_SECONDS, LOAD_CLIENTS clients run bench/load/calculate.sql
# (incentive_calculate of one participant, weight 4), calculate_json.sql
# (calculate(jsonb) with include_stored, 2), tier_progress.sql (2) and
# insert.sql (a new transaction, 2), while one more session runs
# refresh.sql (CALL incentives.refresh_earnings()) over and over.  Then:
# no failed pgbench transaction, no deadlock (pg_stat_database), every
# refresh run succeeded; and after a last refresh, incentives.earnings
# equals a full incentive_calculate() row for row.  Prints, per script,
# transactions, tps and p50/p99 latency (from pgbench --log).
set -euo pipefail
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
n=${LOAD_N:-20000}
seconds=${LOAD_SECONDS:-5}
clients=${LOAD_CLIENTS:-4}
db=load
work=$(mktemp -d /tmp/incentives-load.XXXXXX)
chmod 777 "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "load: FAILED: $*" >&2; exit 1; }
q() { psql -X -A -t -q -v ON_ERROR_STOP=1 -d $db "$@"; }

psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
q -c 'CREATE EXTENSION incentives'
start=$(date +%s)
q -v n_transactions="$n" -f test/ops/dataset.psql >/dev/null
q -c 'CALL incentives.refresh_earnings(progress_every => 250)'
q -c 'VACUUM ANALYZE'
participants=$(q -c 'SELECT count(DISTINCT participant_key) FROM incentives.transactions')
echo "load: $n transactions of $participants participants generated and refreshed in $(( $(date +%s) - start )) s"

deadlocks_before=$(q -c 'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')
runs_before=$(q -c 'SELECT coalesce(max(run_id), 0) FROM incentives.calculation_runs')
echo "load: $clients clients for $seconds s (calculate 4 : calculate_json 2 : tier_progress 2 : insert 2), refresh_earnings over and over in one more session"
pgbench -n -d $db -T "$seconds" -D participants="$participants" -c 1 \
	--log --log-prefix="$work/refresh" -f bench/load/refresh.sql > "$work/out_refresh.txt" 2>&1 &
refresh_pid=$!
status=0
pgbench -n -d $db -T "$seconds" -c "$clients" -j "$clients" -D participants="$participants" \
	--log --log-prefix="$work/mix" \
	-f bench/load/calculate.sql@4 -f bench/load/calculate_json.sql@2 \
	-f bench/load/tier_progress.sql@2 -f bench/load/insert.sql@2 > "$work/out_mix.txt" 2>&1 || status=$?
wait $refresh_pid || status=$?
if [ "$status" -ne 0 ]; then
	cat "$work/out_mix.txt" "$work/out_refresh.txt"
	fail "pgbench exited with status $status"
fi
for f in mix refresh; do
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/out_$f.txt")
	[ "${failed:-0}" = 0 ] || { cat "$work/out_$f.txt"; fail "$failed failed transactions ($f)"; }
	grep -q '^number of transactions actually processed: [1-9]' "$work/out_$f.txt" ||
		{ cat "$work/out_$f.txt"; fail "no transaction processed ($f)"; }
done

# latency per script from the logs: client txno latency_us script_no epoch us
cat "$work"/mix.* > "$work/mix.log" 2>/dev/null || true
names=(calculate calculate_json tier_progress insert)
printf 'load: %-15s %8s %8s %10s %10s\n' script xacts tps p50_ms p99_ms
report() {  # name, log file, script number
	sort -n -k1,1 <(awk -v s="$3" '$4 == s { print $3 }' "$2") > "$work/lat"
	local count; count=$(wc -l < "$work/lat")
	[ "$count" -gt 0 ] || fail "no transaction of $1 in the log"
	awk -v n="$count" -v secs="$seconds" -v name="$1" '
		{ v[NR] = $1 }
		END { p50 = v[int((n - 1) * 0.50) + 1]; p99 = v[int((n - 1) * 0.99) + 1]
		      printf "load: %-15s %8d %8.1f %10.1f %10.1f\n", name, n, n / secs, p50 / 1000, p99 / 1000 }' "$work/lat"
}
for i in 0 1 2 3; do report "${names[$i]}" "$work/mix.log" "$i"; done
cat "$work"/refresh.* > "$work/refresh.log" 2>/dev/null || true
report refresh_earnings "$work/refresh.log" 0
grep -E '^(tps|latency average)' "$work/out_mix.txt" | sed 's/^/load: mix: /'

deadlocks=$(( $(q -c 'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()') - deadlocks_before ))
[ "$deadlocks" -eq 0 ] || fail "$deadlocks deadlocks"
bad_runs=$(q -c "SELECT count(*) FROM incentives.calculation_runs WHERE run_id > $runs_before AND status <> 'succeeded'")
good_runs=$(q -c "SELECT count(*) FROM incentives.calculation_runs WHERE run_id > $runs_before AND status = 'succeeded'")
[ "$bad_runs" -eq 0 ] || { q -c "SELECT run_id, status, sqlstate, error FROM incentives.calculation_runs WHERE run_id > $runs_before AND status <> 'succeeded'"; fail "$bad_runs refresh runs did not succeed"; }
inserted=$(q -c "SELECT count(*) FROM incentives.transactions WHERE transaction_id LIKE 'load-%'")

# the last refresh, then earnings == a full calculation, row for row
q -c 'CALL incentives.refresh_earnings(progress_every => 250)'
diff_rows=$(q -c "
  WITH e AS (SELECT participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key,
                    incentive_rate_measure, incentive_rate_value, offer_sku_pay_rate, transaction_id,
                    provided_quantity, provided_uom_key, provided_amount, incentivized_quantity,
                    incentivized_amount, incentive_amount, incentive_contribution_percent,
                    incentive_effective_rate, group_key, product_key, grower_key, currency,
                    exchange_rate
               FROM incentives.earnings),
       c AS (SELECT * FROM incentives.incentive_calculate())
  SELECT (SELECT count(*) FROM (TABLE e EXCEPT ALL TABLE c) AS x)
       + (SELECT count(*) FROM (TABLE c EXCEPT ALL TABLE e) AS y)")
rows=$(q -c 'SELECT count(*) FROM incentives.earnings')
[ "$diff_rows" -eq 0 ] || fail "incentives.earnings differs from incentive_calculate() in $diff_rows rows"
echo "load: 0 errors, 0 deadlocks, $good_runs refresh runs succeeded during the load, $inserted transactions inserted;"
echo "load: after a last refresh incentives.earnings equals incentive_calculate() row for row ($rows rows)"
