#!/usr/bin/env bash
# crash_test.sh: a refresh_earnings that never finishes (docs/lifecycle.md,
# "The run log and crashes").
#
# Runs against the pg_virtualenv cluster the PG* variables name (it restarts
# it): `pg_virtualenv -t bash test/scripts/crash_test.sh` (`make check-crash`
# does that after installing).  Three rounds, each a full refresh held where
# this script chooses, then cut off:
#
#   round 1: held at the swap, after every row of its new partition is
#            written and indexed (this script's session reads
#            incentives.earnings in an open transaction, so the detach of
#            the old partition waits): kill -9 of the refresh's backend
#            (the server restarts every backend and recovers);
#   round 2: the same with jobs => 2, cut off by an immediate shutdown
#            (pg_ctlcluster ... stop -m immediate) and a start;
#   round 3: jobs => 3 over a "gate" view whose qual reads a table this
#            script holds locked, so every share waits in its read: kill -9
#            of one of the three background writers.
#
# After each: the earnings are exactly those of the last complete refresh
# (md5 of every row), incentives.earnings has its one partition (and the
# default one), the interrupted run is still 'running' until the next
# refresh marks it 'interrupted', and that next refresh succeeds and equals
# a fresh calculation.  Prints one PASS or FAIL line; exits non-zero on
# failure.  Environment: N_TXNS (100000).
set -euo pipefail

N_TXNS=${N_TXNS:-100000}
DB=incentives_crash
: "${PGVERSION:?PGVERSION is not set: run under pg_virtualenv}"
cd "$(dirname "$0")/../.."
WORK=$(mktemp -d)

q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
val() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -At -c "$1"; }
fail() {
  echo "check-crash: FAIL: $*" >&2
  psql -X -d "$DB" -c "SELECT run_id, status, participants, rows, error FROM incentives.calculation_runs ORDER BY run_id" >&2 || true
  exit 1
}
cleanup() {
  local pid
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_ready() {
  local i
  for i in $(seq 1 120); do
    pg_isready -q -d postgres && psql -X -At -d "$DB" -c "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  fail "the server did not come back"
}

earnings_md5() {
  val "SELECT md5(string_agg(e::text, E'\\n' ORDER BY e.participant_key COLLATE \"C\", e.offer_key COLLATE \"C\",
                                                    e.incentive_rate_key COLLATE \"C\", e.transaction_id COLLATE \"C\"))
         FROM (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount,
                      incentivized_amount, transaction_date, run_id FROM incentives.earnings) e"
}

echo "check-crash: $(psql -X -At -d postgres -c 'SHOW server_version'), $N_TXNS transactions"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION incentives"
q -v n_transactions="$N_TXNS" -v seed=11 -f bench/generate.sql >/dev/null
# the gate: gate.pass reads gate.blocker (a plain read, allowed in a
# parallel worker), which waits while this script holds the table locked
q <<SQL
SET client_min_messages = warning;
CREATE SCHEMA gate;
CREATE TABLE gate.blocker ();
CREATE FUNCTION gate.pass(id text) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL SAFE AS \$\$
BEGIN
    PERFORM 1 FROM gate.blocker;
    RETURN true;
END
\$\$;
CREATE VIEW gate.transactions AS
SELECT * FROM incentives.transactions t WHERE gate.pass(t.transaction_id);
VACUUM ANALYZE;
SQL

# crash_round TAG NAME HOW HOLD JOBS: HOW is kill (of the backend), immediate
# (shutdown) or kill-worker; HOLD is swap or gate
crash_round() {
  local tag=$1 name=$2 how=$3 hold=$4 jobs=$5 before runs_before pid i parts interrupted status victim
  # a complete refresh, then a change its successor would materialize
  q -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()"
  before=$(earnings_md5)
  runs_before=$(val "SELECT max(run_id) FROM incentives.calculation_runs")
  val "UPDATE incentives.transactions SET amount = amount * 2 WHERE transaction_id LIKE '%7'" >/dev/null

  # the controller holds the swap (a read of the earnings, its transaction
  # left open) or the gate (gate.blocker locked)
  mkfifo "$WORK/$tag.in"
  psql -X -q -At -d "$DB" <"$WORK/$tag.in" >"$WORK/$tag.ctl" 2>&1 &
  local ctl=$!
  exec {cfd}>"$WORK/$tag.in"
  case $hold in
    swap) printf '%s\n' "BEGIN;" "SELECT count(*) FROM incentives.earnings;" "\\echo HELD" >&"$cfd" ;;
    gate) printf '%s\n' "BEGIN;" "LOCK TABLE gate.blocker IN ACCESS EXCLUSIVE MODE;" "\\echo HELD" >&"$cfd" ;;
  esac
  for i in $(seq 1 200); do grep -q HELD "$WORK/$tag.ctl" && break; sleep 0.05; done

  local relation=incentives.transactions
  [ "$hold" = gate ] && relation=gate.transactions
  PGAPPNAME=incentives_crash_refresh psql -X -q -d "$DB" -c "SET client_min_messages = warning" \
    -c "CALL incentives.refresh_earnings(transactions => '$relation', jobs => $jobs)" \
    >"$WORK/$tag.refresh" 2>&1 &
  local refresh=$!
  pid=""
  victim=""
  for i in $(seq 1 1200); do
    case $hold in
      swap)
        pid=$(val "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'incentives refresh run %'
                     AND wait_event_type = 'Lock' AND wait_event = 'relation'
                     AND query LIKE '%refresh_earnings%' LIMIT 1" 2>/dev/null || true)
        victim=$pid ;;
      gate)
        # every share (each writer's, itself or one of its parallel
        # workers) waits at the gate
        victim=$(val "SELECT (SELECT min(w.pid) FROM pg_stat_activity w
                               WHERE w.backend_type = 'incentives refresh writer')
                        FROM pg_locks k JOIN pg_stat_activity a ON a.pid = k.pid
                       WHERE k.relation = 'gate.blocker'::regclass AND NOT k.granted
                      HAVING count(DISTINCT coalesce(a.leader_pid, a.pid)) = 3
                         AND (SELECT count(*) FROM pg_stat_activity
                               WHERE backend_type = 'incentives refresh writer') = 3" 2>/dev/null || true)
        pid=$(val "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'
                     AND query LIKE '%refresh_earnings(transactions%' AND pid <> pg_backend_pid() LIMIT 1" 2>/dev/null || true) ;;
    esac
    [ -n "$victim" ] && [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$victim" ] && [ -n "$pid" ] || fail "$name: the refresh was not held at the $hold: $(cat "$WORK/$tag.refresh")"
  local progress
  progress=$(val "SELECT application_name FROM pg_stat_activity WHERE pid = $pid")
  case $hold in
    swap) case $progress in
            *": 1000/1000") ;;
            *) fail "$name: the refresh was held at '$progress', not with every participant written" ;;
          esac ;;
  esac
  running=$(val "SELECT count(*) FROM incentives.calculation_runs WHERE status = 'running'")
  [ "$running" = 1 ] || fail "$name: the held refresh's run is not visible as running"

  case $how in
    kill|kill-worker) kill -9 "$victim" ;;
    immediate) pg_ctlcluster "$PGVERSION" regress stop -m immediate ;;
  esac
  wait "$refresh" 2>/dev/null || true
  exec {cfd}>&-
  wait "$ctl" 2>/dev/null || true
  if [ "$how" = immediate ]; then
    pg_ctlcluster "$PGVERSION" regress start
  fi
  wait_ready

  [ "$(earnings_md5)" = "$before" ] || fail "$name: the earnings are not those of the last complete refresh"
  parts=$(val "SELECT count(*) FROM pg_inherits WHERE inhparent = 'incentives.earnings'::regclass")
  [ "$parts" = 2 ] || fail "$name: incentives.earnings has $parts partitions"
  status=$(val "SELECT status FROM incentives.calculation_runs WHERE run_id > $runs_before ORDER BY run_id LIMIT 1")
  [ "$status" = running ] || fail "$name: the interrupted run is '$status' before the next refresh"

  orphans="SELECT count(*) FROM pg_class WHERE relname ~ '^earnings_run_[0-9]+$' AND relkind IN ('r', 'p') AND NOT relispartition"
  if [ "$jobs" -gt 1 ]; then
    # the run's partition was committed before its writers started
    [ "$(val "$orphans")" = 1 ] || fail "$name: the interrupted run left $(val "$orphans") unattached partitions, not its own"
  fi
  q -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings(jobs => $jobs)" \
    || fail "$name: the next refresh failed"
  [ "$(val "$orphans")" = 0 ] || fail "$name: an unattached partition survived the next refresh"
  interrupted=$(val "SELECT status || ' ' || (finished_at IS NOT NULL) FROM incentives.calculation_runs
                      WHERE run_id > $runs_before ORDER BY run_id LIMIT 1")
  [ "$interrupted" = "interrupted true" ] || fail "$name: the interrupted run is '$interrupted' after the next refresh"
  status=$(val "SELECT status FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1")
  [ "$status" = succeeded ] || fail "$name: the next refresh is '$status'"
  diff=$(val "SELECT count(*) FROM ((SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
                                       FROM incentives.earnings
                                     EXCEPT ALL
                                     SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
                                       FROM incentives.incentive_calculate())
                                    UNION ALL
                                    (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
                                       FROM incentives.incentive_calculate()
                                     EXCEPT ALL
                                     SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
                                       FROM incentives.earnings)) d")
  [ "$diff" = 0 ] || fail "$name: after the next refresh $diff rows differ from the calculation"
  echo "check-crash: $name: held at the $hold${progress:+ ('$progress')}; after $how the earnings are the last complete refresh's, one partition; the run was marked interrupted by the next refresh, which succeeded"
}

crash_round r1 "round 1 (kill -9 of the refresh's backend)" kill swap 1
crash_round r2 "round 2 (immediate shutdown, jobs => 2)" immediate swap 2
crash_round r3 "round 3 (kill -9 of one of three background writers, jobs => 3)" kill-worker gate 3

echo "check-crash: PASS (a refresh killed, a background writer killed, or cut off by an immediate shutdown left the earnings of the last complete refresh; the next refresh marked it interrupted, dropped its partition and succeeded)"
