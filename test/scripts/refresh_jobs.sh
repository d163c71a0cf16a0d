#!/usr/bin/env bash
# refresh_jobs.sh: CALL incentives.refresh_earnings(jobs => N) behaves as
# one job does (docs/lifecycle.md, "jobs"), only with N processes.
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/refresh_jobs.sh` (`make
# check-refresh-jobs` does that after installing).  Needs a superuser;
# works in its own database, dropped at the end.  On bench/generate.sql's
# data (N_TXNS transactions, 1,000 participants):
#
# 1. The same earnings: full refreshes with jobs 1, 2 and 3 write the same
#    rows (every column but calculated_at and run_id) and log the same
#    participants, rows and total; with jobs, the run's partition is in
#    leaves by hash of participant_key, each row in the leaf PostgreSQL
#    routes it to, each leaf's rows in the primary key's order, each leaf
#    indexed by its writer.
# 2. on_error => 'skip': two participants with a transaction no unit
#    converts keep their previous earnings with jobs 3 as with jobs 1: the
#    same exceptions, the same earnings.
# 3. A worker's error (one of them, on_error => 'raise'): the run fails
#    with the same SQLSTATE and error text as with one job, the earnings
#    stay.
# 4. A cancel (jobs => 3: three background writers): the refresh's
#    backend, while its writers wait in their read (a "gate" view whose
#    qual reads a table this script holds locked), then one of the
#    writers: the run fails with 57014, the earnings stay, no writer and no
#    unattached partition is left.
# 5. A relation other processes cannot read (a temporary table): a NOTICE,
#    one process, the same earnings.  Inside a transaction block jobs > 1
#    are refused (25001) before a run is logged; jobs => 1 works there.
# 6. on_error => 'skip' when a participant fails after some of its rows
#    were written (more rows than the refresh holds back:
#    maintenance_work_mem 1MB and work_mem 64kB here), and when the read itself fails (a NULL sku_key, from a view):
#    the participant keeps its previous earnings, everyone else is
#    refreshed, with one job and with three.
# 7. Participant groups (docs/lifecycle.md, Participant groups): four
#    fifths of the participants in 40 chains (five movers join chain_1 and
#    chain_2 into one unit), 20 offers (10 standard, 5 stepped, 5 stacked)
#    copied with "aggregation": "group".
#    jobs 1, 2 and 3 (and 1 and 2 with work_mem 64kB, whose store is cut
#    into ranges of keys) write the same earnings, group_key included, as
#    a calculation; on_error => 'skip' with a member's bad transaction skips
#    every member of its unit, which keep their earnings, the same with
#    jobs 1 and 3; a changed_only refresh with jobs then recalculates the
#    whole unit.
# (A worker killed with kill -9 is check-crash's round 3.)  Prints ok/FAIL
# lines; exits non-zero on any failure.  Environment: N_TXNS (200000),
# TEST_DB.
set -euo pipefail

N_TXNS=${N_TXNS:-200000}
DB=${TEST_DB:-incentives_refresh_jobs}
WORK=$(mktemp -d)
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh

cleanup() {
  drop_db
  rm -rf "$WORK"
}
trap cleanup EXIT

# earnings: md5 of every row of incentives.earnings, every column but
# calculated_at and run_id
earnings() {
  val "SELECT md5(string_agg(e::text, E'\\n' ORDER BY e::text COLLATE \"C\"))
         FROM (SELECT participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key,
                      incentive_rate_measure, incentive_rate_value, offer_sku_pay_rate, transaction_id,
                      provided_quantity, provided_uom_key, provided_amount, incentivized_quantity,
                      incentivized_amount, incentive_amount, incentive_contribution_percent,
                      incentive_effective_rate, transaction_date, group_key, product_key,
                      grower_key, currency, exchange_rate
                 FROM incentives.earnings) e"
}
# last_run: the last run's status, counts and total (and error, with $1)
last_run() {
  val "SELECT concat_ws(' ', status, participants, rows, total_incentive, exceptions${1:+, sqlstate, error})
         FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1"
}
refresh() { psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings($1)"; }
# out_of_order: the earning rows that come, in their table's physical
# order, after a row with a greater primary key (a full refresh writes
# them in the key's order, leaf by leaf with jobs)
out_of_order() {
  val "SELECT count(*)
         FROM (SELECT (participant_key, offer_key, incentive_rate_key, transaction_id)
                      < (lag(participant_key) OVER w, lag(offer_key) OVER w,
                         lag(incentive_rate_key) OVER w, lag(transaction_id) OVER w) AS back
                 FROM incentives.earnings WINDOW w AS (PARTITION BY tableoid ORDER BY ctid)) AS r
        WHERE back"
}
# leaves: the leaves of the earnings' partition, each row's leaf the one
# PostgreSQL routes it to, and each leaf's own indexes (its writer built
# them): "leaves misrouted unindexed"
leaves() {
  val "SELECT concat_ws(' ', count(*),
                        coalesce(sum((SELECT count(*) FROM incentives.earnings AS e
                                       WHERE e.tableoid = l.relid
                                         AND NOT satisfies_hash_partition(l.parent, l.modulus, l.remainder,
                                                                          e.participant_key))), 0),
                        count(*) FILTER (WHERE NOT EXISTS (SELECT FROM pg_index AS x
                                                            WHERE x.indrelid = l.relid AND x.indisunique)
                                            OR NOT EXISTS (SELECT FROM pg_index AS x
                                                            WHERE x.indrelid = l.relid AND NOT x.indisunique)))
         FROM (SELECT t.relid, t.parentrelid AS parent, b[1]::int AS modulus, b[2]::int AS remainder
                 FROM pg_partition_tree('incentives.earnings') AS t
                 JOIN pg_class AS c ON c.oid = t.relid,
                      regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') AS b
                WHERE t.isleaf AND t.level = 2) AS l"
}

echo "== refresh jobs: server $(psql_admin -At -c 'SHOW server_version'), $N_TXNS transactions, max_worker_processes $(psql_admin -At -c 'SHOW max_worker_processes')"
create_db
psql_db -v n_transactions="$N_TXNS" -v seed=5 -f bench/generate.sql >/dev/null
psql_db -c "VACUUM ANALYZE" >/dev/null

# ---- 1. the same earnings --------------------------------------------------
refresh "jobs => 1"
one=$(earnings)
one_run=$(last_run)
[ "$(out_of_order)" = 0 ] \
  && ok "jobs => 1 writes its rows in the primary key's order" \
  || fail "rows out of the primary key's order: jobs => 1 $(out_of_order)"
for jobs in 2 3; do
  refresh "jobs => $jobs"
  [ "$(earnings)" = "$one" ] && [ "$(last_run)" = "$one_run" ] \
    && ok "jobs => $jobs writes the earnings of jobs => 1 ($one_run)" \
    || fail "jobs => $jobs: $(last_run), earnings $(earnings); jobs => 1: $one_run, earnings $one"
  [ "$(leaves)" = "$jobs 0 0" ] && [ "$(out_of_order)" = 0 ] \
    && ok "jobs => $jobs: $jobs leaves, every row in its leaf, each leaf in the key's order and indexed" \
    || fail "jobs => $jobs: leaves, misrouted rows, unindexed leaves: $(leaves); rows out of order: $(out_of_order)"
done

# ---- 2. and 3. failing participants ------------------------------------------
sku=$(val "SELECT document #>> '{incentives,0,rates,0,sku_key}' FROM incentives.offers
            WHERE document ->> 'strategy_key' = 'standard' ORDER BY offer_key LIMIT 1")
period=$(val "SELECT document #>> '{periods,0,start_date}' FROM incentives.offers
               WHERE document ->> 'strategy_key' = 'standard' ORDER BY offer_key LIMIT 1")
ttype=$(val "SELECT document #>> '{incentives,0,transaction_type}' FROM incentives.offers
              WHERE document ->> 'strategy_key' = 'standard' ORDER BY offer_key LIMIT 1")
val "INSERT INTO incentives.transactions
     SELECT 'BAD-' || p, p, '$ttype', date '$period' + 1, '$sku', 1, 'drum', 10
       FROM (SELECT DISTINCT participant_key AS p FROM incentives.transactions ORDER BY 1 LIMIT 2) s" >/dev/null
exceptions() {
  val "SELECT string_agg(concat_ws(':', participant_key, transaction_id, sqlstate, message), ' | '
                         ORDER BY participant_key)
         FROM incentives.calculation_exceptions
        WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs)"
}
refresh "on_error => 'skip', jobs => 1"
skip_one=$(earnings)
skip_one_run=$(last_run)
skip_one_ex=$(exceptions)
case $skip_one_run in
  "completed_with_exceptions "*" 2") ;;
  *) fail "on_error => 'skip' with one job: $skip_one_run" ;;
esac
for jobs in 2 3; do
  refresh "on_error => 'skip', jobs => $jobs"
  [ "$(earnings)" = "$skip_one" ] && [ "$(last_run)" = "$skip_one_run" ] && [ "$(exceptions)" = "$skip_one_ex" ] \
    && ok "on_error => 'skip' with jobs => $jobs: the exceptions and earnings of one job ($skip_one_ex)" \
    || fail "on_error => 'skip' with jobs => $jobs: $(last_run): $(exceptions); one job: $skip_one_run: $skip_one_ex"
done

# one failing participant (with two, either could be the first to fail)
val "DELETE FROM incentives.transactions WHERE transaction_id = 'BAD-' || (SELECT min(participant_key) FROM incentives.transactions)" >/dev/null
before=$(earnings)
refresh "jobs => 1" 2>/dev/null && fail "a refresh over the bad transactions succeeded"
raise_one=$(last_run error)
refresh "jobs => 2" 2>/dev/null && fail "a refresh over the bad transactions succeeded with jobs => 2"
raise_merged=$(last_run error)
[ "$raise_merged" = "$raise_one" ] && [ "$(earnings)" = "$before" ] \
  && ok "with jobs => 2 an error of either share fails the run as one job does, the earnings stay" \
  || fail "jobs => 2 failed with '$raise_merged' (one job: '$raise_one'), earnings kept: $([ "$(earnings)" = "$before" ] && echo yes || echo no)"
refresh "jobs => 3" 2>"$WORK/raise.err" && fail "a refresh over the bad transactions succeeded with jobs => 3"
raise_two=$(last_run error)
[ "$raise_two" = "$raise_one" ] && [ "$(earnings)" = "$before" ] \
  && ok "a worker's error fails the run as one job does, the earnings stay ($raise_two)" \
  || fail "jobs => 3 failed with '$raise_two' (one job: '$raise_one'), earnings kept: $([ "$(earnings)" = "$before" ] && echo yes || echo no)"
grep -q "no unit conversion" "$WORK/raise.err" \
  && ok "the worker's error reaches the caller: $(grep ERROR "$WORK/raise.err" | head -1)" \
  || fail "the caller got: $(cat "$WORK/raise.err")"
val "DELETE FROM incentives.transactions WHERE transaction_id LIKE 'BAD-%'" >/dev/null
refresh "jobs => 2"
[ "$(earnings)" = "$one" ] || fail "the earnings after removing the bad transactions differ from the first refresh's"

# ---- 4. cancels --------------------------------------------------------------
psql_db <<SQL
SET client_min_messages = warning;
CREATE SCHEMA gate;
CREATE TABLE gate.blocker ();
-- STABLE: a volatile function's query would start a new command, which a
-- parallel read refuses once the refresh's transaction has written
CREATE FUNCTION gate.pass(id text) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL SAFE AS \$\$
BEGIN
    PERFORM 1 FROM gate.blocker;
    RETURN true;
END
\$\$;
CREATE VIEW gate.transactions AS
SELECT * FROM incentives.transactions t WHERE gate.pass(t.transaction_id);
SQL

# cancel_round NAME WHO: WHO is backend or worker
cancel_round() {
  local name=$1 who=$2 tag=$2 ctl refresh victim="" i left
  mkfifo "$WORK/$tag.in"
  psql -X -q -At -d "$DB" <"$WORK/$tag.in" >"$WORK/$tag.ctl" 2>&1 &
  ctl=$!
  exec {cfd}>"$WORK/$tag.in"
  printf '%s\n' "BEGIN;" "LOCK TABLE gate.blocker IN ACCESS EXCLUSIVE MODE;" "\\echo HELD" >&"$cfd"
  for i in $(seq 1 200); do grep -q HELD "$WORK/$tag.ctl" && break; sleep 0.05; done
  psql -X -q -d "$DB" -c "SET client_min_messages = warning" \
    -c "CALL incentives.refresh_earnings(transactions => 'gate.transactions', jobs => 3)" \
    >"$WORK/$tag.refresh" 2>&1 &
  refresh=$!
  for i in $(seq 1 1200); do
    # every share (each writer's, itself or one of its parallel workers)
    # waits at the gate
    victim=$(val "SELECT CASE '$who' WHEN 'backend'
                         THEN (SELECT min(l.pid) FROM pg_stat_activity l
                                WHERE l.backend_type = 'client backend' AND l.pid <> pg_backend_pid()
                                  AND l.query LIKE '%refresh_earnings(transactions%')
                         ELSE (SELECT min(w.pid) FROM pg_stat_activity w
                                WHERE w.backend_type = 'incentives refresh writer') END
                    FROM pg_locks k JOIN pg_stat_activity a ON a.pid = k.pid
                   WHERE k.relation = 'gate.blocker'::regclass AND NOT k.granted
                  HAVING count(DISTINCT coalesce(a.leader_pid, a.pid)) = 3
                     AND (SELECT count(*) FROM pg_stat_activity
                           WHERE backend_type = 'incentives refresh writer') = 3" 2>/dev/null || true)
    [ -n "$victim" ] && break
    sleep 0.1
  done
  if [ -z "$victim" ]; then
    fail "$name: the workers did not reach the gate: $(cat "$WORK/$tag.refresh")
$(val "SELECT string_agg(concat_ws(' ', pid, backend_type, state, wait_event_type, wait_event, left(query, 60)), E'\n')
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")"
  else
    val "SELECT pg_cancel_backend($victim)" >/dev/null
  fi
  # the gate opens (the other writers, cancelled, stop at once)
  printf '%s\n' "ROLLBACK;" >&"$cfd"
  wait "$refresh" 2>/dev/null || true
  exec {cfd}>&-
  wait "$ctl" 2>/dev/null || true
  left=$(val "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'incentives refresh writer'")
  orphans=$(val "SELECT count(*) FROM pg_class WHERE relname ~ '^earnings_run_[0-9]+$' AND relkind IN ('r', 'p') AND NOT relispartition")
  run=$(val "SELECT concat_ws(' ', status, sqlstate) FROM incentives.calculation_runs ORDER BY run_id DESC LIMIT 1")
  [ "$run" = "failed 57014" ] && [ "$(earnings)" = "$one" ] && [ "$left" = 0 ] && [ "$orphans" = 0 ] \
    && ok "$name: the run failed ($run), the earnings stayed, no writer and no partition of it is left" \
    || fail "$name: run '$run', earnings kept: $([ "$(earnings)" = "$one" ] && echo yes || echo no), writers left: $left, unattached partitions: $orphans; $(cat "$WORK/$tag.refresh")"
}
cancel_round "a cancel of the refresh's backend while its workers read" backend
cancel_round "a cancel of one of its workers" worker

# ---- 5. one process, transaction blocks --------------------------------------
psql_db >"$WORK/temp.out" 2>&1 <<'SQL'
SET client_min_messages = notice;
CREATE TEMPORARY TABLE lines AS SELECT * FROM incentives.transactions;
CALL incentives.refresh_earnings(transactions => 'pg_temp.lines', jobs => 2);
SQL
grep -q "one process instead of 2 jobs: it reads lines, which the background writers cannot read" "$WORK/temp.out" \
  && [ "$(earnings)" = "$one" ] \
  && ok "a temporary table: one process, with a NOTICE, the same earnings" \
  || fail "a temporary table with jobs => 2: $(cat "$WORK/temp.out")"
runs_before=$(val "SELECT count(*) FROM incentives.calculation_runs")
psql_db -v VERBOSITY=verbose -c "SET client_min_messages = warning" -c "BEGIN" \
  -c "CALL incentives.refresh_earnings(jobs => 3)" -c "COMMIT" >"$WORK/block.out" 2>&1 || true
grep -q "ERROR:  25001: refresh_earnings with jobs > 1 cannot run inside a transaction block" "$WORK/block.out" \
  && [ "$(val "SELECT count(*) FROM incentives.calculation_runs")" = "$runs_before" ] \
  && [ "$(earnings)" = "$one" ] \
  && ok "inside a transaction block jobs => 3 is refused (25001), no run logged, the earnings stay" \
  || fail "inside a transaction block: $(cat "$WORK/block.out")"
psql_db -c "SET client_min_messages = warning" -c "BEGIN" -c "CALL incentives.refresh_earnings(jobs => 1)" -c "COMMIT"
[ "$(earnings)" = "$one" ] && [ "$(last_run)" = "$one_run" ] \
  && ok "inside a transaction block jobs => 1: the same earnings" \
  || fail "inside a transaction block: $(last_run)"

# ---- 6. skipped after some rows, and a failing read ---------------------------
# participant_rows KEY: md5 of its rows in incentives.earnings (with run_id)
participant_rows() {
  val "SELECT md5(string_agg(e::text, E'\n' ORDER BY e::text COLLATE \"C\"))
         FROM (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount, run_id
                 FROM incentives.earnings WHERE participant_key = '$1') e"
}
# others_equal KEY: every other participant's rows equal a calculation
# (of the transactions without KEY's, which may not calculate)
others_equal() {
  psql_db -c "CREATE OR REPLACE VIEW public.without_one AS
                SELECT * FROM incentives.transactions WHERE participant_key <> '$1'"
  val "SELECT count(*) FROM (
         (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
            FROM incentives.earnings WHERE participant_key <> '$1'
          EXCEPT ALL
          SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
            FROM incentives.incentive_calculate(transactions => 'public.without_one'))
         UNION ALL
         (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
            FROM incentives.incentive_calculate(transactions => 'public.without_one')
          EXCEPT ALL
          SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount
            FROM incentives.earnings WHERE participant_key <> '$1')) d"
}
big=$(val "SELECT participant_key FROM incentives.transactions GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
# sixty more copies of its transactions (more rows than 1MB holds), then one whose unit does not convert
# (a dollars_per_unit offer converts its quantities while it writes its
# rows, after the offers before it wrote theirs)
val "INSERT INTO incentives.transactions
     SELECT transaction_id || '-copy' || c, participant_key, transaction_type, transaction_date, sku_key,
            quantity, uom_key, amount
       FROM incentives.transactions, generate_series(1, 60) c WHERE participant_key = '$big'" >/dev/null
# failing_offer(P, ID, KEYS): the SKU, date and type of a transaction ID
# of P that fails P's calculation (a drum, which no unit converts), in
# the last dollars_per_unit offer whose key is LIKE KEYS (or else the last
# other one: a transaction fails only where it reaches a result,
# docs/reference.md, Data errors under the rules), as sku|date|type
psql_db <<'SQL'
SET client_min_messages = warning;
CREATE FUNCTION public.failing_offer(p text, id text, keys text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT document #>> '{incentives,0,rates,0,sku_key}' AS sku,
                    (SELECT (d ->> 'start_date')::date + 1 FROM jsonb_array_elements(document -> 'periods') AS d
                      WHERE d ->> 'key' = document #>> '{incentives,0,period_key}') AS day,
                    document #>> '{incentives,0,transaction_type}' AS ttype
               FROM incentives.offers
              WHERE document #>> '{incentives,0,rates,0,sku_key}' IS NOT NULL
                AND document #>> '{incentives,0,transaction_type}' IS NOT NULL
                AND document #>> '{incentives,0,period_key}' IS NOT NULL
                AND offer_key LIKE keys
              ORDER BY document ->> 'calculator_key' = 'dollars_per_unit' DESC, offer_key DESC LOOP
        BEGIN
            INSERT INTO incentives.transactions VALUES (id, p, o.ttype, o.day, o.sku, 1, 'drum', 10);
            PERFORM count(*) FROM incentives.incentive_calculate(p);
            RAISE EXCEPTION 'it pays' USING ERRCODE = 'P0001';
        EXCEPTION
            WHEN invalid_parameter_value THEN RETURN concat_ws('|', o.sku, o.day, o.ttype);
            WHEN raise_exception THEN NULL;
        END;
    END LOOP;
    RETURN NULL;
END
$$;
SQL
IFS='|' read -r dpu_sku dpu_day dpu_type <<< "$(val "SELECT public.failing_offer('$big', 'BAD-LATE', '%')")"
[ -n "$dpu_sku" ] || fail "no offer fails on a drum of $big"
refresh "jobs => 1"
kept=$(participant_rows "$big")
val "INSERT INTO incentives.transactions VALUES
       ('BAD-LATE', '$big', '$dpu_type', date '$dpu_day', '$dpu_sku', 1, 'drum', 10)" >/dev/null
partial=$(psql_db -At -c "SET work_mem = '64kB'" -c "SET maintenance_work_mem = '1MB'" -c "BEGIN" \
  -c "CREATE TABLE incentives_internal.partial_probe (LIKE incentives.earnings)" \
  -c "SELECT array_to_string(partial_participants, ',') FROM incentives_internal.refresh_write(
        'incentives_internal.partial_probe', -1, 'incentives.transactions', 1000, true, 1)" -c "ROLLBACK" | tail -n 1)
[ "$partial" = "$big" ] && ok "a participant with more rows than the refresh holds fails after some were written ($big)" \
  || fail "the partial participants of the probe: '$partial', expected '$big'"
for jobs in 1 2 3; do
  psql_db -c "SET client_min_messages = warning" -c "SET work_mem = '64kB'" -c "SET maintenance_work_mem = '1MB'" \
    -c "CALL incentives.refresh_earnings(on_error => 'skip', jobs => $jobs)"
  [ "$(participant_rows "$big")" = "$kept" ] && [ "$(others_equal "$big")" = 0 ] \
    && [ "$(exceptions)" = "$big:BAD-LATE:22023:$(val "SELECT message FROM incentives.calculation_exceptions ORDER BY run_id DESC LIMIT 1")" ] \
    && ok "skipped after some of its rows were written, jobs => $jobs: $big kept its earnings, the others were refreshed" \
    || fail "skipped after some of its rows, jobs => $jobs: $(last_run); $(exceptions); others differ: $(others_equal "$big")"
done
val "DELETE FROM incentives.transactions WHERE transaction_id = 'BAD-LATE' OR transaction_id LIKE '%-copy%'" >/dev/null
refresh "jobs => 1"

null_id=$(val "SELECT min(transaction_id) FROM incentives.transactions WHERE participant_key = '$big'")
kept=$(participant_rows "$big")
psql_db -c "CREATE VIEW public.lines_with_a_null AS
              SELECT transaction_id, participant_key, transaction_type, transaction_date,
                     CASE WHEN transaction_id = '$null_id' THEN NULL ELSE sku_key END AS sku_key,
                     quantity, uom_key, amount
                FROM incentives.transactions" >/dev/null
for jobs in 1 2 3; do
  refresh "transactions => 'public.lines_with_a_null', on_error => 'skip', jobs => $jobs"
  ex=$(exceptions)
  [ "$(participant_rows "$big")" = "$kept" ] && [ "$(others_equal "$big")" = 0 ] \
    && [ "$ex" = "$big:$null_id:23502:column \"sku_key\" of transaction \"$null_id\" in relation public.lines_with_a_null is NULL" ] \
    && ok "a read that fails, jobs => $jobs: $big kept its earnings, the others were refreshed ($ex)" \
    || fail "a read that fails, jobs => $jobs: $(last_run); $ex; others differ: $(others_equal "$big")"
done

# ---- 7. participant groups ----------------------------------------------------
psql_db >/dev/null <<'SQL'
SET client_min_messages = warning;
WITH p AS (SELECT participant_key AS p, row_number() OVER (ORDER BY participant_key COLLATE "C") AS n
             FROM (SELECT DISTINCT participant_key FROM incentives.transactions) d),
     mid AS (SELECT min(transaction_date) + (max(transaction_date) - min(transaction_date)) / 2 AS d
               FROM incentives.transactions)
INSERT INTO incentives.participant_groups (participant_key, group_key, start_date, end_date)
SELECT p.p, format('chain_%s', p.n % 40), date '2000-01-01', CASE WHEN p.n % 200 = 1 THEN mid.d END
  FROM p, mid WHERE p.n % 5 <> 0
UNION ALL
SELECT p.p, format('chain_%s', (p.n + 1) % 40), mid.d + 1, NULL
  FROM p, mid WHERE p.n % 200 = 1;
INSERT INTO incentives.offers (document)
SELECT document || jsonb_build_object('offer_key', offer_key || '.group', 'aggregation', 'group')
  FROM (SELECT document, offer_key,
               row_number() OVER (PARTITION BY document ->> 'strategy_key' ORDER BY offer_key) AS n
          FROM incentives.offers) AS o
 WHERE n <= CASE document ->> 'strategy_key' WHEN 'standard' THEN 10 ELSE 5 END;
SQL
units=$(val "SELECT count(DISTINCT unit_key) || ' units of ' || count(*) || ' keys, the largest ' ||
                    (SELECT max(c) FROM (SELECT count(*) AS c FROM incentives_internal.participant_units() GROUP BY unit_key) m)
               FROM incentives_internal.participant_units()")
# calculation_diff: rows of incentives.earnings and of a calculation that differ
calculation_diff() {
  val "SELECT count(*) FROM (
         (SELECT participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key, incentive_rate_measure,
                 incentive_rate_value, offer_sku_pay_rate, transaction_id, provided_quantity, provided_uom_key,
                 provided_amount, incentivized_quantity, incentivized_amount, incentive_amount,
                 incentive_contribution_percent, incentive_effective_rate, transaction_date, group_key, product_key,
                 grower_key, currency, exchange_rate
            FROM incentives.earnings
          EXCEPT ALL
          SELECT * FROM incentives_internal.calculate_dated(NULL, '{}', NULL, 'incentives.transactions', NULL, NULL))
         UNION ALL
         (SELECT * FROM incentives_internal.calculate_dated(NULL, '{}', NULL, 'incentives.transactions', NULL, NULL)
          EXCEPT ALL
          SELECT participant_key, offer_key, offer_calculator, sku_key, incentive_rate_key, incentive_rate_measure,
                 incentive_rate_value, offer_sku_pay_rate, transaction_id, provided_quantity, provided_uom_key,
                 provided_amount, incentivized_quantity, incentivized_amount, incentive_amount,
                 incentive_contribution_percent, incentive_effective_rate, transaction_date, group_key, product_key,
                 grower_key, currency, exchange_rate
            FROM incentives.earnings)) d"
}
refresh "jobs => 1"
g_one=$(earnings)
g_one_run=$(last_run)
g_rows=$(val "SELECT count(*) FILTER (WHERE group_key IS NOT NULL) || ' rows under ' ||
                     count(DISTINCT group_key) || ' groups'
                FROM incentives.earnings")
diff=$(calculation_diff)
[ "$diff" = 0 ] && [ "${g_rows%% *}" -gt 0 ] \
  && ok "groups ($units): jobs => 1 writes a calculation's rows, group_key included ($g_rows; $g_one_run)" \
  || fail "groups: jobs => 1 differs from a calculation in $diff rows ($g_rows)"
for round in "3 default" "2 default" "1 64kB" "2 64kB"; do
  jobs=${round% *}
  mem=${round#* }
  set_mem=()
  [ "$mem" = default ] || set_mem=(-c "SET work_mem = '$mem'")
  psql_db -c "SET client_min_messages = warning" "${set_mem[@]}" \
    -c "CALL incentives.refresh_earnings(jobs => $jobs)"
  [ "$(earnings)" = "$g_one" ] && [ "$(last_run)" = "$g_one_run" ] \
    && ok "groups: jobs => $jobs (work_mem $mem) writes the earnings of jobs => 1" \
    || fail "groups: jobs => $jobs (work_mem $mem): $(last_run), earnings $(earnings); jobs => 1: $g_one_run, $g_one"
done

# a member's transaction no unit converts, in an offer aggregated by group
member=$(val "SELECT participant_key FROM incentives.participant_groups WHERE group_key = 'chain_3'
               ORDER BY participant_key COLLATE \"C\" LIMIT 1")
unit_members() {
  val "SELECT string_agg(u.participant_key, ',' ORDER BY u.participant_key COLLATE \"C\")
         FROM incentives_internal.participant_units() AS u
        WHERE u.unit_key = (SELECT unit_key FROM incentives_internal.participant_units() WHERE participant_key = '$member')
          AND EXISTS (SELECT FROM incentives.transactions AS t WHERE t.participant_key = u.participant_key)"
}
unit_rows() {
  val "SELECT md5(string_agg(e::text, E'\n' ORDER BY e::text COLLATE \"C\"))
         FROM (SELECT e.participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount, group_key, run_id
                 FROM incentives.earnings AS e
                WHERE e.participant_key = ANY (string_to_array('$(unit_members)', ','))) e"
}
IFS='|' read -r g_sku g_day g_type <<< "$(val "SELECT public.failing_offer('$member', 'BAD-GROUP', '%.group')")"
[ -n "$g_sku" ] || fail "no offer aggregated by group fails on a drum of $member"
kept=$(unit_rows)
val "INSERT INTO incentives.transactions VALUES
       ('BAD-GROUP', '$member', '$g_type', date '$g_day', '$g_sku', 1, 'drum', 10)" >/dev/null
expected=$(unit_members)
refresh "on_error => 'skip', jobs => 1"
g_skip=$(earnings)
g_skip_run=$(last_run)
g_skip_ex=$(exceptions)
# every member of the unit is skipped; only the member whose transaction
# failed is told which one (docs/security.md), the others that a
# transaction of another member of the group cannot be calculated
skipped=$(val "SELECT string_agg(participant_key, ',' ORDER BY participant_key COLLATE \"C\")
                 FROM incentives.calculation_exceptions
                WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs)
                  AND (transaction_id = 'BAD-GROUP'
                       OR (transaction_id IS NULL AND message LIKE 'a transaction of another member of group %'))")
named=$(val "SELECT string_agg(participant_key, ',')
               FROM incentives.calculation_exceptions
              WHERE run_id = (SELECT max(run_id) FROM incentives.calculation_runs)
                AND transaction_id = 'BAD-GROUP'")
[ "$skipped" = "$expected" ] && [ "$named" = "$member" ] && [ "$(unit_rows)" = "$kept" ] \
  && ok "groups, on_error => 'skip': a member's bad transaction skips its unit's $(tr ',' '\n' <<< "$expected" | wc -l) members, which keep their earnings ($g_skip_run)" \
  || fail "groups, on_error => 'skip', jobs => 1: skipped '$skipped', expected '$expected'; named by '$named', expected '$member'; rows kept: $([ "$(unit_rows)" = "$kept" ] && echo yes || echo no)"
refresh "on_error => 'skip', jobs => 3"
[ "$(earnings)" = "$g_skip" ] && [ "$(last_run)" = "$g_skip_run" ] && [ "$(exceptions)" = "$g_skip_ex" ] \
  && ok "groups, on_error => 'skip' with jobs => 3: the exceptions and earnings of one job" \
  || fail "groups, on_error => 'skip' with jobs => 3: $(last_run); one job: $g_skip_run"
val "DELETE FROM incentives.transactions WHERE transaction_id = 'BAD-GROUP'" >/dev/null
recalc=$(psql_db -c "SET client_min_messages = notice" \
           -c "CALL incentives.refresh_earnings(changed_only => true, jobs => 3)" 2>&1 | grep -c "refresh_earnings" || true)
[ "$(earnings)" = "$g_one" ] && [ "$(calculation_diff)" = 0 ] \
  && ok "groups: changed_only (jobs => 3) recalculates the skipped unit: the earnings of jobs => 1 ($(last_run))" \
  || fail "groups: changed_only after the skip: $(last_run), $(calculation_diff) rows differ from a calculation"

finish refresh-jobs
