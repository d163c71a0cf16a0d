#!/usr/bin/env bash
# crash_test.sh: a refresh_earnings that never finishes (docs/lifecycle.md,
# "The run log and crashes").
#
# Runs against the pg_virtualenv cluster the PG* variables name (it restarts
# it): `pg_virtualenv -t bash test/scripts/crash_test.sh` (`make check-crash`
# does that after installing).  Two rounds, each with a full refresh of
# everyone held half-way: it reads through a "gate" view whose qual, on one
# transaction of a participant in a later batch, waits for an advisory lock
# this script holds, so the refresh has written several batches of its new
# partition when it stops.  Then:
#
#   round 1: kill -9 of the refresh's backend (the server restarts every
#            backend and recovers);
#   round 2: an immediate shutdown (pg_ctlcluster ... stop -m immediate)
#            and a start.
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
GATE_LOCK=4343
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
# the gate: one transaction of the 701st participant (batch 8 of 10)
gate_id=$(val "SELECT min(transaction_id) FROM incentives.transactions
                WHERE participant_key = (SELECT DISTINCT participant_key COLLATE \"C\" FROM incentives.transactions
                                          ORDER BY 1 OFFSET 700 LIMIT 1)")
q <<SQL
SET client_min_messages = warning;
CREATE SCHEMA gate;
CREATE FUNCTION gate.pass(id text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS \$\$
BEGIN
    -- the first read of the row (the refresh listing the participants)
    -- passes; the second (the calculation of its batch) waits
    IF id = '$gate_id' THEN
        IF current_setting('gate.seen', true) = 'yes' THEN
            PERFORM pg_advisory_lock_shared($GATE_LOCK);
            PERFORM pg_advisory_unlock_shared($GATE_LOCK);
        ELSE
            PERFORM set_config('gate.seen', 'yes', false);
        END IF;
    END IF;
    RETURN true;
END
\$\$;
CREATE VIEW gate.transactions AS
SELECT * FROM incentives.transactions t WHERE gate.pass(t.transaction_id);
VACUUM ANALYZE;
SQL

crash_round() {
  local tag=$1 name=$2 how=$3 before runs_before pid i parts interrupted status
  # a complete refresh, then a change its successor would materialize
  q -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()"
  before=$(earnings_md5)
  runs_before=$(val "SELECT max(run_id) FROM incentives.calculation_runs")
  val "UPDATE incentives.transactions SET amount = amount * 2 WHERE transaction_id LIKE '%7'" >/dev/null

  # the controller holds the gate
  mkfifo "$WORK/$tag.in"
  psql -X -q -At -d "$DB" <"$WORK/$tag.in" >"$WORK/$tag.ctl" 2>&1 &
  local ctl=$!
  exec {cfd}>"$WORK/$tag.in"
  printf '%s\n' "SELECT pg_advisory_lock($GATE_LOCK);" "\\echo HELD" >&"$cfd"
  for i in $(seq 1 200); do grep -q HELD "$WORK/$tag.ctl" && break; sleep 0.05; done

  PGAPPNAME=incentives_crash_refresh psql -X -q -d "$DB" -c "SET client_min_messages = warning" \
    -c "CALL incentives.refresh_earnings(transactions => 'gate.transactions', progress_every => 100)" \
    >"$WORK/$tag.refresh" 2>&1 &
  local refresh=$!
  pid=""
  for i in $(seq 1 600); do
    pid=$(val "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'incentives%'
                 AND wait_event_type = 'Lock' AND wait_event = 'advisory'
                 AND query LIKE '%refresh_earnings%' LIMIT 1" 2>/dev/null || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || fail "$name: the refresh did not reach the gate: $(cat "$WORK/$tag.refresh")"
  local progress
  progress=$(val "SELECT application_name FROM pg_stat_activity WHERE pid = $pid")
  case $progress in
    *": 700/"*) ;;
    *) fail "$name: the refresh was held at '$progress', not after 7 of its 10 batches" ;;
  esac
  running=$(val "SELECT count(*) FROM incentives.calculation_runs WHERE status = 'running'")
  [ "$running" = 1 ] || fail "$name: the held refresh's run is not visible as running"

  case $how in
    kill) kill -9 "$pid" ;;
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

  q -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings()" \
    || fail "$name: the next refresh failed"
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
  echo "check-crash: $name: held at '$progress'; after $how the earnings are the last complete refresh's, one partition; the run was marked interrupted by the next refresh, which succeeded"
}

crash_round kill "round 1 (kill -9 of the refresh's backend)" kill
crash_round immediate "round 2 (immediate shutdown)" immediate

echo "check-crash: PASS (a refresh killed or cut off by an immediate shutdown left the earnings of the last complete refresh; the next refresh marked it interrupted and succeeded)"
