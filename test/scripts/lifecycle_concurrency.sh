#!/usr/bin/env bash
# lifecycle_concurrency.sh: the earnings lifecycle under concurrent sessions
# (docs/lifecycle.md).
#
# Runs against the server the PG* variables name, normally a throwaway
# cluster: `pg_virtualenv -t bash test/scripts/lifecycle_concurrency.sh`
# (`make check-lifecycle-concurrency` does that after installing).  Needs a
# superuser; works in its own database, dropped at the end.
#
# 1. Readers never see a half-written refresh.  A reader session reads
#    count(*) and sum(incentive_amount) of incentives.earnings over and
#    over while a full refresh replaces every row with different amounts:
#    (a) by the owner (a new partition swapped in; also with jobs => 2),
#    (b) by an admin that does not own the table (rows replaced in batches
#    of 10 participants, all in one transaction), (c) a changed_only
#    refresh of a fifth of the participants (replaced in batches too).  Every read must be the old
#    total or the new one, and both must have been seen.
# 2. Two settles never count the same earnings twice.
#    (a) Deterministic: session A settles inside a transaction block and
#        holds it open; session B's settle of the same date must wait
#        (its lock on incentives.statements), and once A commits B's lines are all zero.
#    (b) A race, SETTLE_ROUNDS rounds: transactions change, then two
#        sessions settle the same new date at the same moment.  After every
#        round, for every participant and offer the amounts due of all
#        lines add up to exactly what was earned through that date.
# 3. Two accrues never book the same accrual twice: ACCRUE_ROUNDS rounds of
#    two sessions accruing the same new month end at the same moment; after
#    every round, for every participant and offer the deltas of all its
#    lines add up to its latest accrual, which is the forecast's
#    accrual_to_date of that date, and only one line of the date books it.
# 4. Live refreshes (changed_only, docs/analyst-guide.md, Live earnings):
#    with nothing changed one returns at once and logs no run; while one
#    runs (held at its run row by this script's lock on
#    incentives.calculation_runs) a second returns at once with a NOTICE,
#    logs no run, and the changes it saw are refreshed by the first or
#    stay logged for the next.  (c) A change of every participant (a
#    SKU): the live run replaces every row in place, the partition kept;
#    it never waits for an idle repeatable-read reader (who keeps seeing
#    the old totals), inserts, updates and deletes of transactions made
#    while it runs do not wait for it and stay logged for the next run,
#    after which the earnings equal a calculation.
# Prints ok/FAIL lines; exits non-zero on any failure.
# Environment: N_TXNS (200000), SETTLE_ROUNDS (6), ACCRUE_ROUNDS (3), TEST_DB.
set -euo pipefail

N_TXNS=${N_TXNS:-200000}
SETTLE_ROUNDS=${SETTLE_ROUNDS:-6}
ACCRUE_ROUNDS=${ACCRUE_ROUNDS:-3}
DB=${TEST_DB:-incentives_lifecycle_concurrency}
WORK=$(mktemp -d)
cd "$(dirname "$0")/../.."
. test/scripts/lib.sh

cleanup() {
  drop_db
  psql_admin -c "DROP ROLE IF EXISTS incentives_lc_admin" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "== lifecycle concurrency: server $(psql_admin -At -c 'SHOW server_version'), $N_TXNS transactions"
create_db
psql_db -v n_transactions="$N_TXNS" -v seed=7 -f bench/generate.sql >/dev/null
psql_db <<'SQL'
SET client_min_messages = warning;
VACUUM ANALYZE;
CREATE SCHEMA lc;
CREATE TABLE lc.flag (done boolean NOT NULL);
INSERT INTO lc.flag VALUES (false);
-- the reader: reads the totals until the flag says done, each read in a
-- transaction of its own (a read must not hold its locks across the
-- refresh's swap), and keeps what it saw in lc.seen
CREATE TABLE lc.seen (n bigint, total numeric);
CREATE PROCEDURE lc.read_until_done()
LANGUAGE plpgsql AS $$
DECLARE
    c bigint;
    s numeric;
    d boolean;
BEGIN
    LOOP
        SELECT count(*), COALESCE(sum(e.incentive_amount), 0) INTO c, s FROM incentives.earnings e;
        INSERT INTO lc.seen VALUES (c, s);
        SELECT f.done INTO d FROM lc.flag f;
        COMMIT;
        EXIT WHEN d;
    END LOOP;
END
$$;
CREATE ROLE incentives_lc_admin NOLOGIN;
GRANT USAGE ON SCHEMA incentives, incentives_internal TO incentives_lc_admin;
GRANT SELECT ON ALL TABLES IN SCHEMA incentives TO incentives_lc_admin;
GRANT INSERT, UPDATE, DELETE ON incentives.earnings, incentives.calculation_runs,
      incentives.calculation_exceptions TO incentives_lc_admin;
GRANT SELECT, INSERT, DELETE ON incentives.earnings_changes TO incentives_lc_admin;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA incentives TO incentives_lc_admin;
CALL incentives.refresh_earnings();
SQL

# totals: "count total" of the materialized earnings / of a calculation
totals_materialized() { val "SELECT count(*) || ' ' || COALESCE(sum(incentive_amount), 0) FROM incentives.earnings"; }
totals_calculated() { val "SELECT count(*) || ' ' || COALESCE(sum(incentive_amount), 0) FROM incentives.incentive_calculate()"; }
# same_as_calculation: how many rows the earnings and a calculation do not share
same_as_calculation() {
  val "SELECT count(*) FROM (
         (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings
          EXCEPT ALL
          SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate())
         UNION ALL
         (SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.incentive_calculate()
          EXCEPT ALL
          SELECT participant_key, offer_key, incentive_rate_key, transaction_id, incentive_amount FROM incentives.earnings)) d"
}

# reader_during NAME CALL-SQL [ROLE [WHICH]]: the reader runs while CALL-SQL
# runs, after the purchases of the participants WHICH selects (default:
# everyone) changed
reader_during() {
  local name=$1 call=$2 role=${3:-} which=${4:-true} old new seen bad
  val "UPDATE incentives.transactions SET amount = amount + 1
        WHERE transaction_type = 'retailer_purchases_from_distribution' AND ($which)" >/dev/null
  old=$(totals_materialized)
  new=$(totals_calculated)
  [ "$old" != "$new" ] || { fail "$name: the change did not change the totals"; return; }
  val "UPDATE lc.flag SET done = false" >/dev/null
  val "TRUNCATE lc.seen" >/dev/null
  psql_db -c "CALL lc.read_until_done()" >"$WORK/$name.reader" 2>&1 &
  local reader=$!
  sleep 0.5
  if [ -n "$role" ]; then
    psql_db -c "SET client_min_messages = warning" -c "SET ROLE $role" -c "$call"
  else
    psql_db -c "SET client_min_messages = warning" -c "$call"
  fi
  sleep 0.5
  val "UPDATE lc.flag SET done = true" >/dev/null
  wait "$reader" || { fail "$name: the reader failed: $(cat "$WORK/$name.reader")"; return; }
  psql_db -At -F ' ' -c "SELECT n, total, count(*) FROM lc.seen GROUP BY 1, 2 ORDER BY 3 DESC" >"$WORK/$name.seen"
  [ "$(totals_materialized)" = "$new" ] || fail "$name: after the refresh the earnings are not the calculation"
  bad=$(awk -v o="$old" -v n="$new" '($1 " " $2) != o && ($1 " " $2) != n' "$WORK/$name.seen")
  seen=$(awk '{ printf "%s%s rows/%s x%s", (NR > 1 ? ", " : ""), $1, $2, $3 }' "$WORK/$name.seen")
  if [ -n "$bad" ]; then
    fail "$name: a reader saw totals that are neither the old ($old) nor the new ($new): $bad"
  elif ! grep -q "^$old " "$WORK/$name.seen" || ! grep -q "^$new " "$WORK/$name.seen"; then
    fail "$name: the reader did not see both the old and the new totals: $seen"
  else
    ok "$name: $(awk 'END {print NR}' "$WORK/$name.seen") distinct totals seen by the reader, only the old and the new ($seen)"
  fi
}

reader_during "1a refresh by the owner (partition swap)" "CALL incentives.refresh_earnings()"
reader_during "1a' refresh by the owner with jobs => 2 (a background writer)" "CALL incentives.refresh_earnings(jobs => 2)"
reader_during "1b refresh by a non-owner (batches in one transaction)" \
  "CALL incentives.refresh_earnings(progress_every => 10)" incentives_lc_admin
reader_during "1c changed_only refresh of a fifth of the participants (batches of 10)" \
  "CALL incentives.refresh_earnings(changed_only => true, progress_every => 10)" "" "abs(hashtext(participant_key)) % 5 = 0"

# ---- 2a: a settle waits for the other to commit ------------------------------
mkfifo "$WORK/a.in"
psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" <"$WORK/a.in" >"$WORK/a.out" 2>&1 &
apid=$!
exec {afd}>"$WORK/a.in"
printf '%s\n' "SET client_min_messages = warning;" "BEGIN;" "CALL incentives.settle('2026-01-31');" "\\echo A-SETTLED" >&"$afd"
for _ in $(seq 1 600); do grep -q A-SETTLED "$WORK/a.out" && break; sleep 0.05; done
grep -q A-SETTLED "$WORK/a.out" || fail "2a: session A did not settle: $(cat "$WORK/a.out")"
(PGAPPNAME=incentives_lc_b psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET client_min_messages = warning" \
   -c "CALL incentives.settle('2026-01-31')" >"$WORK/b.out" 2>&1; echo $? >"$WORK/b.rc") &
bpid=$!
waited=0
for _ in $(seq 1 200); do
  n=$(val "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'incentives_lc_b'
            AND wait_event_type = 'Lock' AND wait_event = 'relation'")
  if [ "$n" = 1 ]; then waited=1; break; fi
  sleep 0.05
done
[ "$waited" = 1 ] || fail "2a: session B's settle did not wait for session A's"
printf '%s\n' "COMMIT;" "\\q" >&"$afd"
exec {afd}>&-
wait "$apid" || fail "2a: session A failed: $(cat "$WORK/a.out")"
wait "$bpid" || true
[ "$(cat "$WORK/b.rc")" = 0 ] || fail "2a: session B's settle failed: $(cat "$WORK/b.out")"
res=$(val "SELECT count(*) || ' ' || count(*) FILTER (WHERE amount_due <> 0)
             FROM incentives.statement_lines WHERE statement_id = (SELECT max(statement_id) FROM incentives.statements)")
first=$(val "SELECT count(*) || ' ' || sum(amount_due) FROM incentives.statement_lines
              WHERE statement_id = (SELECT min(statement_id) FROM incentives.statements)")
if [ "$waited" = 1 ] && [ "${res#* }" = 0 ] && [ "${res% *}" -gt 0 ]; then
  ok "2a: B waited for A; A's statement: $first due; B's: ${res% *} lines, all 0.00 due"
else
  fail "2a: B's statement after A's has lines with an amount due ($res; A: $first)"
fi

# ---- 2b: two settles racing, round after round -------------------------------
for r in $(seq 1 "$SETTLE_ROUNDS"); do
  d=$(val "SELECT (date_trunc('month', date '2026-01-01' + interval '1 month' * ($r + 1)) - interval '1 day')::date")
  # some earnings change: returns, new purchases, a later date
  val "UPDATE incentives.transactions SET amount = -amount, quantity = -quantity
        WHERE transaction_id IN (SELECT transaction_id FROM incentives.transactions
                                  WHERE hashtext(transaction_id || $r) % 97 = 0 AND transaction_date <= '$d')" >/dev/null
  psql_db -c "SET client_min_messages = warning" -c "CALL incentives.settle('$d')" >"$WORK/r1.out" 2>&1 &
  p1=$!
  psql_db -c "SET client_min_messages = warning" -c "CALL incentives.settle('$d')" >"$WORK/r2.out" 2>&1 &
  p2=$!
  wait "$p1" || fail "2b round $r: a settle failed: $(cat "$WORK/r1.out")"
  wait "$p2" || fail "2b round $r: a settle failed: $(cat "$WORK/r2.out")"
  wrong=$(val "WITH due AS (SELECT participant_key, offer_key, sum(amount_due) AS settled
                              FROM incentives.statement_lines GROUP BY 1, 2),
                    earned AS (SELECT participant_key, offer_key, sum(incentive_amount) AS earned
                                 FROM incentives.incentive_calculate(through_date => '$d') GROUP BY 1, 2)
               SELECT count(*) FROM due FULL JOIN earned USING (participant_key, offer_key)
                WHERE COALESCE(settled, 0) <> COALESCE(earned, 0)")
  twice=$(val "SELECT count(*) FROM (SELECT l.participant_key, l.offer_key
                                      FROM incentives.statement_lines l JOIN incentives.statements s USING (statement_id)
                                     WHERE s.statement_date = '$d' AND l.amount_due <> 0
                                     GROUP BY 1, 2 HAVING count(*) > 1) x")
  if [ "$wrong" = 0 ] && [ "$twice" = 0 ]; then
    ok "2b round $r ($d): two settles at once; every pair's amounts due add up to its earnings through $d"
  else
    fail "2b round $r ($d): $wrong pairs whose settled total differs from the earnings, $twice paid twice"
  fi
done

# ---- 3: two accrues racing, round after round ---------------------------------
for r in $(seq 1 "$ACCRUE_ROUNDS"); do
  d=$(val "SELECT (date_trunc('month', date '2026-01-01' + interval '1 month' * ($r + 1)) - interval '1 day')::date")
  psql_db -c "SET client_min_messages = warning" -c "CALL incentives.accrue('$d')" >"$WORK/r1.out" 2>&1 &
  p1=$!
  psql_db -c "SET client_min_messages = warning" -c "CALL incentives.accrue('$d')" >"$WORK/r2.out" 2>&1 &
  p2=$!
  wait "$p1" || fail "3 round $r: an accrue failed: $(cat "$WORK/r1.out")"
  wait "$p2" || fail "3 round $r: an accrue failed: $(cat "$WORK/r2.out")"
  # every pair's deltas add up to its latest accrual, which is the forecast's
  wrong=$(val "WITH booked AS (SELECT participant_key, offer_key, sum(delta) AS booked,
                                      (array_agg(accrued_to_date ORDER BY accrual_id DESC))[1] AS latest
                                 FROM incentives.accrual_lines GROUP BY 1, 2),
                    forecast AS (SELECT participant_key, offer_key, accrual_to_date
                                   FROM incentives.forecast('$d'))
               SELECT count(*) FROM booked FULL JOIN forecast USING (participant_key, offer_key)
                WHERE booked IS DISTINCT FROM latest
                   OR COALESCE(latest, 0) <> COALESCE(accrual_to_date, 0)")
  twice=$(val "SELECT count(*) FROM (SELECT l.participant_key, l.offer_key
                                      FROM incentives.accrual_lines l JOIN incentives.accruals a USING (accrual_id)
                                     WHERE a.as_of_date = '$d' AND l.delta <> 0
                                     GROUP BY 1, 2 HAVING count(*) > 1) x")
  accruals=$(val "SELECT count(*) FROM incentives.accruals WHERE as_of_date = '$d'")
  if [ "$wrong" = 0 ] && [ "$twice" = 0 ] && [ "$accruals" = 2 ]; then
    ok "3 round $r ($d): two accrues at once; every pair's deltas add up to its forecast accrual of $d, booked once"
  else
    fail "3 round $r ($d): $wrong pairs whose booked total differs from the forecast, $twice booked twice, $accruals accruals"
  fi
done

# ---- 4. live refreshes ----------------------------------------------------------
psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings(changed_only => true)"
runs=$(val "SELECT count(*) FROM incentives.calculation_runs")
start=$(now_ms)
for i in $(seq 20); do
  psql_db -c "CALL incentives.refresh_earnings(changed_only => true)"
done
idle_ms=$(( ($(now_ms) - start) / 20 ))
[ "$(val "SELECT count(*) FROM incentives.earnings_changes")" = 0 ] \
  && [ "$(val "SELECT count(*) FROM incentives.calculation_runs")" = "$runs" ] \
  && ok "4a: 20 changed_only refreshes with nothing changed logged no run (${idle_ms} ms each with psql's start)" \
  || fail "4a: changed_only with nothing changed logged $(( $(val "SELECT count(*) FROM incentives.calculation_runs") - runs )) runs"
val "UPDATE incentives.transactions SET amount = amount + 1
      WHERE transaction_id IN (SELECT min(transaction_id) FROM incentives.transactions
                                GROUP BY participant_key ORDER BY 1 LIMIT 5)" >/dev/null
mkfifo "$WORK/live.in"
psql -X -q -At -d "$DB" <"$WORK/live.in" >"$WORK/live.ctl" 2>&1 &
ctl=$!
exec {lfd}>"$WORK/live.in"
printf '%s\n' "BEGIN;" "LOCK TABLE incentives.calculation_runs IN SHARE MODE;" "\\echo HELD" >&"$lfd"
for i in $(seq 1 200); do grep -q HELD "$WORK/live.ctl" && break; sleep 0.05; done
psql_db -c "CALL incentives.refresh_earnings(changed_only => true)" >"$WORK/live1.out" 2>&1 &
first=$!
# the first holds the refresh lock and waits at its run row
for i in $(seq 1 200); do
  [ "$(val "SELECT count(*) FROM pg_locks k JOIN pg_stat_activity a USING (pid)
             WHERE k.relation = 'incentives.calculation_runs'::regclass AND NOT k.granted")" -gt 0 ] && break
  sleep 0.05
done
runs=$(val "SELECT count(*) FROM incentives.calculation_runs")
start=$(now_ms)
psql_db -c "CALL incentives.refresh_earnings(changed_only => true)" >"$WORK/live2.out" 2>&1
second_ms=$(( $(now_ms) - start ))
grep -q "another refresh is running; the changes stay for the next one" "$WORK/live2.out" \
  && [ "$second_ms" -lt 5000 ] && kill -0 "$first" 2>/dev/null \
  && ok "4b: a changed_only refresh while another runs returned in $second_ms ms with a NOTICE" \
  || fail "4b: the second changed_only refresh took $second_ms ms: $(cat "$WORK/live2.out")"
printf '%s\n' "COMMIT;" >&"$lfd"
exec {lfd}>&-
wait "$ctl" 2>/dev/null || true
wait "$first" || fail "4b: the first changed_only refresh failed: $(cat "$WORK/live1.out")"
diff=$(same_as_calculation)
[ "$diff" = 0 ] && [ "$(val "SELECT count(*) FROM incentives.calculation_runs")" = $((runs + 1)) ] \
  && ok "4b: one run logged, by the first, and the earnings equal a calculation" \
  || fail "4b: $diff rows differ from a calculation; runs logged: $(( $(val "SELECT count(*) FROM incentives.calculation_runs") - runs ))"

# ---- 4c. a live refresh of everyone: in place, beside readers and writers ------
partition=$(val "SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'incentives.earnings'::regclass
                    AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass")
old=$(totals_materialized)
# an idle reader: a repeatable-read transaction that read the earnings
mkfifo "$WORK/idle.in"
psql -X -q -At -d "$DB" <"$WORK/idle.in" >"$WORK/idle.out" 2>&1 &
idle=$!
exec {ifd}>"$WORK/idle.in"
printf '%s\n' "BEGIN ISOLATION LEVEL REPEATABLE READ;" \
  "SELECT 'BEFORE ' || count(*) || ' ' || sum(incentive_amount) FROM incentives.earnings;" >&"$ifd"
for i in $(seq 1 200); do grep -q BEFORE "$WORK/idle.out" && break; sleep 0.05; done
# every participant changed (a SKU's label logs everyone)
val "UPDATE incentives.transactions SET amount = amount + 1
      WHERE transaction_type = 'retailer_purchases_from_distribution'" >/dev/null
val "UPDATE incentives.skus SET label = COALESCE(label, '') || '.'
      WHERE sku_key = (SELECT min(sku_key) FROM incentives.skus)" >/dev/null
new=$(totals_calculated)
# the live run is held once it consumed the change log, at its first write
mkfifo "$WORK/hold.in"
psql -X -q -At -d "$DB" <"$WORK/hold.in" >"$WORK/hold.out" 2>&1 &
holder=$!
exec {hfd}>"$WORK/hold.in"
printf '%s\n' "BEGIN;" "LOCK TABLE $partition IN SHARE MODE;" "\\echo HELD" >&"$hfd"
for i in $(seq 1 200); do grep -q HELD "$WORK/hold.out" && break; sleep 0.05; done
start=$(now_ms)
psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings(changed_only => true)" \
  >"$WORK/live3.out" 2>&1 &
live=$!
for i in $(seq 1 400); do
  [ "$(val "SELECT count(*) FROM pg_locks WHERE relation = '$partition'::regclass AND NOT granted")" -gt 0 ] && break
  sleep 0.05
done
# writers meanwhile: an insert, an update and a delete, none of them waiting
tid=$(val "SELECT min(transaction_id) FROM incentives.transactions")
wstart=$(now_ms)
if psql_db -c "SET lock_timeout = '2s'" \
     -c "INSERT INTO incentives.transactions (transaction_id, participant_key, transaction_type, transaction_date,
                                               sku_key, quantity, uom_key, amount)
         SELECT 'LIVE-4C', participant_key, transaction_type, transaction_date, sku_key, quantity, uom_key, amount
           FROM incentives.transactions WHERE transaction_id = '$tid'" \
     -c "UPDATE incentives.transactions SET amount = amount + 2 WHERE transaction_id = '$tid'" \
     -c "DELETE FROM incentives.transactions WHERE transaction_id = (SELECT max(transaction_id) FROM incentives.transactions)" \
     >"$WORK/writer.out" 2>&1; then
  ok "4c: an insert, an update and a delete of transactions took $(( $(now_ms) - wstart )) ms during a live refresh"
else
  fail "4c: a writer waited for the live refresh: $(cat "$WORK/writer.out")"
fi
printf '%s\n' "COMMIT;" >&"$hfd"
exec {hfd}>&-
wait "$holder" 2>/dev/null || true
# the live run ends while the idle reader still holds its snapshot
for i in $(seq 1 1200); do kill -0 "$live" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$live" 2>/dev/null; then
  fail "4c: the live refresh of everyone waits for an idle reader: $(val "SELECT wait_event_type || ' ' || wait_event FROM pg_stat_activity WHERE query LIKE 'CALL incentives.refresh_earnings%'")"
  kill "$live" 2>/dev/null || true
fi
wait "$live" || fail "4c: the live refresh failed: $(cat "$WORK/live3.out")"
live_ms=$(( $(now_ms) - start ))
printf '%s\n' "SELECT 'AFTER ' || count(*) || ' ' || sum(incentive_amount) FROM incentives.earnings;" "COMMIT;" >&"$ifd"
exec {ifd}>&-
wait "$idle" 2>/dev/null || true
now_partition=$(val "SELECT i.inhrelid::regclass FROM pg_inherits i
                      WHERE i.inhparent = 'incentives.earnings'::regclass
                        AND i.inhrelid <> 'incentives_internal.earnings_default'::regclass")
[ "$now_partition" = "$partition" ] && [ "$(totals_materialized)" != "$old" ] \
  && grep -q "^BEFORE $old\$" "$WORK/idle.out" && grep -q "^AFTER $old\$" "$WORK/idle.out" \
  && ok "4c: everyone refreshed in place ($partition kept) in $live_ms ms while an idle reader kept seeing $old" \
  || fail "4c: partition $partition -> $now_partition; totals $old -> $(totals_materialized); the reader saw: $(cat "$WORK/idle.out")"
pending=$(val "SELECT count(*) FROM incentives.earnings_changes")
[ "$pending" -gt 0 ] \
  && ok "4c: the writers' $pending changes logged during the run stay for the next one" \
  || fail "4c: the changes logged during the live run were consumed by it"
psql_db -c "SET client_min_messages = warning" -c "CALL incentives.refresh_earnings(changed_only => true)"
diff=$(same_as_calculation)
[ "$diff" = 0 ] && [ "$(val "SELECT count(*) FROM incentives.earnings_changes")" = 0 ] \
  && ok "4c: after the next live run the earnings equal a calculation" \
  || fail "4c: $diff rows differ from a calculation after the next live run"

if [ "$failures" -gt 0 ]; then
  echo "check-lifecycle-concurrency: $failures FAILED" >&2
  exit 1
fi
echo "check-lifecycle-concurrency: PASS"
