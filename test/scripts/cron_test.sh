#!/usr/bin/env bash
# cron_test.sh: incentives.refresh_earnings scheduled by pg_cron
# (docs/analyst-guide.md, Scheduling with pg_cron).
#
# Runs against the pg_virtualenv cluster the PG* variables name, started
# with pg_cron preloaded and running jobs in background workers:
#
#   pg_virtualenv -t -o shared_preload_libraries=pg_cron \
#     -o cron.database_name=postgres -o cron.use_background_workers=on \
#     bash test/scripts/cron_test.sh
#
# (`make check-cron` does that after `make install`.)  pg_cron 1.4 has no
# seconds schedules, so each job is an '@reboot' job and the cluster is
# restarted (pg_ctlcluster "$PGVERSION" regress restart); the job runs about
# half a second after the start.  Two rounds, in database postgres (the one
# pg_cron serves):
#
# 1. The stepped_amount fixture; CALL incentives.refresh_earnings() as an
#    @reboot job; after the restart cron.job_run_details shows it succeeded,
#    incentives.earnings holds the fixture's 3 rows (13850.00) and
#    incentives.calculation_runs a succeeded run of everyone.
# 2. A transaction whose unit has no conversion is added; the job runs again
#    and fails; the previous 3 earning rows are still there, and the failed
#    run's row (with the error naming the transaction) survived the
#    rollback: the procedure commits it before raising, which needs the
#    top-level (non-atomic) CALL that pg_cron's background worker makes.
#
# 3. The bad transaction goes; the monthly settle of docs/lifecycle.md
#    (CALL incentives.settle(<last day of the previous month>)) runs as an
#    @reboot job; one statement of that date, its lines adding up to the
#    earnings through it.
# 4. The monthly accrual (CALL incentives.accrue(<the same date>)) as an
#    @reboot job; one accrual of that date, its lines equal to the forecast
#    of that date (docs/lifecycle.md, Accruals).
# 5. The live job (docs/analyst-guide.md, Live earnings): CALL
#    incentives.refresh_earnings(changed_only => true) every 5 seconds
#    (pg_cron 1.5 and later) or every minute (1.4); transactions inserted
#    one at a time while it runs are each in incentives.earnings within
#    two intervals, idle runs log no run, and once the inserts stop the
#    earnings equal a fresh calculation.
#
# Prints one PASS or FAIL line at the end; exits non-zero on failure.
set -euo pipefail

cd "$(dirname "$0")/../.."

TIMEOUT=${CRON_TIMEOUT:-30}
DB=postgres
: "${PGVERSION:?PGVERSION is not set: run under pg_virtualenv}"

q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
val() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -At -c "$1"; }
fail() {
	echo "check-cron: FAIL: $*" >&2
	echo "check-cron: cron.job_run_details:" >&2
	psql -X -d "$DB" -c "SELECT jobid, runid, status, return_message, start_time, end_time FROM cron.job_run_details ORDER BY runid" >&2 || true
	echo "check-cron: incentives.calculation_runs:" >&2
	psql -X -d "$DB" -c "SELECT run_id, participant_key, participants, rows, total_incentive, status, sqlstate, error FROM incentives.calculation_runs ORDER BY run_id" >&2 || true
	exit 1
}

restart() {
	pg_ctlcluster "$PGVERSION" regress restart
	local i
	for i in $(seq 1 60); do
		pg_isready -q -d "$DB" && return 0
		sleep 0.5
	done
	fail "the cluster did not come back after the restart"
}

# wait_run JOBID: poll cron.job_run_details until the job has a finished run
# (succeeded or failed) and print its status.
wait_run() {
	local jobid=$1 deadline=$((SECONDS + TIMEOUT)) status
	while :; do
		status=$(val "SELECT status FROM cron.job_run_details
		               WHERE jobid = $jobid AND status IN ('succeeded', 'failed')
		               ORDER BY runid DESC LIMIT 1")
		if [ -n "$status" ]; then
			echo "$status"
			return 0
		fi
		[ "$SECONDS" -ge "$deadline" ] && { echo "timeout"; return 0; }
		sleep 0.5
	done
}

# reboot_job ROUND NAME COMMAND EXPECTED [NOTE]: schedule COMMAND as the
# @reboot job NAME, restart the cluster and check that the job's run ended
# EXPECTED (succeeded or failed); the job's id is left in $job.
reboot_job() {
	local round=$1 name=$2 cmd=$3 expected=$4 note=${5:-} status
	job=$(val "SELECT cron.schedule('$name', '@reboot', \$\$$cmd\$\$)")
	echo "check-cron: scheduled job $job (@reboot: $cmd)$note; restarting"
	restart
	status=$(wait_run "$job")
	[ "$status" = "$expected" ] || fail "round $round: job $job status '$status' (expected $expected within ${TIMEOUT} s)"
}

# check_earnings ROUND: incentives.earnings hold the 3 rows of 13850.00 of
# the first refresh.
check_earnings() {
	local earnings
	earnings=$(val "SELECT count(*) || ' ' || sum(incentive_amount) FROM incentives.earnings")
	[ "$earnings" = "3 13850.00" ] || fail "round $1: earnings are '$earnings', expected '3 13850.00'"
}

echo "check-cron: $(val 'SELECT version()' | cut -d, -f1), pg_cron background workers: $(val 'SHOW cron.use_background_workers')"
q -c "CREATE EXTENSION IF NOT EXISTS pg_cron" -c "CREATE EXTENSION IF NOT EXISTS incentives"
q -v fixture=stepped_amount -f test/sql/load_fixture.psql >/dev/null

# ---- round 1: a scheduled refresh succeeds ---------------------------------
reboot_job 1 incentives-refresh-test "CALL incentives.refresh_earnings()" succeeded
check_earnings 1
runs=$(val "SELECT count(*) FROM incentives.calculation_runs
             WHERE status = 'succeeded' AND participant_key IS NULL
               AND participants = 3 AND rows = 3 AND total_incentive = 13850.00
               AND finished_at IS NOT NULL")
[ "$runs" = 1 ] || fail "round 1: no succeeded calculation_runs row for 3 participants, 3 rows, 13850.00"
echo "check-cron: round 1: job succeeded; earnings 3 rows, 13850.00; calculation_runs: 1 succeeded run"

# ---- round 2: a failing refresh keeps the earnings and logs the failure -----
q -c "SELECT cron.unschedule($job)" >/dev/null
q -c "INSERT INTO incentives.skus (sku_key, uom_key) VALUES ('agri_shield_insecticide_2.5_gal_53551', 'gal')" \
  -c "INSERT INTO incentives.transactions VALUES ('CRON-BAD-1', 'retailer_002', 'retailer_purchases_from_distribution', '2026-03-05', 'agri_shield_insecticide_2.5_gal_53551', 1, 'drum', 50)"
reboot_job 2 incentives-refresh-test-2 "CALL incentives.refresh_earnings()" failed \
  " after adding a transaction in 'drum' (no conversion to gal)"
message=$(val "SELECT return_message FROM cron.job_run_details WHERE jobid = $job ORDER BY runid DESC LIMIT 1")
case "$message" in
	*CRON-BAD-1*) ;;
	*) fail "round 2: the job's return_message does not name the transaction: $message" ;;
esac

check_earnings 2   # kept from round 1
failed=$(val "SELECT count(*) FROM incentives.calculation_runs
               WHERE status = 'failed' AND sqlstate = '22023'
                 AND error LIKE '%CRON-BAD-1%' AND finished_at IS NOT NULL")
[ "$failed" = 1 ] || fail "round 2: no failed calculation_runs row naming CRON-BAD-1"
q -c "SELECT cron.unschedule($job)" >/dev/null
echo "check-cron: round 2: job failed ($(printf '%s\n' "$message" | head -n 1)); earnings kept (3 rows, 13850.00); calculation_runs: the failed run is logged"

# ---- round 3: the monthly settle of docs/lifecycle.md ------------------------
# Scheduled for real as '0 2 1 * *' (02:00 on the first of the month); here
# the same command as an @reboot job.
SETTLE_CMD="CALL incentives.settle((date_trunc('month', current_date) - interval '1 day')::date)"
q -c "DELETE FROM incentives.transactions WHERE transaction_id = 'CRON-BAD-1'" >/dev/null
reboot_job 3 incentives-settle-test "$SETTLE_CMD" succeeded
month_end=$(val "SELECT (date_trunc('month', current_date) - interval '1 day')::date")
statement=$(val "SELECT count(*) || ' ' || min(statement_date) FROM incentives.statements")
[ "$statement" = "1 $month_end" ] || fail "round 3: statements are '$statement', expected one of $month_end"
lines=$(val "SELECT count(*) || ' ' || sum(amount_due) FROM incentives.statement_lines")
earned=$(val "SELECT count(*) || ' ' || sum(s) FROM (SELECT participant_key, offer_key, sum(incentive_amount) AS s
                FROM incentives.incentive_calculate(through_date => '$month_end') GROUP BY 1, 2 HAVING sum(incentive_amount) <> 0) x")
[ "$lines" = "$earned" ] || fail "round 3: the statement's lines are '$lines', the earnings through $month_end '$earned'"
q -c "SELECT cron.unschedule($job)" >/dev/null
echo "check-cron: round 3: the settle job succeeded; statement of $month_end with $lines (lines, due) = the earnings through it"

# ---- round 4: the monthly accrual of docs/lifecycle.md -----------------------
# Scheduled for real as '0 3 1 * *' (03:00 on the first of the month, after
# the settle); here the same command as an @reboot job.
ACCRUE_CMD="CALL incentives.accrue((date_trunc('month', current_date) - interval '1 day')::date)"
reboot_job 4 incentives-accrue-test "$ACCRUE_CMD" succeeded
accrual=$(val "SELECT count(*) || ' ' || min(as_of_date) FROM incentives.accruals")
[ "$accrual" = "1 $month_end" ] || fail "round 4: accruals are '$accrual', expected one of $month_end"
lines=$(val "SELECT count(*) || ' ' || COALESCE(sum(accrued_to_date), 0) || ' ' || COALESCE(sum(delta), 0)
               FROM incentives.accrual_lines")
forecast=$(val "SELECT count(*) || ' ' || COALESCE(sum(accrual_to_date), 0) || ' ' || COALESCE(sum(accrual_to_date), 0)
                  FROM incentives.forecast('$month_end') WHERE accrual_to_date <> 0")
[ "$lines" = "$forecast" ] || fail "round 4: the accrual's lines are '$lines', the forecast of $month_end '$forecast'"
case "$lines" in 0\ *) fail "round 4: the accrual has no lines: the fixture proves nothing" ;; esac
q -c "SELECT cron.unschedule($job)" >/dev/null
echo "check-cron: round 4: the accrue job succeeded; accrual of $month_end with $lines (lines, accrued, booked) = the forecast of that date"

# ---- round 5: the live job of docs/analyst-guide.md, Live earnings -----------
# pg_cron 1.5 and later: every 5 seconds, at most 5 changed participants a
# run; 1.4: every minute, at most 60 (two statements in the job).  Transactions
# inserted one at a time while it runs each show in incentives.earnings
# within two intervals; runs with nothing to do log no run; once the
# inserts stop the earnings equal a fresh calculation.
cron_version=$(val "SELECT extversion FROM pg_extension WHERE extname = 'pg_cron'")
if [ "$(val "SELECT (regexp_match('$cron_version', '^(\d+)\.(\d+)'))::int[] >= '{1,5}'")" = t ]; then
	schedule='5 seconds' interval=5 inserts=6 gap=1.5 limit=5
else
	schedule='* * * * *' interval=60 inserts=4 gap=5 limit=60
fi
q -c "CREATE TABLE public.live_probe (transaction_id text PRIMARY KEY, participant_key text,
                                      inserted_at timestamptz, seen_at timestamptz)"
runs_before=$(val "SELECT count(*) FROM incentives.calculation_runs")
job=$(val "SELECT cron.schedule('incentives-live', '$schedule',
                 \$\$SET incentives.changed_only_limit = $limit; CALL incentives.refresh_earnings(changed_only => true)\$\$)")
echo "check-cron: round 5: pg_cron $cron_version, live job $job every '$schedule'; $inserts inserts ${gap} s apart"
# mark_seen: the inserted transactions now in incentives.earnings get the time
mark_seen() {
	q -c "UPDATE public.live_probe AS p SET seen_at = clock_timestamp()
	       WHERE p.seen_at IS NULL
	         AND EXISTS (SELECT FROM incentives.earnings AS e
	                      WHERE e.participant_key = p.participant_key AND e.transaction_id = p.transaction_id)" >/dev/null
}
(while :; do mark_seen; sleep 0.25; done) &
poller=$!
for i in $(seq "$inserts"); do
	q -c "WITH template AS (
	          SELECT t.* FROM incentives.transactions AS t
	           WHERE t.transaction_id = (SELECT min(e.transaction_id) FROM incentives.earnings AS e))
	      , ins AS (
	          INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
	                                               sku_key, quantity, uom_key, amount)
	          SELECT 'LIVE-$i', participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount
	            FROM template
	          RETURNING transaction_id, participant_key)
	      INSERT INTO public.live_probe (transaction_id, participant_key, inserted_at)
	      SELECT transaction_id, participant_key, clock_timestamp() FROM ins" >/dev/null
	sleep "$gap"
done
deadline=$((SECONDS + 3 * interval + 10))
while [ "$(val "SELECT count(*) FROM public.live_probe WHERE seen_at IS NULL")" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do
	sleep 0.25
done
kill "$poller" 2>/dev/null || true
wait "$poller" 2>/dev/null || true
late=$(val "SELECT count(*) FROM public.live_probe
             WHERE seen_at IS NULL OR seen_at - inserted_at > $interval * 2 * interval '1 second'")
worst=$(val "SELECT round(extract(epoch FROM max(seen_at - inserted_at)), 1) FROM public.live_probe")
[ "$late" = 0 ] || fail "round 5: $late of $inserts inserted transactions were not in incentives.earnings within $((2 * interval)) s: $(val "SELECT string_agg(transaction_id || ' ' || COALESCE(round(extract(epoch FROM seen_at - inserted_at), 1)::text, 'never'), ', ') FROM public.live_probe")"
# one more run after the last insert, then everything equals a calculation
deadline=$((SECONDS + 2 * interval + 10))
while [ "$(val "SELECT count(*) FROM incentives.earnings_changes")" != 0 ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
diff=$(val "SELECT count(*) FROM (
              (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings
               EXCEPT ALL
               SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate())
              UNION ALL
              (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()
               EXCEPT ALL
               SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings)) d")
[ "$diff" = 0 ] || fail "round 5: after the inserts stopped, $diff earning rows differ from a calculation"
q -c "SELECT cron.unschedule($job)" >/dev/null
job_runs=$(val "SELECT count(*) FROM cron.job_run_details WHERE jobid = $job")
job_failed=$(val "SELECT count(*) FROM cron.job_run_details WHERE jobid = $job AND status = 'failed'")
runs_logged=$(( $(val "SELECT count(*) FROM incentives.calculation_runs") - runs_before ))
[ "$job_failed" = 0 ] || fail "round 5: $job_failed runs of the live job failed: $(val "SELECT string_agg(DISTINCT return_message, '; ') FROM cron.job_run_details WHERE jobid = $job AND status = 'failed'")"
[ "$runs_logged" -le $((inserts + 1)) ] || fail "round 5: the live job logged $runs_logged runs for $inserts inserts"
echo "check-cron: round 5: inserted at (s): $(val "SELECT string_agg(round(extract(epoch FROM inserted_at - s.t0), 1)::text || ' seen ' || COALESCE(round(extract(epoch FROM seen_at - s.t0), 1)::text, 'never'), ', ' ORDER BY inserted_at) FROM public.live_probe, (SELECT min(inserted_at) AS t0 FROM public.live_probe) AS s"); job runs at (s): $(val "SELECT string_agg(round(extract(epoch FROM d.start_time - s.t0), 1) || '-' || round(extract(epoch FROM d.end_time - s.t0), 1), ', ' ORDER BY d.runid) FROM cron.job_run_details AS d, (SELECT min(inserted_at) AS t0 FROM public.live_probe) AS s WHERE d.jobid = $job")"
echo "check-cron: round 5: each of $inserts transactions was in incentives.earnings within $worst s at worst (limit $((2 * interval)) s); the job ran $job_runs times and logged $runs_logged runs; the earnings equal a calculation"

echo "check-cron: PASS (pg_cron ran CALL incentives.refresh_earnings(): a success, then a logged failure that kept the earnings; the monthly CALL incentives.settle and CALL incentives.accrue; the live changed_only job)"
