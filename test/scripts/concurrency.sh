#!/usr/bin/env bash
# concurrency.sh: incentive_calculate under concurrent sessions
# (docs/reference.md, incentive_calculate: "sees one consistent snapshot").
#
# Runs against the server the PG* environment variables name, normally a
# throwaway cluster: `pg_virtualenv -t bash test/scripts/concurrency.sh`
# (`make check-concurrency` does that after `make install`).  Needs a
# superuser (CREATE DATABASE, CREATE EXTENSION).  Works in its own
# database, dropped at the end.
#
# A "gate" makes the interleavings deterministic instead of timing-based:
# the view load.gated is incentives.transactions with a VOLATILE qual that,
# on one transaction of participant P0100 (half-way through the
# participant-ordered cursor), takes a shared advisory lock the controller
# session holds exclusively.  A calculation through the view therefore stops
# in the middle of its transaction stream, after half of the participants
# are calculated, until the controller lets it go.
#
# 1. One snapshot within a statement: session A calculates through the gate
#    and blocks mid-stream; session B updates and deletes transactions of
#    participants before and after the gate, inserts new ones, changes an
#    offer's rate, a SKU's unit and a stored property, and commits; A is let
#    go.  A's result must equal the result before B's change, and a fresh
#    calculation must differ from it (B's change does matter).
# 2. One snapshot within a REPEATABLE READ transaction: A opens the
#    transaction, DECLAREs a cursor over the calculation and FETCHes 10 rows;
#    B changes offers and transactions and commits; A FETCHes the rest, and
#    calculates again in the same transaction: both equal the result before
#    B's change; after COMMIT A sees B's change.
# 3. Concurrent calculations: two sessions wait at the gate, are let go
#    together and calculate at the same time: both results equal each other
#    and a calculation run alone.
# 4. Enrollment windows (docs/reference.md, Enrollment): two sessions add
#    overlapping windows of one participant and offer at the same time; the
#    second waits for the first and is refused with 23P01 once it commits,
#    under READ COMMITTED and REPEATABLE READ (its snapshot taken before).
# 5. Participant groups: overlapping windows and a two-key cycle written at
#    the same time (23P01, 22023).
# 6. The product catalog (docs/reference.md, Products): two sessions each
#    set one parent, together closing a cycle of four products whose edges
#    share no key (A -> B in one, C -> D in the other, B -> C and D -> A
#    stored); two sessions add overlapping windows of one SKU in one
#    product; one deletes a product while the other adds a window in it.
#    The second waits for the first (one lock for every write of the
#    catalog), then is refused (22023, 23P01, 23503), whatever its
#    isolation level.
# 7. Participant hierarchies: four sessions that would close a cycle
#    through four different keys take turns; the last is refused (22023).
#
# Results are compared by the md5 of the rows' text, ordered (COLLATE "C").
# Environment knobs: N_TXNS (100000), TEST_DB (incentives_concurrency).
set -euo pipefail

N_TXNS=${N_TXNS:-100000}
DB=${TEST_DB:-incentives_concurrency}
GATE_LOCK=4242
WORK=$(mktemp -d)
. "$(dirname "$0")/lib.sh"

# ---- interactive sessions: psql reading a FIFO, output in NAME.out --------
declare -A SESSION_FD SESSION_PID
session_start() {
  local name=$1 fd
  mkfifo "$WORK/$name.in"
  PGAPPNAME="incentives_conc_$name" psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" \
    <"$WORK/$name.in" >"$WORK/$name.out" 2>&1 &
  SESSION_PID[$name]=$!
  exec {fd}>"$WORK/$name.in"
  SESSION_FD[$name]=$fd
}
session_send() {
  local name=$1
  shift
  printf '%s\n' "$@" >&"${SESSION_FD[$name]}"
}
# session_sync NAME MARKER: wait (up to 60 s) until NAME has run everything
# sent so far.
session_sync() {
  local name=$1 marker=$2 i
  session_send "$name" "\\echo $marker"
  for i in $(seq 1 1200); do
    grep -qx "$marker" "$WORK/$name.out" && return 0
    if ! kill -0 "${SESSION_PID[$name]}" 2>/dev/null; then break; fi
    sleep 0.05
  done
  cat "$WORK/$name.out" >&2
  echo "session $name did not reach $marker" >&2
  exit 1
}
session_end() {
  local name=$1
  local fd=${SESSION_FD[$name]}
  session_send "$name" "\\q"
  exec {fd}>&-
  wait "${SESSION_PID[$name]}" || fail "session $name ended with an error: $(tail -n 3 "$WORK/$name.out")"
}

cleanup() {
  drop_db
  rm -rf "$WORK"
}
trap cleanup EXIT

CALC_ROWS_SQL() { # relation
  echo "SELECT e::text FROM incentives.incentive_calculate(transactions => '$1') e ORDER BY e::text COLLATE \"C\""
}
# calc_md5 RELATION: md5 of a calculation run alone
calc_md5() {
  psql_db -At -c "$(CALC_ROWS_SQL "$1")" | md5sum | cut -c1-32
}
# wait_gate APP...: until every named session waits on the gate's lock
wait_gate() {
  local want=$# apps i n
  apps=$(printf "'incentives_conc_%s'," "$@")
  apps=${apps%,}
  for i in $(seq 1 600); do
    n=$(psql_db -At -c "SELECT count(*) FROM pg_stat_activity
                         WHERE application_name IN ($apps)
                           AND wait_event_type = 'Lock' AND wait_event = 'advisory'")
    [ "$n" -eq "$want" ] && return 0
    sleep 0.05
  done
  echo "sessions $* did not reach the gate" >&2
  exit 1
}
# gated_calc NAME: a background calculation through the gate; md5 to NAME.md5
gated_calc() {
  local name=$1
  (PGAPPNAME="incentives_conc_$name" psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" \
     -c "SET enable_sort = off" -c "$(CALC_ROWS_SQL load.gated)" >"$WORK/$name.rows" 2>"$WORK/$name.err" \
     && md5sum <"$WORK/$name.rows" | cut -c1-32 >"$WORK/$name.md5") &
  SESSION_PID[$name]=$!
}

echo "== concurrency: server $(psql_admin -At -c 'SHOW server_version'), $N_TXNS transactions"
create_db

t0=$(now_ms)
psql_db -v prefix=conc -f "$(dirname "$0")/../sql/load_offers.psql"
psql_db <<SQL
SET client_min_messages = warning;
INSERT INTO incentives.offers (document) VALUES ('{
  "offer_key": "conc.stepped", "strategy_key": "stepped", "calculator_key": "fixed_amount",
  "periods": [{"key": "p", "start_date": "2026-01-01", "end_date": "2026-12-31"}],
  "incentive": {"filters": [{"period_key": "p", "sku_keys": ["s1", "s3"],
                             "transaction_type": "retailer_purchases_from_distribution"}],
    "threshold_definition": {"type": "property", "property": {"key": "business_plan_achieved"}},
    "rates": [{"threshold": 80, "value": 1000, "measure": "dollars"},
              {"threshold": 100, "value": 2500, "measure": "dollars"}]}}');
INSERT INTO incentives.participant_properties
SELECT 'P' || lpad(p::text, 4, '0'), 'business_plan_achieved', 70 + p % 40
  FROM generate_series(0, 199) p;

-- $N_TXNS transactions over 200 participants, in (participant, id) order.
INSERT INTO incentives.transactions SELECT * FROM load.gen($N_TXNS, 200);
ANALYZE incentives.transactions;

-- The gate: the first matched transaction of P0100 waits for lock $GATE_LOCK.
DO \$do\$
DECLARE
  gate_id text;
BEGIN
  SELECT min(transaction_id COLLATE "C") INTO gate_id
    FROM incentives.transactions
   WHERE participant_key = 'P0100' AND sku_key IN ('s1', 's2', 's3', 's4');
  EXECUTE format(\$f\$
    CREATE FUNCTION load.gate(id text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS \$g\$
    BEGIN
      IF id = %L THEN
        PERFORM pg_catalog.pg_advisory_xact_lock_shared($GATE_LOCK);
      END IF;
      RETURN true;
    END \$g\$\$f\$, gate_id);
END
\$do\$;
CREATE VIEW load.gated AS
SELECT * FROM incentives.transactions t WHERE load.gate(t.transaction_id);
SQL
echo "setup in $(( $(now_ms) - t0 )) ms"

# B's changes: before and after the gate, offers, reference data, properties.
CHANGE_1="BEGIN;
UPDATE incentives.transactions SET amount = amount * 2
 WHERE participant_key IN ('P0000', 'P0050', 'P0150', 'P0199');
DELETE FROM incentives.transactions
 WHERE participant_key IN ('P0010', 'P0120') AND transaction_id LIKE '%7';
INSERT INTO incentives.transactions VALUES
  ('X0000000001', 'P0001', 'retailer_purchases_from_distribution', '2026-05-01', 's1', 10, 'gal', 500),
  ('X0000000002', 'P0180', 'retailer_purchases_from_distribution', '2026-05-01', 's3', 10, 'gal', 500),
  ('X0000000003', 'P9999', 'retailer_purchases_from_distribution', '2026-05-01', 's2', 10, 'gal', 500);
UPDATE incentives.offers
   SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '5')
 WHERE offer_key = 'conc.standard';
UPDATE incentives.skus SET uom_key = 'qt' WHERE sku_key = 's4';
UPDATE incentives.participant_properties SET value = value + 30;
COMMIT;"
CHANGE_2="BEGIN;
UPDATE incentives.transactions SET quantity = quantity + 1
 WHERE participant_key IN ('P0020', 'P0170');
DELETE FROM incentives.offers WHERE offer_key = 'conc.stepped';
INSERT INTO incentives.transactions VALUES
  ('X0000000004', 'P0002', 'retailer_purchases_from_distribution', '2026-06-01', 's4', 3, 'gal', 300);
COMMIT;"

# The gate is transparent when nobody holds the lock.
md5_view=$(calc_md5 load.gated)
md5_table=$(calc_md5 incentives.transactions)
if [ "$md5_view" = "$md5_table" ]; then ok "the gated view calculates as the table ($md5_table)"; else fail "the gated view differs from the table"; fi
psql_db -At -c "SET enable_sort = off" \
  -c "EXPLAIN (COSTS OFF) SELECT * FROM load.gated WHERE sku_key = ANY ('{s1}')
      ORDER BY participant_key COLLATE \"C\", transaction_id COLLATE \"C\"" | sed 's/^/  plan: /'

# ---------------------------------------------------------------------------
# 1. A statement blocked mid-stream does not see a change committed meanwhile
# ---------------------------------------------------------------------------
t0=$(now_ms)
session_start ctl
session_send ctl "SELECT pg_advisory_lock($GATE_LOCK);"
session_sync ctl LOCKED_1
gated_calc a
wait_gate a
psql_db -c "$CHANGE_1"
still=$(psql_db -At -c "SELECT count(*) FROM pg_stat_activity
                         WHERE application_name = 'incentives_conc_a' AND wait_event = 'advisory'")
[ "$still" = 1 ] || fail "session A was not waiting at the gate while B committed"
session_send ctl "SELECT pg_advisory_unlock($GATE_LOCK);"
session_sync ctl UNLOCKED_1
wait "${SESSION_PID[a]}" || { cat "$WORK/a.err" >&2; fail "session A's calculation failed"; }
md5_a=$(cat "$WORK/a.md5" 2>/dev/null || echo none)
md5_changed=$(calc_md5 incentives.transactions)
if [ "$md5_a" = "$md5_table" ]; then
  ok "a calculation blocked half-way while B committed returns the rows of its snapshot ($(wc -l <"$WORK/a.rows") rows)"
else
  fail "a calculation blocked half-way saw B's change: md5 $md5_a, before $md5_table, after $md5_changed"
fi
if [ "$md5_changed" != "$md5_table" ]; then ok "a new calculation sees B's change"; else fail "B's change does not change the result: the test proves nothing"; fi
echo "test 1 in $(( $(now_ms) - t0 )) ms"

# ---------------------------------------------------------------------------
# 2. REPEATABLE READ: a cursor and a second calculation in one transaction
# ---------------------------------------------------------------------------
t0=$(now_ms)
CURSOR_SQL="SELECT e::text FROM incentives.incentive_calculate() e ORDER BY e::text COLLATE \"C\""
session_start rr
session_send rr "BEGIN ISOLATION LEVEL REPEATABLE READ;" \
  "DECLARE c CURSOR FOR $CURSOR_SQL;" \
  "\\o $WORK/rr_cursor.rows" "FETCH 10 FROM c;" "\\o"
session_sync rr FETCHED_10
psql_db -c "$CHANGE_2"
session_send rr "\\o $WORK/rr_cursor.rows_rest" "FETCH ALL FROM c;" "\\o" \
  "\\o $WORK/rr_again.rows" "$CURSOR_SQL;" "\\o" \
  "COMMIT;" \
  "\\o $WORK/rr_after.rows" "$CURSOR_SQL;" "\\o"
session_sync rr DONE_RR
session_end rr
md5_changed2=$(calc_md5 incentives.transactions)
md5_cursor=$(cat "$WORK/rr_cursor.rows" "$WORK/rr_cursor.rows_rest" | md5sum | cut -c1-32)
md5_again=$(md5sum <"$WORK/rr_again.rows" | cut -c1-32)
md5_after=$(md5sum <"$WORK/rr_after.rows" | cut -c1-32)
[ "$(wc -l <"$WORK/rr_cursor.rows")" -eq 10 ] || fail "FETCH 10 did not return 10 rows"
if [ "$md5_cursor" = "$md5_changed" ]; then ok "a cursor FETCHed across B's commit returns the rows of its snapshot"; else fail "a cursor FETCHed across B's commit saw it ($md5_cursor, before $md5_changed, after $md5_changed2)"; fi
if [ "$md5_again" = "$md5_changed" ]; then ok "a second calculation in the REPEATABLE READ transaction returns the same rows"; else fail "a second calculation in the REPEATABLE READ transaction saw B's change"; fi
if [ "$md5_after" = "$md5_changed2" ] && [ "$md5_changed2" != "$md5_changed" ]; then ok "after COMMIT the session sees B's change"; else fail "after COMMIT: md5 $md5_after, expected $md5_changed2 (before the change $md5_changed)"; fi
echo "test 2 in $(( $(now_ms) - t0 )) ms"

# ---------------------------------------------------------------------------
# 3. Two calculations at the same time give identical results
# ---------------------------------------------------------------------------
t0=$(now_ms)
session_send ctl "SELECT pg_advisory_lock($GATE_LOCK);"
session_sync ctl LOCKED_3
gated_calc c1
gated_calc c2
wait_gate c1 c2
session_send ctl "SELECT pg_advisory_unlock($GATE_LOCK);"
session_sync ctl UNLOCKED_3
wait "${SESSION_PID[c1]}" || { cat "$WORK/c1.err" >&2; fail "concurrent calculation 1 failed"; }
wait "${SESSION_PID[c2]}" || { cat "$WORK/c2.err" >&2; fail "concurrent calculation 2 failed"; }
md5_c1=$(cat "$WORK/c1.md5" 2>/dev/null || echo none)
md5_c2=$(cat "$WORK/c2.md5" 2>/dev/null || echo none)
if [ "$md5_c1" = "$md5_c2" ] && [ "$md5_c1" = "$md5_changed2" ]; then
  ok "two concurrent calculations return identical rows, equal to a calculation alone ($md5_c1, $(wc -l <"$WORK/c1.rows") rows)"
else
  fail "concurrent calculations differ: $md5_c1, $md5_c2, alone $md5_changed2"
fi
echo "test 3 in $(( $(now_ms) - t0 )) ms"
session_end ctl

# ---------------------------------------------------------------------------
# 4. Two sessions adding overlapping enrollment windows of one participant
#    and offer at the same time: the second waits for the first, then is
#    refused (23P01), whatever its isolation level
# ---------------------------------------------------------------------------
t0=$(now_ms)
for iso in rc rr; do
  level=$([ $iso = rc ] && echo "READ COMMITTED" || echo "REPEATABLE READ")
  psql_db -c "DELETE FROM incentives.enrollments WHERE participant_key = 'P_conc'"
  session_start "e1$iso"
  session_start "e2$iso"
  session_send "e1$iso" "\\set ON_ERROR_STOP 0" "BEGIN;" \
    "INSERT INTO incentives.enrollments VALUES ('P_conc', 'conc.standard', '2026-01-01', '2026-06-30');"
  session_sync "e1$iso" "E1_INSERTED_$iso"
  # the second session's snapshot is taken before the first commits
  session_send "e2$iso" "\\set ON_ERROR_STOP 0" "BEGIN ISOLATION LEVEL $level;" \
    "SELECT count(*) FROM incentives.enrollments WHERE participant_key = 'P_conc';" \
    "INSERT INTO incentives.enrollments VALUES ('P_conc', 'conc.standard', '2026-03-01', NULL);"
  wait_gate "e2$iso"
  session_send "e1$iso" "COMMIT;"
  session_sync "e1$iso" "E1_COMMITTED_$iso"
  session_send "e2$iso" "\\echo SQLSTATE=:SQLSTATE" "ROLLBACK;"
  session_sync "e2$iso" "E2_DONE_$iso"
  windows=$(psql_db -At -c "SELECT count(*) FROM incentives.enrollments WHERE participant_key = 'P_conc'")
  if grep -q "overlaps its enrollment from 2026-01-01 to 2026-06-30" "$WORK/e2$iso.out" &&
     grep -qx "SQLSTATE=23P01" "$WORK/e2$iso.out" && [ "$windows" = 1 ]; then
    ok "$level: an overlapping window added at the same time waits, then is refused (23P01); 1 window kept"
  else
    fail "$level: overlapping windows at the same time: $windows windows kept; second session said: $(cat "$WORK/e2$iso.out")"
  fi
  session_end "e1$iso"
  session_end "e2$iso"
done
echo "test 4 in $(( $(now_ms) - t0 )) ms"

# ---------------------------------------------------------------------------
# 5. Participant groups written by two sessions at the same time
#    (docs/reference.md, Participant groups): overlapping windows of one
#    participant (the second waits, then 23P01), and a group made a member
#    of its own member (the second waits, then 22023: a cycle), whatever
#    the isolation level
# ---------------------------------------------------------------------------
t0=$(now_ms)
for iso in rc rr; do
  level=$([ $iso = rc ] && echo "READ COMMITTED" || echo "REPEATABLE READ")
  for case in overlap cycle; do
    psql_db -c "DELETE FROM incentives.participant_groups WHERE participant_key IN ('P_conc', 'G_conc')"
    if [ $case = overlap ]; then
      first="INSERT INTO incentives.participant_groups VALUES ('P_conc', 'G_conc', '2026-01-01', '2026-06-30');"
      second="INSERT INTO incentives.participant_groups VALUES ('P_conc', 'H_conc', '2026-03-01', NULL);"
      want_state=23P01
      want_text="overlaps its membership in group \"G_conc\" from 2026-01-01 to 2026-06-30"
    else
      first="INSERT INTO incentives.participant_groups VALUES ('P_conc', 'G_conc', '2026-01-01', NULL);"
      second="INSERT INTO incentives.participant_groups VALUES ('G_conc', 'P_conc', '2026-01-01', NULL);"
      want_state=22023
      want_text="makes a cycle from 2026-01-01 (open-ended): G_conc -> P_conc -> G_conc"
    fi
    session_start "g1$iso$case"
    session_start "g2$iso$case"
    session_send "g1$iso$case" "\\set ON_ERROR_STOP 0" "BEGIN;" "$first"
    session_sync "g1$iso$case" "G1_INSERTED_$iso$case"
    session_send "g2$iso$case" "\\set ON_ERROR_STOP 0" "BEGIN ISOLATION LEVEL $level;" \
      "SELECT count(*) FROM incentives.participant_groups;" "$second"
    wait_gate "g2$iso$case"
    session_send "g1$iso$case" "COMMIT;"
    session_sync "g1$iso$case" "G1_COMMITTED_$iso$case"
    session_send "g2$iso$case" "\\echo SQLSTATE=:SQLSTATE" "ROLLBACK;"
    session_sync "g2$iso$case" "G2_DONE_$iso$case"
    rows=$(psql_db -At -c "SELECT count(*) FROM incentives.participant_groups WHERE participant_key IN ('P_conc', 'G_conc')")
    if grep -qF "$want_text" "$WORK/g2$iso$case.out" &&
       grep -qx "SQLSTATE=$want_state" "$WORK/g2$iso$case.out" && [ "$rows" = 1 ]; then
      ok "$level: participant groups ($case) written at the same time: the second waits, then is refused ($want_state); 1 row kept"
    else
      fail "$level: participant groups ($case) at the same time: $rows rows kept; second session said: $(cat "$WORK/g2$iso$case.out")"
    fi
    session_end "g1$iso$case"
    session_end "g2$iso$case"
  done
done
psql_db -c "DELETE FROM incentives.participant_groups WHERE participant_key IN ('P_conc', 'G_conc')"
echo "test 5 in $(( $(now_ms) - t0 )) ms"

# ---------------------------------------------------------------------------
# 6. The product catalog written by two sessions at the same time
#    (docs/reference.md, Products): a cycle closed by two edges that share
#    no key (the second waits, then 22023), overlapping windows of one SKU
#    in one product (the second waits, then 23P01), a window added in a
#    product being deleted (the second waits, then 23503: the reference is
#    a trigger's check, not a foreign key), whatever the isolation level
# ---------------------------------------------------------------------------
t0=$(now_ms)
for iso in rc rr; do
  level=$([ $iso = rc ] && echo "READ COMMITTED" || echo "REPEATABLE READ")
  for case in cycle overlap dangling; do
    psql_db -q <<'SQL'
DELETE FROM incentives.sku_products WHERE sku_key = 'S_conc';
UPDATE incentives.products SET parent_key = NULL WHERE product_key LIKE '%\_conc';
DELETE FROM incentives.products WHERE product_key LIKE '%\_conc';
INSERT INTO incentives.products (product_key) VALUES ('A_conc'), ('B_conc'), ('C_conc'), ('D_conc');
UPDATE incentives.products SET parent_key = 'C_conc' WHERE product_key = 'B_conc';
UPDATE incentives.products SET parent_key = 'A_conc' WHERE product_key = 'D_conc';
SQL
    if [ $case = cycle ]; then
      first="UPDATE incentives.products SET parent_key = 'B_conc' WHERE product_key = 'A_conc';"
      second="UPDATE incentives.products SET parent_key = 'D_conc' WHERE product_key = 'C_conc';"
      want_state=22023
      want_text='product "C_conc" cannot have parent "D_conc": the products would form a cycle (C_conc -> D_conc -> A_conc -> B_conc -> C_conc)'
      kept="SELECT count(*) FROM incentives.products WHERE product_key LIKE '%\_conc' AND parent_key IS NOT NULL"
      want_kept=3
    elif [ $case = dangling ]; then
      first="DELETE FROM incentives.products WHERE product_key = 'B_conc';"
      second="INSERT INTO incentives.sku_products VALUES ('S_conc', 'B_conc', '2026-01-01', NULL);"
      want_state=23503
      want_text='product_key "B_conc" of a window of SKU "S_conc" names no product'
      kept="SELECT count(*) FROM incentives.sku_products WHERE sku_key = 'S_conc'"
      want_kept=0
    else
      first="INSERT INTO incentives.sku_products VALUES ('S_conc', 'A_conc', '2026-01-01', '2026-06-30');"
      second="INSERT INTO incentives.sku_products VALUES ('S_conc', 'A_conc', '2026-03-01', NULL);"
      want_state=23P01
      want_text='window of SKU "S_conc" in product "A_conc" from 2026-03-01 (open-ended) overlaps its window from 2026-01-01 to 2026-06-30'
      kept="SELECT count(*) FROM incentives.sku_products WHERE sku_key = 'S_conc'"
      want_kept=1
    fi
    session_start "p1$iso$case"
    session_start "p2$iso$case"
    session_send "p1$iso$case" "\\set ON_ERROR_STOP 0" "BEGIN;" "$first"
    session_sync "p1$iso$case" "P1_WRITTEN_$iso$case"
    # the second session's snapshot is taken before the first commits
    session_send "p2$iso$case" "\\set ON_ERROR_STOP 0" "BEGIN ISOLATION LEVEL $level;" \
      "SELECT count(*) FROM incentives.products;" "$second"
    wait_gate "p2$iso$case"
    session_send "p1$iso$case" "COMMIT;"
    session_sync "p1$iso$case" "P1_COMMITTED_$iso$case"
    session_send "p2$iso$case" "\\echo SQLSTATE=:SQLSTATE" "ROLLBACK;"
    session_sync "p2$iso$case" "P2_DONE_$iso$case"
    rows=$(psql_db -At -c "$kept")
    if grep -qF "$want_text" "$WORK/p2$iso$case.out" &&
       grep -qx "SQLSTATE=$want_state" "$WORK/p2$iso$case.out" && [ "$rows" = "$want_kept" ]; then
      ok "$level: product catalog ($case) written at the same time: the second waits, then is refused ($want_state); $rows rows kept"
    else
      fail "$level: product catalog ($case) at the same time: $rows rows kept; second session said: $(cat "$WORK/p2$iso$case.out")"
    fi
    session_end "p1$iso$case"
    session_end "p2$iso$case"
  done
done
psql_db -q <<'SQL'
DELETE FROM incentives.sku_products WHERE sku_key = 'S_conc';
UPDATE incentives.products SET parent_key = NULL WHERE product_key LIKE '%\_conc';
DELETE FROM incentives.products WHERE product_key LIKE '%\_conc';
SQL
echo "test 6 in $(( $(now_ms) - t0 )) ms"

# ---------------------------------------------------------------------------
# 7. A cycle closed by four sessions, no two of which write the same key
#    (docs/reference.md, Participant hierarchies): A in B and C in D, then B
#    in C and D in A.  Locks on a row's own keys would let all four commit
#    (A -> B -> C -> D -> A); one lock for every writer of the table makes
#    sessions 2 to 4 wait for session 1, then for each other, and the last
#    of them is refused (22023, the cycle named); three rows are kept and
#    no key is its own ancestor.
# ---------------------------------------------------------------------------
t0=$(now_ms)
for iso in rc rr; do
  level=$([ $iso = rc ] && echo "READ COMMITTED" || echo "REPEATABLE READ")
  psql_db -c "DELETE FROM incentives.participant_groups WHERE participant_key IN ('A_conc', 'B_conc', 'C_conc', 'D_conc')"
  rows=("A_conc B_conc" "C_conc D_conc" "B_conc C_conc" "D_conc A_conc")
  for i in 0 1 2 3; do
    read -r member group <<<"${rows[$i]}"
    session_start "h$i$iso"
    session_send "h$i$iso" "\\set ON_ERROR_STOP 0" "BEGIN ISOLATION LEVEL $level;" \
      "SELECT count(*) FROM incentives.participant_groups;" \
      "INSERT INTO incentives.participant_groups VALUES ('$member', '$group', '2026-01-01', NULL);" \
      "\\echo SQLSTATE=:SQLSTATE"
    if [ $i = 0 ]; then
      session_sync "h0$iso" "H0_INSERTED_$iso"
    fi
  done
  wait_gate "h1$iso" "h2$iso" "h3$iso"
  for i in 0 1 2 3; do
    session_send "h$i$iso" "COMMIT;"
  done
  for i in 0 1 2 3; do
    session_sync "h$i$iso" "H${i}_DONE_$iso"
  done
  kept=$(psql_db -At -c "SELECT count(*) FROM incentives.participant_groups WHERE participant_key IN ('A_conc', 'B_conc', 'C_conc', 'D_conc')")
  refused=$(cat "$WORK"/h[0-3]$iso.out | grep -c '^SQLSTATE=22023$' || true)
  named=$(cat "$WORK"/h[0-3]$iso.out | grep -c 'makes a cycle from 2026-01-01 (open-ended): [A-D]_conc -> [A-D]_conc -> [A-D]_conc -> [A-D]_conc -> [A-D]_conc' || true)
  if [ "$kept" = 3 ] && [ "$refused" = 1 ] && [ "$named" = 1 ]; then
    ok "$level: four sessions closing a cycle A -> B -> C -> D -> A take turns; the last is refused (22023); 3 rows kept"
  else
    fail "$level: four sessions closing a cycle: $kept rows kept, $refused refused ($named naming the cycle); sessions said: $(cat "$WORK"/h[0-3]$iso.out)"
  fi
  for i in 0 1 2 3; do
    session_end "h$i$iso"
  done
done
psql_db -c "DELETE FROM incentives.participant_groups WHERE participant_key IN ('A_conc', 'B_conc', 'C_conc', 'D_conc')"
echo "test 7 in $(( $(now_ms) - t0 )) ms"

finish concurrency
